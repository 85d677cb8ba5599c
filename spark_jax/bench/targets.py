"""The cost issue's targets for `spark-jax bench`'s per-candidate ratios (no heavy imports:
the result tables read them too)."""

from __future__ import annotations

TARGETS = {
    "total_wall_ours_over_official": ("<=", 0.5),
    "seeds_vmapped_over_sequential": ("<=", 0.5),
    "steps_per_s_ours_over_official": (">=", 1.2),
    "feasibility_unseen_over_evaluation": ("<=", 0.01),
}


def meets(name: str, median: float) -> bool:
    """Whether a ratio's median meets its target (`name` must be in TARGETS)."""
    op, target = TARGETS[name]
    return median <= target if op == "<=" else median >= target
