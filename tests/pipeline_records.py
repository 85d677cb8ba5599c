"""What a search and a proposal-only run store, as plain data to compare across code changes.

`dump(run_dir)` reads every table of a run's database into sorted JSON-ready rows without what
differs between two runs of the same config and seed on purpose: timestamps, durations, the
machine, versions, the command and the run's folder. `SCENARIOS` are small runs on the tiny
preset (offline editor; `scripted_executor` scores a program by its hash instead of training
it, so a search's records do not depend on floating point). `python tests/pipeline_records.py
OUT [NAME ...]` runs them and writes OUT/NAME.json (to diff two checkouts' records);
`tests/test_pipeline_records.py` compares the fast ones' per-table digests (`digests`) with
tests/golden/pipeline_records.json.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import hashlib
import json
import pathlib
import sqlite3
import sys
import tempfile
from typing import Any, Callable

ROOT = pathlib.Path(__file__).resolve().parents[1]
TINY = ROOT / "configs" / "tiny.yaml"

# Keys whose values say when, how long, where or by what: not what the run found.
_DROPPED = {"at", "machine", "versions", "command", "worker", "timings", "total_s"}
_DROPPED |= {"peak_rss_mb", "device_peak_mb"}
_DROPPED_SUFFIXES = ("_at", "_seconds", "seconds", "latency_s", "_per_second", "n_devices")


def _dropped(key: str) -> bool:
    return key in _DROPPED or key.endswith(_DROPPED_SUFFIXES)


def _clean(value: Any, run_dir: str) -> Any:
    if isinstance(value, dict):
        return {k: _clean(v, run_dir) for k, v in value.items() if not _dropped(k)}
    if isinstance(value, list):
        return [_clean(v, run_dir) for v in value]
    if isinstance(value, str):
        if value[:1] in "[{":
            try:
                return _clean(json.loads(value), run_dir)
            except ValueError:
                pass
        return value.replace(run_dir, "<RUN_DIR>").replace(str(ROOT), "<ROOT>")
    return value


# Key -> value tables (a run's run_meta, a benchmark's meta): a dropped key's row goes.
_KEY_VALUE_TABLES = ("run_meta", "meta")


def dump_db(db: pathlib.Path, base: pathlib.Path) -> dict[str, Any]:
    """Every table of the SQLite file `db`: rows ordered by their key, cleaned (see module;
    `base`, the folder the run's paths are written relative to)."""
    conn = sqlite3.connect(str(db))
    conn.row_factory = sqlite3.Row
    out: dict[str, Any] = {}
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in sorted(tables):
            rows = [dict(r) for r in conn.execute(f"SELECT * FROM {table} ORDER BY 1")]
            if table in _KEY_VALUE_TABLES:
                rows = [r for r in rows if not _dropped(r["key"])]
            out[table] = _clean(rows, str(base))
    finally:
        conn.close()
    out.pop("schema_version", None)  # one row: the version and when it was made
    return out


def dump(run_dir: pathlib.Path) -> dict[str, Any]:
    """Every table of `run_dir`'s run.db (`dump_db`)."""
    return dump_db(run_dir / "run.db", run_dir.parent)


class ScriptedExecutor:
    """Scores a program by the hash of its source, at once (no training)."""

    capacity = 1

    def submit(self, job):
        from spark_jax.families import Evaluation
        from spark_jax.jobs.contract import EvalResult

        h = int(hashlib.sha256(job.source.encode()).hexdigest(), 16)
        fields = {f.name: None for f in dataclasses.fields(Evaluation)}
        fields.update(task=job.task, preset="tiny", seed=job.seed, program=job.program_name)
        fields.update(program_sha256=str(h)[:16], macs=1000 + h % 5, macs_nodes=5, params=10)
        fields.update(score=0.3 + (h % 7) / 100, val_score=0.5 + (h % 3) / 100)
        fields.update(best_step=2, model_params=20, train_seconds=1.0, compile_seconds=1.0)
        fields.update(steps_per_second=1.0, final_loss=0.1, n_devices=1, init_seconds=0.0, steps=4)
        ev = Evaluation(**fields)
        future: concurrent.futures.Future = concurrent.futures.Future()
        future.set_result(EvalResult(job.job_id, True, ev, None, "", "scripted", 0.0))
        return future

    def shutdown(self, wait: bool = True):
        pass


def _pool(folder: pathlib.Path) -> pathlib.Path:
    """A two-program pool on dfs (the seed and a variant of it) with made-up evaluations."""
    from spark_jax.families import Evaluation

    seed = (ROOT / "processors" / "triplet_gmpnn.py").read_text(encoding="utf-8")
    (folder / "seed.py").write_text(seed, encoding="utf-8")
    (folder / "variant.py").write_text(seed + "\n# a variant\n", encoding="utf-8")
    fields = {f.name: None for f in dataclasses.fields(Evaluation)}
    fields.update(task="dfs", preset="tiny", seed=0, program="p", program_sha256="0")
    fields.update(macs=100, macs_nodes=5, params=1, best_step=0, model_params=1)
    fields.update(train_seconds=0.0, compile_seconds=0.0, steps_per_second=0.0, final_loss=0.0)
    fields.update(init_seconds=0.0, steps=0, n_devices=1)
    entries = []
    for name, score in (("seed", 0.3), ("variant", 0.4)):
        ev = Evaluation(**{**fields, "score": score, "val_score": score})
        entries.append(dict(name=name, file=f"{name}.py", evaluation=ev.to_dict()))
    entries[1].update(parent="seed", attempt=3, description="appends a comment")
    path = folder / "pool.json"
    path.write_text(json.dumps(dict(task="dfs", programs=entries)), encoding="utf-8")
    return path


def _search_scripted(folder: pathlib.Path) -> pathlib.Path:
    from spark_jax.config import search as search_config
    from spark_jax.search import loop

    cfg = dataclasses.replace(search_config.load(TINY), budget=6, max_attempts=9)
    loop.run_search(cfg, folder / "run", command=["x"], executor=ScriptedExecutor())
    return folder / "run"


def _search_trained(folder: pathlib.Path) -> pathlib.Path:
    from spark_jax.config import search as search_config
    from spark_jax.search import loop

    loop.run_search(search_config.load(TINY), folder / "run", command=["x"])
    return folder / "run"


def _proposal_only(mode: str) -> Callable[[pathlib.Path], pathlib.Path]:
    def run(folder: pathlib.Path) -> pathlib.Path:
        from spark_jax.config import search as search_config
        from spark_jax.search import loop

        cfg = search_config.from_dict(
            dict(
                task="dfs",
                preset="tiny",
                seed=1,
                operator={"mode": mode},
                seed_program=str(ROOT / "processors" / "triplet_gmpnn.py"),
                feasibility={"timeout_s": 300},
                editor={"kind": "offline"},
                max_attempts=6,
                proposal_only={"pool": str(_pool(folder)), "jobs": 2},
            )
        )
        loop.run_search(cfg, folder / "run", command=["x"])
        return folder / "run"

    return run


SCENARIOS: dict[str, Callable[[pathlib.Path], pathlib.Path]] = {
    "search_scripted": _search_scripted,
    "proposal_only_spark": _proposal_only("spark"),
    "proposal_only_openevolve": _proposal_only("openevolve"),
    "search_trained": _search_trained,  # trains: minutes, floating point of this machine
}


def digests(dumped: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per table of a dump: its row count and the sha256 of its rows as canonical JSON."""
    out = {}
    for table, rows in dumped.items():
        text = json.dumps(rows, sort_keys=True, default=str)
        out[table] = dict(rows=len(rows), sha256=hashlib.sha256(text.encode()).hexdigest())
    return out


def run_scenario(name: str) -> dict[str, Any]:
    """Runs scenario `name` in a fresh temporary folder; its run database, dumped."""
    with tempfile.TemporaryDirectory() as tmp:
        return dump(SCENARIOS[name](pathlib.Path(tmp)))


def main(argv: list[str]) -> None:
    out = pathlib.Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    for name in argv[1:] or list(SCENARIOS):
        text = json.dumps(run_scenario(name), indent=1, sort_keys=True, default=str)
        (out / f"{name}.json").write_text(text + "\n", encoding="utf-8")
        print(name, "written", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
