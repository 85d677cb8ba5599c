"""Comparisons of search methods: methods x search seeds under one protocol and budget.

  methods  the named methods (the paper's ablations and scope-control baselines, Ours-1it,
           the baselines and the sampling controls `sample` and `sequential`)
  runner   the plan, one run directory per (method, seed), run or resumed as child searches
  figures  each run's figures from its database (accounting, editor, calls, final test scores)
  tables   the comparison report from the runs' figures: per-method table, seed row
  verdicts every method against the first, and SPARK and OpenEvolve against each control
           (stats.significance: cannot tell, Holm)
  plots    the band plots (best-so-far vs evaluated, valid rate vs attempt)
  checkpoint, checkpoint_parts
           an unfinished comparison carried from one machine to the next, and its parts
           (scripts/compare_checkpoint.py)
  export   a comparison's record copied into a results folder (scripts/compare_copy.py)
  pool     a proposal-only comparison's parent pool from a search (llm_reliability_pool.py)

May import: `benchmark`, `report`, `search` and everything below them.
"""

from spark_jax.compare.methods import METHODS, Method, MethodError, resolve_methods
from spark_jax.compare.runner import PLAN_FILE, CompareError, ComparePlan, run_comparison
from spark_jax.compare.tables import write_compare_report

__all__ = [
    "METHODS",
    "PLAN_FILE",
    "CompareError",
    "ComparePlan",
    "Method",
    "MethodError",
    "resolve_methods",
    "run_comparison",
    "write_compare_report",
]
