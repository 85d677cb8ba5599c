"""Progress display for long work (rich, on stderr; silent when disabled or not a terminal)."""

from __future__ import annotations

import contextlib
import sys
from typing import Callable, Iterator


@contextlib.contextmanager
def step_progress(
    description: str, total: int, enabled: bool = True
) -> Iterator[Callable[[int, float], None]]:
    """Yields `update(step, loss)`; shows a bar with the latest loss while training."""
    if not enabled:
        yield lambda step, loss: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    console = Console(file=sys.stderr)
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("loss {task.fields[loss]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
    )
    with Progress(
        *columns, console=console, transient=False, disable=not console.is_terminal
    ) as bar:
        task = bar.add_task(description, total=total, loss="-")

        def update(step: int, loss: float) -> None:
            bar.update(task, completed=step, loss=f"{loss:.4f}")

        yield update


@contextlib.contextmanager
def search_progress(budget: int, enabled: bool = True) -> Iterator[Callable]:
    """Yields `update(progress)` for `search.Progress` records: a bar over evaluated
    candidates with the attempt, valid rate, best OOD so far and the current stage."""
    if not enabled:
        yield lambda p: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(file=sys.stderr)
    columns = (
        TextColumn("search"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(
            "attempt {task.fields[attempt]} | valid {task.fields[valid]} | "
            "best-so-far OOD {task.fields[best]} | {task.fields[stage]}"
        ),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, disable=not console.is_terminal) as bar:
        task = bar.add_task(
            "search", total=budget, attempt=0, valid="-", best="-", stage="starting"
        )

        def update(p) -> None:
            # Percent with 2 decimals, as report.md; best so far, the seed included.
            best = "-" if p.best_ood is None else f"{100.0 * p.best_ood:.2f}%"
            bar.update(
                task,
                completed=p.evaluated,
                attempt=p.attempt,
                valid=f"{p.valid_rate:.0%}",
                best=best,
                stage=p.stage,
            )
            if not console.is_terminal:
                print(
                    f"[search] attempt {p.attempt} evaluated {p.evaluated} "
                    f"valid {p.valid_rate:.0%} best-so-far OOD {best} | {p.stage}",
                    file=sys.stderr,
                )

        yield update
