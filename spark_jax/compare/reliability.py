"""The report of a proposal-only comparison (`compare --proposal-only`): the reliability
table (`report.reliability`) of every method's recorded attempts, and Fisher's exact test of
SPARK's valid rate against OpenEvolve's. Nothing trained, so no score, budget or curve.

`reliability_section` is deterministic in the run databases: a `--replay` of the recorded
cassettes reproduces it byte for byte (`scripts/llm_reliability_table.py` pastes it into
an experiment's README between `START` and `END`).
"""

from __future__ import annotations

import pathlib
from typing import Sequence

from spark_jax.compare.methods import resolve_methods
from spark_jax.compare.runner import ComparePlan, run_dir_of
from spark_jax.report import reliability
from spark_jax.search.rundb import RunDB
from spark_jax.util.files import write_atomic

__all__ = ["END", "START", "reliability_section", "write_reliability_report"]

START = "<!-- reliability-table:start (scripts/llm_reliability_table.py) -->"
END = "<!-- reliability-table:end -->"
TESTED = ("spark", "openevolve")  # Fisher's exact test: the paper's claim


def _pool_line(out: pathlib.Path, plan: ComparePlan) -> str:
    for m, s in plan.runs():
        path = run_dir_of(out, m, s) / "run.db"
        if path.is_file():
            with RunDB.open(path) as db:
                meta = db.get_meta("proposal_only")
            if meta:
                names = ", ".join(f"{p['name']} ({p['score']:.4f})" for p in meta["programs"])
                return (
                    f"Parents: the fixed pool `{pathlib.Path(meta['pool']).name}` (sha256 "
                    f"{meta['pool_sha256'][:12]}), {meta['rule']}: {names}."
                )
    return "Parents: no run has started."


def reliability_section(parts: Sequence[tuple[str | pathlib.Path, ComparePlan]]) -> list[str]:
    """The table, the test and what was run, as markdown lines (deterministic), over one or
    more comparisons `(out, plan)` (e.g. methods run for different attempt counts)."""
    rows, models, heads = {}, set(), []
    for out, plan in parts:
        out = pathlib.Path(out)
        for m in resolve_methods(list(plan.methods)):
            paths = [run_dir_of(out, m, s) / "run.db" for s in plan.seeds]
            rows[m.name] = reliability.collect(m.name, [p for p in paths if p.is_file()])
            models.update(rows[m.name].models)
        base = plan.base
        heads.append(
            f"- {', '.join(f'`{m}`' for m in plan.methods)}: proposal-only (nothing trained), "
            f"task `{base.get('task', 'dfs')}`, preset `{base.get('preset', 'smoke')}`, "
            f"search seeds {list(plan.seeds)}, {plan.max_attempts} attempts per run, editor "
            f"`{(base.get('editor') or {}).get('kind', 'offline')}`. {_pool_line(out, plan)}"
        )
    return [
        START,
        *heads,
        f"- Models reported by the calls: {', '.join(sorted(models)) or 'none (no LLM call)'}.",
        "",
        *reliability.table_lines(list(rows.values())),
        "",
        reliability.fisher_line(rows, *TESTED),
        END,
    ]


def write_reliability_report(out: str | pathlib.Path, plan: ComparePlan) -> str:
    """Writes OUT/report.md (the section under a title); returns its text."""
    out = pathlib.Path(out)
    text = "\n".join(
        ["# Proposal-only comparison: reliability", "", *reliability_section([(out, plan)]), ""]
    )
    write_atomic(out / "report.md", text)
    return text
