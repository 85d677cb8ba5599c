"""The task-family contract: what a family provides so the search runs beyond CLRS.

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
  its final programs only). Returns the `Evaluation` record (`families.evaluation`, the one
  record of every family) whose `score` is the number the archive ranks by (higher is
  better), with named `metrics` (e.g. val_accuracy, accuracy, loss, train_return, val_return,
  test_return) and the cost fields `params`, `macs` and `train_seconds`.
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
  `Evaluation` of all the job's seeds (CLRS: the job's protocol, task, cascade and seeds).
  Default: `evaluate` once per training seed, averaged (`jobs.family_jobs.run_family_job`).
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
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from spark_jax.families.evaluation import Evaluation

__all__ = ["SPLITS", "Evaluation", "TaskFamily"]

SPLITS = ("val", "test")  # What `TaskFamily.evaluate` scores: selection or reporting.


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
