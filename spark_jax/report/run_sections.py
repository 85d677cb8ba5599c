"""The sections of a run's `report.md`, each a function of one `RunReport` record.

`render` joins them in order: header, seed vs best (with the verdict, selection and spread),
search accounting, LLM calls, top programs, failures, plots, the paper's reference figures,
configuration. OOD scores stored as fractions print as percentages; NULL prints as '—'.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import math
import pathlib
from typing import Any, Callable, Mapping, Sequence

from spark_jax.operator.step import Proposal
from spark_jax.report import best_section, family, llm_usage, reference, selection, spread
from spark_jax.report.accounting import RunAccounting, find_meta, is_scored
from spark_jax.search import best_program
from spark_jax.util import labels, markdown

__all__ = ["RunReport", "SECTIONS", "render"]

_HIGHLIGHTS = (
    "task",
    "preset",
    "seed",
    "editor",
    "operator_variant",
    "variant",
    "budget",
    "max_attempts",
    "in_flight",
    "versions",
    "command",
)
_DASH = "—"


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return _DASH
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def _kmacs(macs: int | None) -> str:
    return _DASH if macs is None else f"{macs / 1000.0:,.1f}"


def _pct(score: float | None) -> str:
    return _DASH if score is None else f"{100.0 * score:.2f}"


def _percent(score: float | None) -> float | None:
    return None if score is None else 100.0 * score


def _cell(value: Any, limit: int = 160) -> str:
    """A run_meta value as one table cell: a list of strings (a command) joined, else JSON."""
    words = isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)
    text = (
        " ".join(value)
        if words
        else value
        if isinstance(value, str)
        else json.dumps(value, default=str, sort_keys=True)
    )
    return markdown.cell(text, limit)


@dataclasses.dataclass(frozen=True)
class RunReport:
    """What the sections read: the run's records and the labels derived from them once."""

    run_dir: pathlib.Path
    meta: Mapping[str, Any]
    acc: RunAccounting
    props: Sequence[Proposal]
    evals: Sequence[Mapping[str, Any]]
    calls: Sequence[Mapping[str, Any]]
    plots: Sequence[pathlib.Path]
    top_k: int
    prices: Mapping[str, Any] | None
    best: best_program.BestProgram | None
    task: Any
    preset: Any
    protocol: str  # "task `dfs`, preset `smoke`, seed 0": every section's heading says it
    view: spread.NoiseView
    our_macs: str  # the MACs column's header

    @classmethod
    def build(cls, run_dir, meta, acc, props, evals, calls, plots, top_k, prices, final_test, best):
        anchor = acc.seed or acc.best_candidate or {}
        task = anchor.get("task") or find_meta(meta, "task")
        preset = anchor.get("preset") or find_meta(meta, "preset")
        seed_no = anchor.get("seed") if anchor.get("seed") is not None else find_meta(meta, "seed")
        macs_n = find_meta(meta, "macs_nodes")
        return cls(
            run_dir=pathlib.Path(run_dir),
            meta=meta,
            acc=acc,
            props=props,
            evals=evals,
            calls=calls,
            plots=plots,
            top_k=top_k,
            prices=prices,
            best=best,
            task=task,
            preset=preset,
            protocol=f"task `{task or 'unknown'}`, preset `{preset or 'unknown'}`, seed {seed_no}",
            view=spread.noise_view(meta, final_test),
            our_macs=f"our MACs (K; one processor step, contraction count, N={macs_n or '?'})",
        )

    @property
    def pair(self) -> list[tuple[str, Mapping[str, Any] | None]]:
        return [("seed", self.acc.seed), ("best evaluated candidate", self.acc.best_candidate)]


def _header(r: RunReport) -> list[str]:
    seeds_text = "one training seed" if r.view.k == 1 else f"{r.view.k} training seeds (mean)"
    return [
        f"# {best_section.method_title(r.meta)} run report: {r.run_dir.name}",
        "",
        f"Protocol: {r.protocol}. Editor: {labels.editor_label(find_meta(r.meta, 'editor'))}. "
        f"Machine: {find_meta(r.meta, 'machine') or 'not recorded'}.",
        "",
        f"Every number below was measured under this protocol ({seeds_text} per "
        f"program; OOD scores are on the {r.view.selection_label} unless labelled "
        f"otherwise), unless its row says otherwise; the paper's figures are only in "
        f"'Paper reference figures', in their own columns. MACs are {r.our_macs}.",
        "",
        r.view.describe(),
    ]


def _seed_vs_best(r: RunReport) -> list[str]:
    cols = [
        (f"OOD (%) on the {r.view.source} set, mean", "ood_score", _pct),
        ("val (%)", "val_score", _pct),
        (r.our_macs, "macs", _kmacs),
        ("params", "params", _fmt),
    ]
    rows = [
        [name, f"`{e['program_id']}`" if e else _DASH, _fmt(e["proposal_attempt"]) if e else _DASH]
        + [f(e[key]) if e else _DASH for _, key, f in cols]
        for name, e in r.pair
    ]
    lines = ["", f"## Seed vs best ({r.protocol})", ""]
    lines += markdown.table(["program", "id", "attempt index"] + [c[0] for c in cols], rows)
    lines += ["", *best_section.best_lines(r.best)]
    lines += ["", *family.family_lines(r.meta, r.acc.seed, r.acc.best_candidate)]
    lines += ["", spread.verdict_line(r.acc, r.view, r.protocol), ""]
    return (
        lines + selection.selection_lines(r.meta) + spread.spread_lines(r.acc, r.view, r.protocol)
    )


def _best_reached(acc: RunAccounting) -> str:
    if acc.best_ood is None:
        return "no scored program"
    if acc.best_attempt is None:
        return "by the seed (no candidate exceeded its OOD)"
    return (
        f"at attempt {acc.best_attempt} of {acc.attempts} (0-based attempt index "
        f"{acc.best_attempt_index}), evaluated candidate {acc.best_evaluated} of "
        f"{acc.evaluated}"
    )


def _accounting(r: RunReport) -> list[str]:
    acc, calls = r.acc, r.calls
    n_llm = sum(bool(c["is_llm"]) for c in calls)
    per = f"{len(calls) / acc.attempts:.2f} per attempt" if acc.attempts else "no attempts"
    return [
        "",
        f"## Search accounting (paper metric definitions; {r.protocol})",
        "",
        f"- Attempts (every proposal; the paper's *Cand.*): {acc.attempts} "
        f"({acc.feasible} feasible, {acc.infeasible} infeasible, {acc.failed} editor failures, "
        f"{acc.duplicates} duplicates: repeats of a trained program, not retrained).",
        f"- Evaluated candidates (feasible and entered training: the budget's count): "
        f"{acc.evaluated_budget} ({acc.evaluated} scored, {acc.eval_errors} evaluation errors "
        f"or NaN, counted all the same; {acc.not_evaluated} feasible not evaluated; the seed's "
        "own evaluation is not a candidate, and counts toward the budget as well).",
        f"- Valid rate (feasible / attempts): {_fmt(acc.valid_rate, 3)}.",
        f"- Entanglement rate (entangled or scaffold, tag breaks included / attempts): "
        f"{_fmt(acc.entanglement_rate, 3)} ({acc.entangled} of {acc.attempts}).",
        f"- LLM calls (routing + directives + editing): {len(calls)} editor calls ({per}); "
        f"{n_llm} to an LLM, {len(calls) - n_llm} offline rules (not an LLM).",
        f"- Wall hours (first to last record, database creation included): "
        f"{_fmt(acc.wall_hours, 3)}.",
        f"- Device hours (sum of train + compile seconds over all evaluations): "
        f"{acc.device_hours:.3f}.",
        f"- Train seconds per evaluated candidate (mean): {_fmt(acc.mean_train_seconds, 1)} "
        f"(compile: {_fmt(acc.mean_compile_seconds, 1)}).",
        f"- Best OOD {_pct(acc.best_ood)}% (best-so-far, seed included) first reached "
        f"{_best_reached(acc)}.",
    ]


def _llm_calls(r: RunReport) -> list[str]:
    lines = ["", "## LLM calls by role", ""]
    lines += llm_usage.routing_lines(r.acc) + [llm_usage.cost_line(r.calls, r.prices), ""]
    return lines + llm_usage.calls_table(r.calls)


def _top_programs(r: RunReport) -> list[str]:
    factor = {p.attempt: p.factor for p in r.props}
    ranked = sorted(
        [e for e in r.evals if is_scored(e)],
        key=lambda e: (-e["ood_score"], e["macs"] if e["macs"] is not None else math.inf, e["id"]),
    )[: r.top_k]
    header = ["rank", "program", "attempt index", "factor"]
    header += [f"OOD (%) on the {r.view.source} set, mean", "val (%)", r.our_macs, "params"]
    rows = [
        [
            i,
            f"`{e['program_id']}`",
            "seed" if e["proposal_attempt"] is None else e["proposal_attempt"],
            factor.get(e["proposal_attempt"]) or _DASH,
            _pct(e["ood_score"]),
            _pct(e["val_score"]),
            _kmacs(e["macs"]),
            _fmt(e["params"]),
            _fmt(e["train_seconds"], 1),
        ]
        for i, e in enumerate(ranked, 1)
    ]
    lines = ["", f"## Top {r.top_k} programs ({r.protocol})", ""]
    return lines + (
        markdown.table(header + ["train s"], rows) if ranked else ["(no scored program)"]
    )


def _failures(r: RunReport) -> list[str]:
    fails: collections.Counter[tuple[str, str]] = collections.Counter()
    for p in r.props:
        if p.status != "feasible":
            stage = p.failure_stage or ("editor" if p.status == "failed" else "unknown")
            fails[stage, p.failure_type or p.status] += 1
    for e in r.evals:
        if e["status"] != "ok":
            fails["evaluation", e["error_type"] or "error"] += 1
    rows = [[s, t, c] for (s, t), c in sorted(fails.items())]
    table = markdown.table(["stage", "failure type", "count"], rows) if fails else ["(no failures)"]
    return ["", "## Failures by stage", ""] + table


def _plots(r: RunReport) -> list[str]:
    return ["", "## Plots", ""] + (
        [f"![{p.stem}](plots/{p.name})" for p in r.plots]
        or ["Not written (see the error printed); `spark-jax report RUN_DIR` writes them again."]
    )


def reference_section(r: RunReport) -> list[str]:
    ours = [
        (
            label,
            _percent(spread.reported_ood(r.view, e)),
            None if e["macs"] is None else e["macs"] / 1000.0,
        )
        for label, e in r.pair
        if e
    ]
    task = str(r.task) if r.task else None
    return [""] + reference.comparison_lines(task, str(r.preset) if r.preset else None, ours)


def _highlight_rank(key: str) -> int:
    hits = (
        i
        for i, h in enumerate(_HIGHLIGHTS)
        if key == h or key.startswith(h + ".") or key.endswith("." + h)
    )
    return min(hits, default=99)


def _configuration(r: RunReport) -> list[str]:
    meta = r.meta
    order = sorted(
        (k for k in meta if not k.startswith("final_test.")), key=lambda k: (_highlight_rank(k), k)
    )
    table = markdown.table(["key", "value"], [[f"`{k}`", _cell(meta[k])] for k in order])
    return ["", "## Configuration", ""] + (table if meta else ["(no run metadata recorded)"])


SECTIONS: tuple[Callable[[RunReport], list[str]], ...] = (
    _header,
    _seed_vs_best,
    _accounting,
    _llm_calls,
    _top_programs,
    _failures,
    _plots,
    reference_section,
    _configuration,
)


def render(report: RunReport) -> str:
    """The whole report.md."""
    return "\n".join(line for section in SECTIONS for line in section(report)) + "\n"
