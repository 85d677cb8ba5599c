#!/usr/bin/env python3
"""results/port-vs-official: our Flax Triplet-GMPNN against DeepMind's, on clrs10.

    python scripts/port_vs_official.py RESULTS_DIR [--merge PART.db ...]

`--merge` joins benchmark databases of the same programs, tasks and preset run with disjoint
seeds (a 3-seed run and a 2-seed run make a 5-seed benchmark: each seed's score is one draw,
and both programs trained that seed beside the same seeds; at smoke a seed's score is not
bit-identical to the same seed trained alone, see results/bench's identity check) into
RESULTS_DIR/benchmark.db. Then, from that database alone: `spark-jax benchmark`'s report.md,
results.csv and plot, and the README's generated block: the paired comparison (the project's
test per task, Holm over the tasks), each part's seeds and time, and the equal-function check
at equal parameters from RESULTS_DIR/equivalence.json (`scripts/port_equivalence.py`).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from pathlib import Path

from spark_jax.benchmark import tables
from spark_jax.benchmark.store import BenchmarkDB
from spark_jax.util import markdown
from spark_jax.util.files import replace_generated

START, END = "<!-- generated -->", "<!-- end generated -->"


def _part(path: Path) -> dict:
    with BenchmarkDB.open_readonly(path) as db:
        return dict(
            name=path.parent.name,
            spec=db.spec(),
            programs=[(p.key, p.label, p.source) for p in db.programs()],
            jobs=len(db.results()),
            device_seconds=db.wall_seconds(),
            running_seconds=db.running_seconds(),
        )


def merge(parts: list[Path], out: Path) -> None:
    """Writes `out` holding every part's results under one spec (the union of the seeds)."""
    if out.exists():
        raise SystemExit(f"{out} exists: remove it to merge again")
    infos = [_part(p) for p in parts]
    first = infos[0]
    seen: set[int] = set()
    for info in infos:
        for key in ("tasks", "preset", "baseline"):
            if info["spec"][key] != first["spec"][key]:
                raise SystemExit(f"{info['name']}: its {key} differs from {first['name']}'s")
        if info["programs"] != first["programs"]:
            raise SystemExit(f"{info['name']}: its programs differ from {first['name']}'s")
        if seen & set(info["spec"]["seeds"]):
            raise SystemExit(f"{info['name']}: seeds overlap another part's")
        seen |= set(info["spec"]["seeds"])
    spec = dict(first["spec"], seeds=sorted(seen))
    with BenchmarkDB.open_readonly(parts[0]) as db:
        programs = db.programs()
    with BenchmarkDB(out, create=True) as db:
        db.store_plan(spec, programs)
    conn = sqlite3.connect(out)
    for path in parts:
        conn.execute("ATTACH DATABASE ? AS part", (str(path),))
        conn.execute("INSERT INTO results SELECT * FROM part.results ORDER BY rowid")
        conn.commit()
        conn.execute("DETACH DATABASE part")
    summary = [
        {k: v for k, v in i.items() if k not in ("spec", "programs")}
        | {"seeds": i["spec"]["seeds"]}
        for i in infos
    ]
    conn.execute("INSERT INTO meta (key, value) VALUES ('parts', ?)", (json.dumps(summary),))
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()


def _parts_table(parts: list[dict]) -> list[str]:
    return markdown.table(
        ["part", "seeds", "jobs landed", "device time h", "wall time h"],
        [
            [p["name"], ", ".join(map(str, p["seeds"])), p["jobs"],
             f"{p['device_seconds'] / 3600:.2f}", f"{p['running_seconds'] / 3600:.2f}"]
            for p in parts
        ],
    )  # fmt: skip


def _equivalence_table(path: Path) -> list[str]:
    if not path.exists():
        return ["(no equivalence.json: run `python scripts/port_equivalence.py RESULTS_DIR`)"]
    data = json.loads(path.read_text())
    return [
        f"Preset `{data['preset']}`, data seed {data['data_seed']}, parameters of DeepMind's "
        f"model initialised with seed {data['init_seed']} and copied into the port; one "
        f"training batch per task; {data['machine']}.",
        "",
        *markdown.table(
            ["task", "loss, DeepMind's", "loss, port", "loss bit-identical",
             "max abs gradient difference", "gradient leaves"],
            [
                [r["task"], f"{r['loss_official']:.9g}", f"{r['loss_port']:.9g}",
                 "yes" if r["loss_official"] == r["loss_port"] else "no",
                 f"{r['max_abs_grad_diff']:.3g}", r["grad_leaves"]]
                for r in data["tasks"]
            ],
        ),
    ]  # fmt: skip


def render(results: Path) -> str:
    with BenchmarkDB.open_readonly(results / "benchmark.db") as db:
        report = tables.write_benchmark_report(db, results)
        parts = db.meta().get("parts") or []
    comparison = tables.comparison_section(report).strip()
    return "\n".join(
        [
            "### Paired comparison (from `report.md`)",
            "",
            comparison.split("\n", 1)[1].strip(),
            "",
            "### The runs merged here",
            "",
            *_parts_table(parts),
            "",
            "### Equal parameters, equal function (`equivalence.json`)",
            "",
            *_equivalence_table(results / "equivalence.json"),
        ]
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--merge", type=Path, nargs="+", metavar="PART_DB")
    args = parser.parse_args(argv)
    if args.merge:
        merge(args.merge, args.results / "benchmark.db")
    readme = args.results / "README.md"
    text = readme.read_text() if readme.exists() else f"{START}\n{END}\n"
    if START not in text or END not in text:
        print(f"{readme}: missing the {START} / {END} markers", file=sys.stderr)
        return 2
    readme.write_text(replace_generated(text, START, render(args.results), END))
    print(f"wrote {readme}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
