"""The report's section on intensifying the incumbent (`search.intensify`): every challenger
trained again, its first and confirmed scores, whether it became the incumbent, and the device
time the re-evaluations took beside the candidates' (they are never candidates)."""

from __future__ import annotations

from typing import Any, Mapping

from spark_jax.util import markdown

__all__ = ["section"]


def _pct(x: float | None) -> str:
    return markdown.DASH if x is None else f"{100 * x:.2f}"


def section(state: Mapping[str, Any] | None, candidate_seconds: float) -> list[str]:
    """Markdown lines ([] when the run did not intensify)."""
    if not state or not state.get("seeds"):
        return []
    programs = state.get("programs") or {}
    rows = [
        [f"`{d['program'][:16]}`", _pct(programs[d["program"]]["selection"])]
        + [_pct(programs[d["program"]]["intensified"]), _pct(d["confirmed"])]
        + ["yes" if d["became_incumbent"] else "no"]
        for d in state.get("decisions") or ()
    ]
    seconds = sum(float(p.get("wall_seconds") or 0.0) for p in programs.values())
    head = ["challenger", "first score (%)", "on the extra seeds (%)", "confirmed (%)"]
    return [
        "## Intensification",
        "",
        f"A candidate became the best only after {len(state['seeds'])} more seeds "
        f"({state['seeds'][0]}-{state['seeds'][-1]}) confirmed it against the incumbent "
        "(`fitness.intensify`; confirmed = the mean over all its seeds, on the selection set). "
        f"Re-evaluations: {len(programs)}, {seconds / 3600:.2f} device h, beside "
        f"{candidate_seconds / 3600:.2f} device h of evaluated candidates; they are not "
        "candidates and never count toward the budget.",
        "",
        *markdown.table([*head, "became the incumbent"], rows),
        "",
    ]
