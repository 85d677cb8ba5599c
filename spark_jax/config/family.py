"""The task family a search, an evaluation job and a feasibility check take when none is
named: CLRS, the paper's benchmark (records written before families existed are CLRS runs).
Pure Python, so the sandbox child and the job records can read it without loading the
search config."""

from __future__ import annotations

__all__ = ["DEFAULT_FAMILY"]

DEFAULT_FAMILY = "clrs"  # The one place the default family is named (`spark_jax.families`).
