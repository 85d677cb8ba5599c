"""The task-family boundary: what a family provides so the search runs beyond CLRS.

A task family is one benchmark domain (CLRS processors, MNIST-1D classifiers, CartPole
policies, ...). The operator, archive, search, report and compare code talk to a family only
through `TaskFamily`; everything domain-specific lives behind it. A family provides exactly:

- `name`, `benchmarks`: its registry key and the benchmark names it runs (the keys of its rows
  in `reference/extra_benchmarks.csv`, or the CLRS algorithm names).
- `factory`: the frozen top-level name every program must define (`make_processor`,
  `make_policy`, `make_classifier`); its OPERATOR region is the module's `setup` body and its
  ACTION region the `__call__` body, exactly as for CLRS processors.
- `seed_programs()`: the shipped seed programs by name (files under `assets/families/<name>/`
  or `assets/processors/`, shipped in the wheel).
- `contract_text()`: the candidate contract pasted into the operator's prompts.
- `check(source, benchmark, preset)`: the semantic feasibility check (output shapes, dtypes,
  finiteness, family invariants); returns `None` when feasible, else a one-line reason.
- `evaluate(source, benchmark, preset, seed, split)`: data, training and scoring in one call,
  scored on one part only: `split` 'val' (a validation part disjoint from the training and
  test data: what a search selects on) or 'test' (what is reported: a search scores it for
  its final programs only). Returns an `Evaluation` whose `score` is the number the archive
  ranks by (higher is better) plus named `metrics` (e.g. val_accuracy, accuracy, loss,
  train_return, val_return, test_return), MACs and params.
- `data_record(benchmark, preset)`: the fixed data split and seeds, as a flat JSON-able dict,
  stored in the run database so a run can be reproduced.
- `presets`: at least `tiny` (CI, seconds) and `smoke` (minutes on CPU).

Families register themselves with `register` from their own floor; this module imports nothing
above `config`, so every floor can name the boundary.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol, runtime_checkable

__all__ = ["SPLITS", "Evaluation", "TaskFamily", "get", "names", "register"]

SPLITS = ("val", "test")  # What `TaskFamily.evaluate` scores: selection or reporting.


@dataclasses.dataclass(frozen=True)
class Evaluation:
    """One candidate's result on one benchmark and seed."""

    score: float  # What the archive ranks by; higher is better.
    metrics: dict[str, float]  # Named paper metrics, e.g. {"accuracy": .., "loss": ..}.
    macs: int
    params: int
    train_seconds: float


@runtime_checkable
class TaskFamily(Protocol):
    """What a task family provides (see the module docstring)."""

    name: str
    benchmarks: tuple[str, ...]
    factory: str
    presets: tuple[str, ...]

    def seed_programs(self) -> dict[str, Any]: ...

    def contract_text(self) -> str: ...

    def check(self, source: str, benchmark: str, preset: str) -> str | None: ...

    def evaluate(
        self, source: str, benchmark: str, preset: str, seed: int, split: str = "test"
    ) -> Evaluation: ...

    def data_record(self, benchmark: str, preset: str) -> dict[str, Any]: ...


_REGISTRY: dict[str, TaskFamily] = {}


def register(family: TaskFamily) -> TaskFamily:
    """Adds `family` under its name; raises ValueError on a duplicate or a missing preset."""
    if family.name in _REGISTRY and _REGISTRY[family.name] is not family:
        raise ValueError(f"task family {family.name!r} is already registered")
    missing = {"tiny", "smoke"} - set(family.presets)
    if missing:
        raise ValueError(f"task family {family.name!r} lacks presets {sorted(missing)}")
    _REGISTRY[family.name] = family
    return family


def get(name: str) -> TaskFamily:
    """The registered family `name`; raises ValueError naming the known ones."""
    if name not in _REGISTRY:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        raise ValueError(f"unknown task family {name!r}; registered: {known}")
    return _REGISTRY[name]


def names() -> tuple[str, ...]:
    """Every registered family's name, sorted."""
    return tuple(sorted(_REGISTRY))
