"""Progress display for long work (rich, on stderr; silent when disabled or not a terminal)."""
from __future__ import annotations

import contextlib
import sys
from typing import Callable, Iterator


@contextlib.contextmanager
def step_progress(description: str, total: int,
                  enabled: bool = True) -> Iterator[Callable[[int, float], None]]:
    """Yields `update(step, loss)`; shows a bar with the latest loss while training."""
    if not enabled:
        yield lambda step, loss: None
        return
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn)

    console = Console(file=sys.stderr)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TextColumn("loss {task.fields[loss]}"), TimeElapsedColumn(),
               TimeRemainingColumn())
    with Progress(*columns, console=console, transient=False,
                  disable=not console.is_terminal) as bar:
        task = bar.add_task(description, total=total, loss="-")

        def update(step: int, loss: float) -> None:
            bar.update(task, completed=step, loss=f"{loss:.4f}")

        yield update
