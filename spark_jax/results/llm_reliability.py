"""results/llm-reliability's table and figure, from its proposal-only comparisons: one table over
every method of the comparisons (`spark_jax.compare.reliability.reliability_section`: valid
and entanglement rates with Wilson intervals, failure types, tokens and latency per attempt,
Fisher's exact test of spark vs openevolve) between the README's generated-table markers (appended
when it has none), and each method's valid and cross-factor rates with their Wilson intervals
drawn to a PNG (`spark_jax.report.reliability.rates_plot`). `check` changes nothing and says
whether the README's part differs: what a replay uses to show it is bit-for-bit.

`harness_cost` is the dry run's per-attempt cost of the harness itself (no model time).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics

import yaml

from spark_jax.compare.reliability import END, START, reliability_rows, reliability_section
from spark_jax.compare.runner import PLAN_FILE, ComparePlan
from spark_jax.report.reliability import rates_plot
from spark_jax.search.rundb import RunDB
from spark_jax.util import markdown

DEFAULT_README = "results/llm-reliability/README.md"


def comparisons(dirs: list[str]) -> list[tuple[str, ComparePlan]]:
    """(directory, plan) of each proposal-only comparison; SystemExit on any other."""
    parts = []
    for d in dirs:
        plan_path = pathlib.Path(d) / PLAN_FILE
        if not plan_path.is_file():
            raise SystemExit(f"{d}: no {PLAN_FILE} (not a comparison directory)")
        plan = ComparePlan.from_dict(json.loads(plan_path.read_text(encoding="utf-8")))
        if not plan.proposal_only:
            raise SystemExit(f"{d}: not a proposal-only comparison")
        parts.append((d, plan))
    return parts


def _answerers(results: pathlib.Path | None) -> str | None:
    """What answered, from the folder's answerers.yaml (`results.llm_account`): the agents,
    what they were, and that the LLM is not recorded; None without the file."""
    path = results / "answerers.yaml" if results else None
    if path is None or not path.is_file():
        return None
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


def regenerate(
    dirs: list[str],
    readme: pathlib.Path,
    check: bool = False,
    plot: pathlib.Path | None = None,
    folder: pathlib.Path | None = None,
) -> tuple[str, bool]:
    """The README's table part from the comparisons `dirs`, and whether the README already
    holds it. Unless `check`, the README is rewritten and, with `plot`, the figure drawn
    (captioned with `folder`'s answerers where it has them)."""
    parts = comparisons(dirs)
    rows = reliability_rows(parts)  # read once: the table and the figure
    new = "\n".join(reliability_section(parts, rows))
    text = readme.read_text(encoding="utf-8") if readme.is_file() else ""
    if START in text and END in text:
        head, rest = text.split(START, 1)
        old = START + rest.split(END, 1)[0] + END
        updated = head + new + rest.split(END, 1)[1]
    else:
        old, updated = None, text + ("\n" if text else "") + new + "\n"
    if not check:
        readme.write_text(updated, encoding="utf-8")
        if plot:
            rates_plot(list(rows.values()), plot, _caption(parts, rows, folder))
    return new, old == new


def harness_cost(root: pathlib.Path) -> list[str]:
    """For each run under root/*/METHOD/seed-0: attempts, the feasibility check's own time per
    checked attempt (`total_s` of its report: median and max), and the run's wall time
    (database started_at to finished_at, the sandbox start included) minus the summed LLM
    latency, per attempt. With attempts in flight at once the LLM latencies overlap, so that
    last figure is a lower bound of the harness cost."""
    head = [
        "run", "attempts", "feasibility s / checked attempt: median (max)",
        "(wall - LLM latency) / attempt s",
    ]  # fmt: skip
    body = []
    for db in sorted(root.glob("*/*/seed-0/run.db")):
        with RunDB.open(db) as run:
            rows = run.proposals()
            wall = run.get_meta("finished_at") - run.get_meta("started_at")
        checks = [p.feasibility.total_seconds for p in rows if p.feasibility is not None]
        latency = sum(c.latency_s for p in rows for c in p.calls)
        check = f"{statistics.median(checks):.1f} ({max(checks):.1f})" if checks else "—"
        run_name = f"{db.parts[-4]}/{db.parts[-3]}"
        body.append([run_name, len(rows), check, f"{(wall - latency) / len(rows):.1f}"])
    return markdown.table(head, body)


def main(argv: list[str] | None = None) -> int:
    """`scripts/llm_reliability_table.py`'s command line (its docstring shows the forms)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+", metavar="COMPARE_DIR")
    ap.add_argument("--readme", default=None, help=f"default: {DEFAULT_README}")
    ap.add_argument("--check", action="store_true", help="compare only; exit 1 on a difference")
    ap.add_argument("--plot", default=None, help="also draw the rates figure to this PNG")
    ap.add_argument("--harness-cost", action="store_true", help="print the dry run's cost table")
    args = ap.parse_args(argv)
    if args.harness_cost:
        print("\n".join(harness_cost(pathlib.Path(args.dirs[0]))))
        return 0
    results, folder = pathlib.Path(args.dirs[0]), None
    if len(args.dirs) == 1 and (results / "record").is_dir() and args.readme is None:
        folder = results
        args.dirs = [str(results / "record" / "main"), str(results / "record" / "others")]
        args.readme = str(results / "README.md")
        args.plot = args.plot or str(results / "rates.png")
    readme = pathlib.Path(args.readme or DEFAULT_README)
    plot = pathlib.Path(args.plot) if args.plot else None
    new, same = regenerate(args.dirs, readme, args.check, plot, folder)
    if args.check:
        print("the table is the same, byte for byte" if same else "the table DIFFERS")
        if not same:
            print(new)
        return 0 if same else 1
    print(new)
    return 0
