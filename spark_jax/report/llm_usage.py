"""The report's LLM section: calls per role, routing outcomes, truncations and cost.

Cost is priced per call with the price of the model that answered it, from the run's
`editor.prices` ({model: {prompt_per_mtok, completion_per_mtok}}, per million tokens); calls
to models without a price are counted and named, never priced at zero.
"""

from __future__ import annotations

import collections
from typing import Any, Mapping, Sequence

from spark_jax.report.accounting import RunAccounting
from spark_jax.util import markdown

__all__ = ["calls_table", "cost_line", "routing_lines"]

_DASH = "—"


def _fmt(value: float | None, digits: int) -> str:
    return _DASH if value is None else f"{value:,.{digits}f}"


def _offline_kind(calls: Sequence[Mapping[str, Any]]) -> str:
    """How non-LLM calls are labelled: a baseline's offline analogue, or the offline rules."""
    if calls and all(c["backend"] == "offline-analogue" for c in calls):
        return "offline analogue (not an LLM)"
    return "offline rules (not an LLM)"


def calls_table(calls: Sequence[Mapping[str, Any]]) -> list[str]:
    """One row per role: calls, who answered, failures, truncations, tokens, latency."""
    roles: dict[str, list[Mapping[str, Any]]] = collections.defaultdict(list)
    for c in calls:
        roles[c["role"] or _DASH].append(c)
    rows = []
    for role, cs in roles.items():
        llm = [c for c in cs if c["is_llm"]]
        kind = (
            _offline_kind(cs)
            if not llm
            else ", ".join(sorted({f"{c['backend'] or '?'}/{c['model'] or '?'}" for c in llm}))
        )
        total = {
            key: [c[key] for c in cs if c[key] is not None]
            for key in ("prompt_tokens", "completion_tokens", "latency_s")
        }
        lat = total["latency_s"]
        rows.append(
            [role, len(cs), kind, sum(not c["ok"] for c in cs)]
            + [sum(c["parse_outcome"] == "truncated" for c in cs)]
            + [_fmt(sum(v) if v else None, 0 if k != "latency_s" else 2) for k, v in total.items()]
            + [_fmt(sum(lat) / len(lat) if lat else None, 3)]
        )
    if not rows:
        return ["(no editor calls recorded)"]
    return markdown.table(
        [
            "role",
            "calls",
            "kind",
            "failed",
            "truncated",
            "prompt tokens",
            "completion tokens",
            "latency s (total)",
            "latency s (mean)",
        ],
        rows,
    )


def routing_lines(acc: RunAccounting) -> list[str]:
    """Routing outcomes and truncations, as report bullets."""
    return [
        f"- Routing (ASR): {acc.routed} attempts routed by a parsed factor line, "
        f"{acc.route_retried} needed a retry, {acc.route_fallback} fell back to ACTION "
        "after every router answer failed to parse.",
        f"- Truncated answers (finish_reason 'length', never parsed): {acc.truncated_calls} "
        f"calls; {acc.truncated} attempts failed because the edit was truncated.",
        f"- Tag breaks (tag lines changed, moved or dropped; counted as scaffold "
        f"entanglement): {acc.tag_breaks}.",
    ]


def cost_line(calls: Sequence[Mapping[str, Any]], prices: Mapping[str, Any] | None) -> str:
    """The LLM cost of the run from token counts and per-model prices."""
    llm = [c for c in calls if c["is_llm"]]
    if not prices:
        return "- LLM cost: no `editor.prices` configured, so token counts are not priced."
    total, unpriced = 0.0, collections.Counter()
    for c in llm:
        price = prices.get(c["model"] or "")
        if price is None:
            unpriced[c["model"] or "?"] += 1
            continue
        total += (c["prompt_tokens"] or 0) * float(price["prompt_per_mtok"]) / 1e6
        total += (c["completion_tokens"] or 0) * float(price["completion_per_mtok"]) / 1e6
    line = f"- LLM cost (token counts x `editor.prices`, per million tokens): {total:.4f}"
    if unpriced:
        line += " (not priced: " + ", ".join(f"{m} x{n}" for m, n in sorted(unpriced.items()))
        line += ")"
    return line + "."
