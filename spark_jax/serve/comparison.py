"""The JSON of the comparison pages: the comparisons under the root, and one comparison.

A comparison directory is what `spark-jax compare` writes: its plan (`compare.json`) and one
normal run directory per (method, search seed). Every number is computed by
`compare.tables` (the same rows and bands as the comparison's `report.md`) from read-only
readers of the member runs, so a comparison whose searches still run shows what they have
written so far. Values are data, never markup.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import math
import threading
from typing import Any

from spark_jax.compare import tables
from spark_jax.compare.methods import MethodError, resolve_methods
from spark_jax.compare.runner import PLAN_FILE, ComparePlan, run_dir_of
from spark_jax.search.final_test import META_KEY as FINAL_TEST_KEY
from spark_jax.serve import paper, verdicts
from spark_jax.serve.data import _stamp, clean, listing
from spark_jax.serve.reader import RUN_DB, NotFound, OutsideRoot, Root, RunReader, run_status

__all__ = ["compare_detail", "comparisons_list"]

# The two band charts of the report: (curve, scale).
_CHARTS = {"best": ("best_eval", 100.0), "valid": ("valid", 1.0)}
_CACHE: collections.OrderedDict[tuple, tables.RunFigures] = collections.OrderedDict()
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 64


def _plan(root: Root, rel: str) -> ComparePlan:
    path = root.resolve(rel) / PLAN_FILE
    if not path.is_file():
        raise NotFound(f"no comparison at {rel!r}")
    if not root.inside(path):
        raise OutsideRoot(rel)  # a symlinked plan file that leads out of the root
    try:
        plan = ComparePlan.from_dict(json.loads(path.read_text(encoding="utf-8")))
        resolve_methods(list(plan.methods))
    except (OSError, ValueError, KeyError, TypeError, MethodError) as exc:
        raise NotFound(f"{rel or '(root)'}/{PLAN_FILE} is not a readable plan: {exc}") from None
    return plan


def _member_rel(rel: str, method: str, seed: int) -> str:
    return f"{rel}/{method}/seed-{seed}" if rel else f"{method}/seed-{seed}"


def _figures(method: str, seed: int, reader: RunReader, stamp: tuple) -> tables.RunFigures:
    """The run's figures, recomputed only when its database changed since the last poll
    (`stamp` taken before the reader's snapshot began: a cached entry is never too new)."""
    key = (str(reader.path), method, seed, stamp)
    with _CACHE_LOCK:
        found = _CACHE.get(key)
    if found is None:
        found = tables.run_figures(
            method,
            seed,
            reader,
            reader.flat_meta(),
            reader.created_at(),
            reader.get_meta(FINAL_TEST_KEY),  # as the report: its verdicts are on the test set
        )
        with _CACHE_LOCK:
            _CACHE[key] = found
            while len(_CACHE) > _CACHE_SIZE:
                _CACHE.popitem(last=False)
    return found


# A member without a run database: in a folder that keeps only the comparison's report
# (committed without its databases), or one whose search has not started.
NOT_KEPT = "no database kept (report.md only)"
NOT_STARTED = "not started"
REPORT_ONLY = "report only"


def _members(root: Root, rel: str, plan: ComparePlan):
    """(member rows for the page, figures of the members that have a database)."""
    members, figures = [], []
    has_report = (root.resolve(rel) / "report.md").is_file()
    for method, seed in plan.runs():
        member_rel = _member_rel(rel, method.name, seed)
        run_dir = root.resolve(member_rel)  # OutsideRoot if a link leads out
        row: dict[str, Any] = {"method": method.name, "seed": seed, "path": member_rel}
        if root.db_file(run_dir, RUN_DB) is None:
            members.append(row | {"status": NOT_KEPT if has_report else NOT_STARTED})
            continue
        try:
            stamp = _stamp(run_dir / RUN_DB)
            with RunReader(run_dir / RUN_DB) as reader:
                fig = _figures(method.name, seed, reader, stamp)
                status = run_status(run_dir, reader)
        except Exception as exc:  # a run being created: listed, not fatal
            members.append(row | {"status": "unreadable", "error": str(exc)})
            continue
        figures.append(fig)
        acc = fig.acc
        members.append(
            row
            | {
                "status": status,
                "editor": fig.editor,
                "attempts": acc.attempts,
                "evaluated": acc.evaluated,
                "best_ood": acc.best_ood,
            }
        )
    return members, figures


def _status(members: list[dict[str, Any]]) -> str:
    states = {m["status"] for m in members}
    if "running" in states:
        return "running"
    if states == {NOT_KEPT}:
        return REPORT_ONLY
    return "finished" if states == {"finished"} else "incomplete"


def _spread(s: tables.Spread) -> dict[str, Any]:
    return {"mean": s.mean, "std": s.std, "n": s.n}


def _row(r: tables.MethodRow) -> dict[str, Any]:
    out = {
        "name": r.method.name,
        "paper_name": r.method.paper_name,
        "description": r.method.description,
        "offline_label": tables.OFFLINE_LABEL if r.offline else None,
    }
    for field in dataclasses.fields(r):
        value = getattr(r, field.name)
        if field.name != "method":
            out[field.name] = _spread(value) if isinstance(value, tables.Spread) else value
    return out


def _chart(methods, grouped, curve: str, scale: float) -> dict[str, Any]:
    """Aligned series for one band chart: x, and per method mean/low/high (None off-run)."""
    bands = []
    for m in methods:
        runs = grouped.get(m.name, [])
        b = tables.band([list(r.acc.curves.get(curve, ())) for r in runs], scale)
        if b is not None:
            bands.append((m.name, b))
    n = max((b.xs[-1] + 1 for _, b in bands if b.xs), default=0)
    series = []
    for name, b in bands:
        at = {x: k for k, x in enumerate(b.xs)}
        pick = [[v[at[x]] if x in at else None for x in range(n)] for v in (b.mean, b.low, b.high)]
        series.append({"name": name, "n": b.n, "mean": pick[0], "low": pick[1], "high": pick[2]})
    return {"x": list(range(n)), "methods": series}


def _threshold(value: str | None) -> float | None:
    if value in (None, ""):
        return None
    try:
        threshold = float(value)
    except ValueError:
        raise NotFound(f"threshold must be a number (OOD fraction), got {value!r}") from None
    if not math.isfinite(threshold):
        raise NotFound(f"threshold must be finite, got {value!r}")
    return threshold


def compare_detail(root: Root, rel: str, threshold: str | None = None) -> dict[str, Any]:
    """Everything the comparison page draws; NotFound / OutsideRoot for a bad path."""
    plan = _plan(root, rel)
    methods = resolve_methods(list(plan.methods))
    members, figures = _members(root, rel, plan)
    grouped = tables.by_method(figures)
    chosen = _threshold(threshold)
    used = tables.default_threshold(grouped) if chosen is None else chosen
    base = dict(plan.base)
    planned = (
        (base.get("editor") or {}).get("kind") if isinstance(base.get("editor"), dict) else None
    )
    editors = sorted({f.editor for f in figures}) or ([str(planned)] if planned else [])
    seeds_acc = [r.acc for runs in grouped.values() for r in runs]
    seed_test = _spread(
        tables.spread([r.test_seed for runs in grouped.values() for r in runs], 100.0)
    )
    rows = [_row(r) for r in tables.method_rows(methods, grouped, used, plan.budget)]
    task, preset = str(base.get("task", "dfs")), str(base.get("preset", "smoke"))
    payload = {
        "path": rel,
        "task": base.get("task", "dfs"),
        "preset": base.get("preset", "smoke"),
        "methods": list(plan.methods),
        "seeds": list(plan.seeds),
        "budget": plan.budget,
        "max_attempts": plan.max_attempts,
        "editors": editors,
        "offline": editors == ["offline"],
        "offline_label": tables.OFFLINE_LABEL,
        "threshold": used,
        "threshold_default": chosen is None,
        "runs_with_db": len(figures),
        "expected": len(members),
        "status": _status(members),
        "rows": rows,
        # the seed program's own row, as report.md's last row of the methods table
        "seed_row": {
            "selection": _spread(tables.spread([tables.seed_ood(a) for a in seeds_acc], 100.0)),
            "test": seed_test,
        },
        # report.md's verdict sections, by its own code
        "verdicts": verdicts.compare_blocks(methods, grouped, plan.budget) if figures else None,
        "report_md": (root.resolve(rel) / "report.md").is_file(),
        "reference": verdicts.reference_blocks("compare", base),
        # the paper's bars for the task beside each method's test score (none measured: none)
        "paper_figure": paper.compare_figure(task, preset, rows, seed_test) if figures else None,
        "members": members,
        "charts": {k: _chart(methods, grouped, c, s) for k, (c, s) in _CHARTS.items()},
    }
    return clean(payload)


def _comparison_line(root: Root, rel: str) -> dict[str, Any]:
    plan = _plan(root, rel)
    cmp_dir = root.resolve(rel)
    members = [
        _member_rel(rel, m.name, s)
        for m, s in plan.runs()
        if (run_dir_of(cmp_dir, m, s) / RUN_DB).is_file()
    ]
    report_only = not members and (cmp_dir / "report.md").is_file()
    return {
        "path": rel,
        "task": dict(plan.base).get("task", "dfs"),
        "preset": dict(plan.base).get("preset", "smoke"),
        "methods": list(plan.methods),
        "seeds": list(plan.seeds),
        "budget": plan.budget,
        "runs_with_db": len(members),
        "expected": len(plan.methods) * len(plan.seeds),
        "members": members,  # the member runs the index lists under the comparison
        "status": REPORT_ONLY if report_only else None,
    }


def comparisons_list(root: Root) -> list[dict[str, Any]]:
    """One line per comparison directory under the root (unreadable ones say why)."""
    return clean(listing(root, root.compare_dirs(), lambda rel: _comparison_line(root, rel)))
