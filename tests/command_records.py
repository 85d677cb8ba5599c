"""What a benchmark and a comparison on the tiny preset store, as plain data to compare across
code changes (issue 52: "a search, a benchmark and a comparison on `tiny` give the same records
before and after"; the search's side is `pipeline_records.py`).

Each scenario runs the command line (`python -m spark_jax.cli ...`, the interface both sides of
a change share) in a fresh folder and dumps what it stored: every table of the benchmark's
`benchmark.db`, every search's `run.db` of the comparison and its `compare.json`, cleaned of
what differs between two runs on purpose (timestamps, durations, the machine, the folder;
`pipeline_records`' rules). Training is real, so the dumps hold this machine's floating point:
compare two checkouts on one machine, never against a file written elsewhere.

    PYTHONPATH=CHECKOUT python tests/command_records.py OUT [NAME ...]

writes OUT/NAME.json for each scenario (all by default), running CHECKOUT's code;
`python tests/command_records.py --digests DIR COMMIT OUT.json` keeps DIR's dumps as per-table
digests (`pipeline_records.digests`) with the commit and this machine: what
results/restructure-records commits (scripts/results/restructure-records.sh).
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tempfile
from typing import Any, Callable

import pipeline_records  # tests/pipeline_records.py: the cleaning rules

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _cli(*argv: str) -> None:
    """Runs `spark-jax ARGV` with this interpreter and the caller's PYTHONPATH."""
    cmd = [sys.executable, "-m", "spark_jax.cli", *argv]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=dict(os.environ))


def _benchmark_tiny(folder: pathlib.Path) -> dict[str, Any]:
    """Two seed processors x bfs, dfs x 2 seeds on tiny, one local worker."""
    out = folder / "bench"
    programs = [str(ROOT / "processors" / p) for p in ("mpnn.py", "triplet_gmpnn.py")]
    _cli(
        "benchmark", *programs, "--tasks", "bfs,dfs", "--seeds", "2", "--preset", "tiny",
        "--baseline", "mpnn", "--workers", "1", "--out", str(out), "--quiet",
    )  # fmt: skip
    return {"benchmark.db": pipeline_records.dump_db(out / "benchmark.db", folder)}


def _compare_tiny(folder: pathlib.Path) -> dict[str, Any]:
    """SPARK and OpenEvolve (offline editor), one search seed each, on configs/tiny.yaml."""
    out = folder / "cmp"
    _cli(
        "compare", "--methods", "spark,openevolve", "--seeds", "1",
        "--config", str(ROOT / "configs" / "tiny.yaml"), "--budget", "2", "--max-attempts", "3",
        "--out", str(out),
    )  # fmt: skip
    dumped: dict[str, Any] = {}
    for db in sorted(out.glob("*/seed-*/run.db")):
        dumped[str(db.parent.relative_to(out))] = pipeline_records.dump(db.parent)
    summary = json.loads((out / "compare.json").read_text(encoding="utf-8"))
    dumped["compare.json"] = pipeline_records._clean(summary, str(folder))
    return dumped


SCENARIOS: dict[str, Callable[[pathlib.Path], dict[str, Any]]] = {
    "benchmark_tiny": _benchmark_tiny,
    "compare_tiny": _compare_tiny,
}


def _tables_of_rows(part: dict[str, Any]) -> bool:
    return all(isinstance(rows, list) for rows in part.values())


def _value(row: dict[str, Any]) -> Any:
    """A key/value row's value; run_meta keeps JSON text, benchmark meta the decoded value."""
    value = row["value"]
    try:
        return json.loads(value) if isinstance(value, str) else value
    except ValueError:
        return value


def settings(dumped: dict[str, Any]) -> dict[str, list[str]]:
    """The presets and editor kinds a scenario's stored records name: a benchmark's spec (its
    `meta` table) and each search's run_meta."""
    found: dict[str, set[str]] = {"preset": set(), "editor": set()}
    for tables in dumped.values():
        for row in tables.get("meta", []) if isinstance(tables, dict) else []:
            if row["key"] == "spec":
                found["preset"].add(str(_value(row)["preset"]))
        for row in tables.get("run_meta", []) if isinstance(tables, dict) else []:
            if row["key"] in found:
                found[row["key"]].add(str(_value(row)))
    return {key: sorted(values) for key, values in found.items() if values}


def digest_file(dumps: pathlib.Path, commit: str, out: pathlib.Path) -> None:
    """Writes OUT: {commit, machine, settings: {name: {preset, editor}}, scenarios: {name:
    {part: per-table digests}}}."""
    from spark_jax.util import labels

    scenarios, named = {}, {}
    for path in sorted(dumps.glob("*.json")):
        dumped = json.loads(path.read_text(encoding="utf-8"))
        named[path.stem] = settings(dumped)
        scenarios[path.stem] = {
            # a part that is one record (compare.json), not tables of rows: one table of it
            part: pipeline_records.digests(t if _tables_of_rows(t) else {"record": [t]})
            for part, t in dumped.items()
        }
    record = dict(
        commit=commit, machine=labels.machine_label(), settings=named, scenarios=scenarios
    )
    out.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def main(argv: list[str]) -> int:
    if argv[:1] == ["--digests"]:
        digest_file(pathlib.Path(argv[1]), argv[2], pathlib.Path(argv[3]))
        return 0
    out = pathlib.Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    for name in argv[1:] or list(SCENARIOS):
        with tempfile.TemporaryDirectory() as tmp:
            dumped = SCENARIOS[name](pathlib.Path(tmp))
        text = json.dumps(dumped, indent=1, sort_keys=True, default=str)
        (out / f"{name}.json").write_text(text + "\n", encoding="utf-8")
        print(name, "written", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
