"""The report's words for a run's method and its best program: the title names the method
(a baseline's report is not a "SPARK run report"), and a section says which program
`best/best_program.py` holds and shows its diff against the seed."""

from __future__ import annotations

from typing import Any, Mapping

from spark_jax.report.accounting import find_meta
from spark_jax.search import best_program

__all__ = ["best_lines", "method_title"]


def method_title(meta: Mapping[str, Any]) -> str:
    """The method a run's report is titled with: 'SPARK' for SPARK's operator, else its
    variant ('Global Rewrite', 'openevolve', ...)."""
    config = meta.get("config")
    mode = config.get("operator", {}).get("mode") if isinstance(config, dict) else None
    variant = find_meta(meta, "operator_variant")
    if mode in (None, "spark"):
        if not variant:
            return "SPARK"
        return str(variant) if "SPARK" in str(variant) else f"SPARK ({variant})"
    return str(variant or mode)


_DIFF_LINES = 120


def best_lines(best: best_program.BestProgram | None) -> list[str]:
    """Which program `best/best_program.py` holds and its diff against the seed."""
    if best is None:
        return ["`best/`: not written (the seed was not evaluated)."]
    if best.is_seed:
        return ["`best/best_program.py` is the seed program: no candidate scored."]
    diff = best_program.seed_diff(best).splitlines()
    head = [
        f"`best/best_program.py` is the best evaluated candidate (`{best.program_id}`, "
        f"attempt index {best.attempt}); its diff against the seed (`best/vs_seed.diff`):",
        "",
    ]
    if not diff:
        return head[:1] + ["", "(identical to the seed)"]
    cut = len(diff) > _DIFF_LINES
    body = diff[:_DIFF_LINES] + ([f"... ({len(diff) - _DIFF_LINES} more lines)"] if cut else [])
    return head + ["```diff", *body, "```"]
