"""Entanglement per method and per factor: which regions each attempt's edit touched.

An attempt's edit is classified by the feasibility check's region diff against its parent:
OPERATOR only, ACTION only, both regions (mixed factors), the scaffolding (tag lines or frozen
code; an answer whose tag lines are broken is checked and lands here), nothing; attempts with
no program to check (an LLM error, no code, no SEARCH block, a duplicate) are counted
apart. The entanglement rate is (both regions + scaffolding) / attempts, as in the method
table. Factor-scoped methods get one row per factor their step chose; holistic methods (the
rewrite and the baselines: no factor) one 'holistic' row.
"""

from __future__ import annotations

import pathlib
from typing import Sequence

from spark_jax.compare.methods import Method
from spark_jax.compare.runner import ComparePlan, run_dir_of
from spark_jax.search.rundb import RunDB
from spark_jax.util import markdown

__all__ = ["KINDS", "count", "section"]

KINDS = ("operator", "action", "entangled", "scaffold", "none")
_HEAD = [
    "method",
    "factor",
    "attempts",
    "OPERATOR only",
    "ACTION only",
    "both regions",
    "scaffolding",
    "no change",
    "no program",
    "tags broken",
    "entanglement rate",
]


def count(proposals) -> dict[str, dict[str, int]]:
    """{factor or 'holistic': {kind: n, 'attempts': n, 'no_program': n, 'tags_broken': n}}."""
    out: dict[str, dict[str, int]] = {}
    for p in proposals:
        row = out.setdefault(p.factor or "holistic", dict.fromkeys(_keys(), 0))
        row["attempts"] += 1
        if p.entanglement in KINDS:
            row[p.entanglement] += 1
        else:
            row["no_program"] += 1
        row["tags_broken"] += any(
            c.role not in ("route", "directive") and c.parse_outcome.startswith("tags_broken")
            for c in p.calls
        )
    return out


def _keys() -> tuple[str, ...]:
    return ("attempts", *KINDS, "no_program", "tags_broken")


def _merge(total: dict, part: dict) -> None:
    for factor, row in part.items():
        into = total.setdefault(factor, dict.fromkeys(_keys(), 0))
        for k, v in row.items():
            into[k] += v


def section(out: pathlib.Path, plan: ComparePlan, methods: Sequence[Method]) -> list[str]:
    """The report's entanglement table (markdown lines), from every run with a database."""
    rows = []
    for m in methods:
        total: dict[str, dict[str, int]] = {}
        for seed in plan.seeds:
            path = run_dir_of(out, m, seed) / "run.db"
            if path.is_file():
                with RunDB.open(path) as db:
                    _merge(total, count(db.proposals()))
        for factor in sorted(total):
            r = total[factor]
            n = r["attempts"]
            rate = (r["entangled"] + r["scaffold"]) / n if n else None
            cells = [f"`{m.name}`", factor, str(n)]
            cells += [str(r[k]) for k in (*KINDS, "no_program", "tags_broken")]
            cells.append("—" if rate is None else f"{rate:.2f}")
            rows.append(cells)
    return markdown.table(_HEAD, rows)
