"""The task-family boundary: what a family provides so the search runs beyond CLRS.

A task family is one benchmark domain (CLRS processors, MNIST-1D classifiers, CartPole
policies, ...). The operator, archive, search, report and compare code talk to a family only
through `TaskFamily`; everything domain-specific lives behind it. A family provides exactly:

- `name`, `benchmarks`: its registry key and the benchmark names it runs (the keys of its rows
  in `reference/extra_benchmarks.csv`, or the CLRS algorithm names).
- `factory`: the frozen top-level name every program must define (`make_processor`,
  `make_policy`, `make_classifier`); its OPERATOR region is the module's `setup` body and its
  ACTION region the `__call__` body, exactly as for CLRS processors.
- `default_seed`: the seed program a search starts from when none is named (a key of
  `seed_programs()`).
- `seed_programs()`: the shipped seed programs by name (files in the family's `seeds/` folder,
  or `assets/processors/` for CLRS, shipped in the wheel).
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
- `test_part`, `val_part`: what the report calls the part a search reports on and the part it
  selects on (e.g. "official OOD test set", "a validation split").
- `sandbox_spec(benchmark, preset)`: the shapes the sandbox check needs, JSON-able (e.g.
  features, classes, hidden width), or None when its programs take the sandbox's processor
  stages at the search protocol's sizes (CLRS). With a spec, the family also gives
  `model_args(spec)` (the factory's arguments for that spec), `example_width(spec)` (the width
  of one input example: MACs are counted on one [1, width]) and `check_semantic(model, spec,
  batch, info)` (the semantic stage on a built Flax module; raises
  `feasibility.stage_checks.CheckFailure`).
- `offline_transforms()`: the rule-based editor's catalogue for its programs.

Optional members: a family that has one answers that stage itself; without it the stage takes
the default written here (what a family trained by its own `evaluate` needs). CLRS, whose
processors train under the search's protocol, has all of them:
- `evaluate_job(job)`: evaluates one `EvalJob.to_dict()` whole, returning the run database's
  `evaluation.record.Evaluation` (CLRS: the job's protocol, task, cascade and seeds). Default:
  `evaluate` once per training seed, averaged (`evaluation.family_jobs.run_family_job`).
- `job_fields(benchmark, preset, split)`: the `EvalJob` fields that route a job to the family
  (CLRS: {}, its jobs name the task and carry the protocol). Default: family, benchmark,
  family_preset, family_split.
- `prompt_contract()`: the contract text the prompts carry (CLRS: '', the prompts fill its
  processor contract template per parent). Default: `contract_text()`.
- `benchmark_task(benchmark)`: the CLRS task a benchmark names, checked (CLRS: the benchmark
  is the config's `task`). Default: the benchmarks are the family's own.
- `check_config(cfg)`: raises `config.ConfigError` on a search config the family cannot run
  (CLRS: an OOD validation seed equal to the test seed). Default: a benchmark is required and
  the cascade is CLRS's only.
- `seed_without_factory`: True when a seed program without the factory is left to the
  sandbox's interface stage to report (CLRS). Default: a search refuses it up front.
- `report_labels(source, ood_val_seed)`: the run report's words for its sets, a dict of
  'selection' (what the search selected on), 'test_set' (what a run reports on) and
  'test_column' (its column in the seed-spread table) (CLRS: the protocol's OOD sets).
  Default: the family's `test_part` and `val_part`.
- `report_section(meta, seed, best)`: the run report's family section, Markdown lines (CLRS:
  none). Default: the data split, the seed's and the best's metrics, the paper's rows
  (`report.family`).
- `remeasure_command`: the command that re-measures a run's best program on fresh training
  seeds (CLRS: `spark-jax benchmark RUN_DIR`). Default: none; the families retest
  (`benchmark.family_retest`) re-measures the family's runs.
- `score_metric`: how reports show the score, a dict of `report.spread.Metric`'s fields
  (name, word, scale, unit, digits, diff_unit, optional note). Default: 'score' as stored.
- `paper_keys` (optional): benchmark -> its row key in `reference/extra_benchmarks.csv`
  (`{seed}` stands for the seed program's name), for the report's paper rows; `paper_seeds`
  (optional): benchmark -> the seed programs the paper reports on it (the family table of
  `scripts/families_smoke.py`; a benchmark not named there uses `default_seed`).

**A family is one plug-in folder**, `spark_jax/plugins/<name>/`: a package whose module
defines `FAMILY`, with its seed programs in `seeds/` and its contract beside them. `PLUGINS`
below is the registry (one line per shipped family); `$SPARK_JAX_FAMILIES` names more plug-in
folders (os.pathsep-separated; the folder's name is the family's). A family is imported the
first time it is asked for by name, so this package (the contract and the registry) imports
nothing of `spark_jax` and every floor can name the boundary; the plug-ins themselves
(`spark_jax.plugins`) stand above evaluation.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import os
import pathlib
import sys
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "PATH_VARIABLE",
    "PLUGINS",
    "SPLITS",
    "Evaluation",
    "TaskFamily",
    "get",
    "names",
    "register",
]

# The registry: family name -> the module that defines its `FAMILY` (imported on first use).
PLUGINS = {
    "cartpole": "spark_jax.plugins.cartpole",
    "classify": "spark_jax.plugins.classify",
    "clrs": "spark_jax.plugins.clrs",
}
PATH_VARIABLE = "SPARK_JAX_FAMILIES"  # More plug-in folders, os.pathsep-separated.

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
    default_seed: str
    test_part: str
    val_part: str

    def seed_programs(self) -> dict[str, Any]: ...

    def contract_text(self) -> str: ...

    def check(self, source: str, benchmark: str, preset: str) -> str | None: ...

    def evaluate(
        self, source: str, benchmark: str, preset: str, seed: int, split: str = "test"
    ) -> Evaluation: ...

    def data_record(self, benchmark: str, preset: str) -> dict[str, Any]: ...

    def sandbox_spec(self, benchmark: str, preset: str) -> dict[str, Any] | None: ...


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


def _plugin_folders() -> dict[str, pathlib.Path]:
    """The plug-in folders named by $SPARK_JAX_FAMILIES, by family name (the folder's)."""
    folders = {}
    for entry in os.environ.get(PATH_VARIABLE, "").split(os.pathsep):
        if entry.strip():
            folder = pathlib.Path(entry.strip()).expanduser().resolve()
            folders[folder.name] = folder
    return folders


def _import_folder(name: str, folder: pathlib.Path) -> Any:
    """Imports the plug-in package in `folder` (its relative imports work) once."""
    module_name = f"spark_jax_family_plugin_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    init = folder / "__init__.py"
    if not init.is_file():
        raise ValueError(f"task family {name!r}: {folder} has no __init__.py (${PATH_VARIABLE})")
    spec = importlib.util.spec_from_file_location(
        module_name, init, submodule_search_locations=[str(folder)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module


def _load(name: str) -> TaskFamily:
    """Imports the plug-in `name` and registers its `FAMILY`."""
    folders = _plugin_folders()
    try:
        if name in folders:
            module = _import_folder(name, folders[name])
        else:
            module = importlib.import_module(PLUGINS[name])
    except Exception as e:  # noqa: BLE001 - a broken plug-in is a one-line error
        raise ValueError(f"task family {name!r} cannot be imported: {type(e).__name__}: {e}") from e
    family = getattr(module, "FAMILY", None)
    if family is None or getattr(family, "name", None) != name:
        raise ValueError(f"task family {name!r}: its module defines no FAMILY named {name!r}")
    return register(family) if name not in _REGISTRY else _REGISTRY[name]


def get(name: str) -> TaskFamily:
    """The family `name` (its plug-in imported on first use); ValueError naming the known ones."""
    if name in _REGISTRY:
        return _REGISTRY[name]
    if name not in PLUGINS and name not in _plugin_folders():
        raise ValueError(f"unknown task family {name!r}; known: {', '.join(names())}")
    return _load(name)


def names() -> tuple[str, ...]:
    """Every family's name (shipped, on $SPARK_JAX_FAMILIES, or registered), sorted."""
    return tuple(sorted(set(PLUGINS) | set(_plugin_folders()) | set(_REGISTRY)))
