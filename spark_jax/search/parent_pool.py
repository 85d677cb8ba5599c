"""The fixed parent pool of a proposal-only search: programs evaluated once, shipped with an
experiment, so every method proposes from the same parents.

The pool is a JSON file (`pool.json`) beside the programs it names:

    {"about": "...", "task": "dfs", "preset": "tiny",
     "programs": [{"name": "seed", "file": "seed.py", "evaluation": {Evaluation.to_dict()}},
                  {"name": "attempt-0", "file": "attempt-0.py", "evaluation": {...},
                   "parent": "seed", "attempt": 0, "description": "what the edit did"},
                  ...]}

`parent` (an earlier program's name), `attempt` (the attempt of the search that made it) and
`description` give a program its lineage, so every method's prompt tells where it came from as
in a search that made it (provenance, OpenEvolve's changes and parent metrics, EoH's idea).

The first program is the seed. Attempt `i` gets parent `programs[i % n]` (`parent_index`);
the other programs, best first, are its inspirations.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib

from spark_jax.config.protocol import ConfigError
from spark_jax.families import Evaluation

__all__ = ["ParentPool", "PoolProgram", "load_pool"]


@dataclasses.dataclass(frozen=True)
class PoolProgram:
    """name: its label in the pool; source: the program; evaluation: its recorded scores;
    parent: the name of the pool program it was edited from (None: the seed); attempt: the
    attempt that made it; description: what that edit did, in words ('' when unknown)."""

    name: str
    source: str
    evaluation: Evaluation
    parent: str | None = None
    attempt: int | None = None
    description: str = ""

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

    def parent_of(self, index: int) -> int | None:
        """The pool index of program `index`'s parent (None: no parent in the pool)."""
        names = [p.name for p in self.programs]
        parent = self.programs[index].parent
        return None if parent is None else names.index(parent)

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
                parent=None if e.get("parent") is None else str(e["parent"]),
                attempt=None if e.get("attempt") is None else int(e["attempt"]),
                description=str(e.get("description", "")),
            )
            for e in entries
        )
        for i, p in enumerate(programs):
            earlier = [q.name for q in programs[:i]]
            if p.parent is not None and p.parent not in earlier:
                raise ValueError(f"program {p.name!r}: parent {p.parent!r} is no earlier program")
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ConfigError(f"{where}: {type(e).__name__}: {e}") from None
    if data.get("task", task) != task:
        raise ConfigError(f"{where}: evaluated on task {data['task']!r}, the search is on {task!r}")
    return ParentPool(path=str(path), task=task, programs=programs)
