"""The fixed parent pool of a proposal-only search: programs evaluated once, shipped with an
experiment, so every method proposes from the same parents.

The pool is a JSON file (`pool.json`) beside the programs it names:

    {"about": "...", "task": "dfs", "preset": "tiny",
     "programs": [{"name": "seed", "file": "seed.py", "evaluation": {Evaluation.to_dict()}},
                  ...]}

The first program is the seed. Attempt `i` gets parent `programs[i % n]` (`parent_index`);
the other programs, best first, are its inspirations.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib

from spark_jax.config.protocol import ConfigError
from spark_jax.evaluation.record import Evaluation

__all__ = ["ParentPool", "PoolProgram", "load_pool"]


@dataclasses.dataclass(frozen=True)
class PoolProgram:
    """name: its label in the pool; source: the program; evaluation: its recorded scores."""

    name: str
    source: str
    evaluation: Evaluation

    @property
    def score(self) -> float:
        return float(self.evaluation.score_mean)


@dataclasses.dataclass(frozen=True)
class ParentPool:
    path: str
    task: str
    programs: tuple[PoolProgram, ...]

    def parent_index(self, attempt: int) -> int:
        """The deterministic rule: attempt i proposes from program i mod n."""
        return attempt % len(self.programs)

    def inspirations(self, index: int) -> tuple[int, ...]:
        """The other programs' indices, best score first (ties: pool order)."""
        others = [i for i in range(len(self.programs)) if i != index]
        return tuple(sorted(others, key=lambda i: (-self.programs[i].score, i)))


def load_pool(path: str | pathlib.Path, task: str) -> ParentPool:
    """Reads and checks a pool; a bad pool raises ConfigError naming the problem."""
    path = pathlib.Path(path)
    where = f"parent pool {path}"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        entries = data["programs"]
        if not isinstance(entries, list) or not entries:
            raise ValueError("'programs' must be a non-empty list")
        programs = tuple(
            PoolProgram(
                name=str(e["name"]),
                source=(path.parent / e["file"]).read_text(encoding="utf-8"),
                evaluation=Evaluation.from_dict(e["evaluation"]),
            )
            for e in entries
        )
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ConfigError(f"{where}: {type(e).__name__}: {e}") from None
    if data.get("task", task) != task:
        raise ConfigError(f"{where}: evaluated on task {data['task']!r}, the search is on {task!r}")
    return ParentPool(path=str(path), task=task, programs=programs)
