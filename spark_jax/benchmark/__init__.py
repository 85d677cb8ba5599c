"""Benchmarks: programs x CLRS tasks x seeds on the executors, stored in SQLite as results land.

  plan     programs (files, run directories, official:KIND), task sets (clrs10, clrs30), jobs
  store    the benchmark database (plan and results; resumable)
  seeds    a searched program's search seeds; benchmark seeds kept disjoint from them
  runner   start / resume: submit the jobs without a result, record each as it lands
  rounds   identity before training; the sequential mode's rounds and per-pair decisions
  decided  the sequential mode's report section
  stats    per-task spread over seeds, verdicts against the baseline (stats.significance)
  tables   report.md (paper-shaped table, comparison, reference rows), results.csv, bar plot

May import: `report`, `search`, `evaluation` and everything below them.
"""

from spark_jax.benchmark.plan import (
    CLRS10,
    BenchmarkProgram,
    PlanError,
    expand_tasks,
    resolve_program,
)
from spark_jax.benchmark.runner import DB_NAME, BenchmarkSpec, resume_benchmark, start_benchmark
from spark_jax.benchmark.seeds import default_first_seed
from spark_jax.benchmark.store import BenchmarkDBError

__all__ = [
    "CLRS10",
    "DB_NAME",
    "BenchmarkDBError",
    "BenchmarkProgram",
    "BenchmarkSpec",
    "PlanError",
    "default_first_seed",
    "expand_tasks",
    "resolve_program",
    "resume_benchmark",
    "start_benchmark",
]
