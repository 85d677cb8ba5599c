#!/usr/bin/env python3
"""Regenerates the reliability table of results/llm-reliability/README.md from the runs.

    python scripts/llm_reliability_table.py [--readme README.md] [--plot PNG] [--check] COMPARE_DIR...
    python scripts/llm_reliability_table.py [--check] RESULTS_DIR

(the second form: RESULTS_DIR/record/main and RESULTS_DIR/record/others into
RESULTS_DIR/README.md and RESULTS_DIR/rates.png, e.g.
`python scripts/llm_reliability_table.py results/llm-reliability`.)

Reads each proposal-only comparison directory (its compare.json and run databases), builds
one table over all their methods (`spark_jax.compare.reliability.reliability_section`:
valid and entanglement rates with Wilson intervals, failure types, tokens and latency per
attempt, Fisher's exact test of spark vs openevolve) and replaces the README's part between
the generated-table markers (appended when it has none). `--check` changes nothing and
exits 1 if the README's part differs: what a replay uses to show it is bit-for-bit.
`--plot PNG` also draws each method's valid and cross-factor entanglement rates with their
Wilson intervals (`spark_jax.report.reliability.rates_plot`).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys

from spark_jax.compare.reliability import END, START, reliability_rows, reliability_section
from spark_jax.compare.runner import PLAN_FILE, ComparePlan
from spark_jax.report.reliability import rates_plot


def _parts(dirs: list[str]) -> list[tuple[str, ComparePlan]]:
    parts = []
    for d in dirs:
        plan_path = pathlib.Path(d) / PLAN_FILE
        if not plan_path.is_file():
            sys.exit(f"{d}: no {PLAN_FILE} (not a comparison directory)")
        plan = ComparePlan.from_dict(json.loads(plan_path.read_text(encoding="utf-8")))
        if not plan.proposal_only:
            sys.exit(f"{d}: not a proposal-only comparison")
        parts.append((d, plan))
    return parts


def _answerers(results: pathlib.Path | None) -> str | None:
    """What answered, from the folder's answerers.yaml (scripts/llm_account.py): the agents,
    what they were, and that the LLM is not recorded; None without the file."""
    path = results / "answerers.yaml" if results else None
    if path is None or not path.is_file():
        return None
    import yaml

    sessions = yaml.safe_load(path.read_text(encoding="utf-8"))["sessions"]
    agents = [a for s in sessions for a in s["agents"]]
    return (
        f"{len(agents)} language-model agents ({agents[0]}-{agents[-1]}) with a shell and memory "
        "across prompts, via a file queue (LLM not recorded)"
    )


def _caption(parts: list[tuple[str, ComparePlan]], rows, results=None) -> str:
    base = parts[0][1].base
    models = ", ".join(sorted({m for r in rows.values() for m in r.models})) or "no LLM call"
    models = _answerers(results) or models
    editor = (base.get("editor") or {}).get("kind", "offline")
    return (
        f"proposal-only, task {base.get('task', 'dfs')}, preset {base.get('preset', 'smoke')}; "
        f"editor {editor}: {models}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="+", metavar="COMPARE_DIR")
    ap.add_argument("--readme", default=None, help="default: results/llm-reliability/README.md")
    ap.add_argument("--check", action="store_true", help="compare only; exit 1 on a difference")
    ap.add_argument("--plot", default=None, help="also draw the rates figure to this PNG")
    args = ap.parse_args()
    results = pathlib.Path(args.dirs[0])
    folder = None
    if len(args.dirs) == 1 and (results / "record").is_dir() and args.readme is None:
        folder = results
        args.dirs = [str(results / "record" / "main"), str(results / "record" / "others")]
        args.readme = str(results / "README.md")
        args.plot = args.plot or str(results / "rates.png")
    args.readme = args.readme or "results/llm-reliability/README.md"
    parts = _parts(args.dirs)
    rows = reliability_rows(parts)  # read once: the table and the figure
    new = "\n".join(reliability_section(parts, rows))
    readme = pathlib.Path(args.readme)
    text = readme.read_text(encoding="utf-8") if readme.is_file() else ""
    if START in text and END in text:
        head, rest = text.split(START, 1)
        old = START + rest.split(END, 1)[0] + END
        updated = head + new + rest.split(END, 1)[1]
    else:
        old, updated = None, text + ("\n" if text else "") + new + "\n"
    if args.check:
        same = old == new
        print("the table is the same, byte for byte" if same else "the table DIFFERS")
        if not same:
            print(new)
        return 0 if same else 1
    readme.write_text(updated, encoding="utf-8")
    if args.plot:
        rates_plot(list(rows.values()), pathlib.Path(args.plot), _caption(parts, rows, folder))
    print(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
