#!/usr/bin/env python3
"""Carries an unfinished `spark-jax compare` directory from one machine to the next.

    python scripts/compare_checkpoint.py save COMPARE_DIR CHECKPOINT_DIR
    python scripts/compare_checkpoint.py restore CHECKPOINT_DIR COMPARE_DIR
    python scripts/compare_checkpoint.py finish CHECKPOINT_DIR DATA_DIR

A comparison that needs more hours than one machine lives (results/compare-offline: about 8
hours on a 2-core VM) is committed part-done as a checkpoint and resumed elsewhere, where
`spark-jax compare` finishes the finished searches never, resumes the unfinished ones from
their databases and starts the missing ones.

`save` writes into CHECKPOINT_DIR: compare.json, the result cache (eval-cache/: the seed's
training, shared by every method of a seed), and for each search METHOD/seed-S/ its run.db
(a consistent snapshot, taken through SQLite's backup even while the search writes, so it
resumes as after a kill -9 at that moment; rollback journal, so no -wal file is committed),
the rest of its run directory (not its lock), and METHOD/seed-S.yaml and .log beside
it. A search whose checkpoint copy has already finished is not copied again. It also records
this machine's part in segments.json (host, commit, start and last save, the compare log), one
entry per segment.json beside COMPARE_DIR, which `restore` writes.

`restore` copies every search COMPARE_DIR lacks back into it, and the result cache's missing
entries. A run directory's config.yaml names its seed program by the absolute path of the
checkout it started in; where that path cannot be read here, it is pointed at the plan's seed
program in this checkout (the search itself refuses to resume unless the text is the seed it
started from). The compare directory's xla-cache is never carried: it is per machine.

`finish`, once the comparison has finished and been copied to DATA_DIR (scripts/compare_copy.py
and run.json), copies segments.json there, writes into run.json a `wall_note` that says the
comparison ran in parts (the last invocation's wall time beside it), and deletes CHECKPOINT_DIR.

Standard library and PyYAML only (used by scripts/results/compare-offline.sh).
"""

from __future__ import annotations

import json
import os
import pathlib
import platform
import shutil
import sqlite3
import subprocess
import sys
import time

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
PLAN, CACHE, SEGMENTS, SEGMENT = "compare.json", "eval-cache", "segments.json", "segment.json"
SKIPPED = {"lock", "run.db", "run.db-wal", "run.db-shm", "run.db-journal"}


class CheckpointError(Exception):
    """A directory that is not what the verb needs; the message names it."""


def _finished(db_path: pathlib.Path) -> bool:
    """True when the run database records `finished_at` (as spark_jax.search.RunDB does)."""
    if not db_path.is_file():
        return False
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        row = db.execute("SELECT value FROM run_meta WHERE key = 'finished_at'").fetchone()
    except sqlite3.Error:
        return False
    finally:
        db.close()
    return row is not None and json.loads(row[0]) is not None


def _snapshot(src: pathlib.Path, dest: pathlib.Path) -> None:
    """A consistent copy of a (possibly live, WAL-mode) SQLite file, as one rollback-journal
    file. Written beside `dest` and renamed, so an interrupted save leaves the old copy."""
    tmp = dest.with_name(f".{dest.name}.tmp")
    tmp.unlink(missing_ok=True)
    source, out = sqlite3.connect(f"file:{src}?mode=ro", uri=True), sqlite3.connect(tmp)
    try:
        source.backup(out)
        out.execute("PRAGMA journal_mode=DELETE")
    finally:
        out.close()
        source.close()
    tmp.replace(dest)


def _runs(compare_dir: pathlib.Path) -> list[pathlib.Path]:
    return sorted(p for p in compare_dir.glob("*/seed-*") if p.is_dir() and p.name[5:].isdigit())


def _copy_cache(src: pathlib.Path, dest: pathlib.Path) -> int:
    """Copies the result-cache entries `dest` lacks; returns how many."""
    copied = 0
    for path in sorted(p for p in src.rglob("*") if p.is_file()) if src.is_dir() else []:
        target = dest / path.relative_to(src)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)
            copied += 1
    return copied


def _commit() -> str:
    done = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return done.stdout.strip() or "unknown"


def _utc(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def segment_of(compare_dir: pathlib.Path) -> dict:
    """This machine's part of the comparison (segment.json beside COMPARE_DIR, where
    scripts/controls_offline.sh keeps its log and copies both to DATA_DIR), started if new."""
    path = compare_dir.parent / SEGMENT
    if path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))
    segment = {
        "host": f"{platform.node()} ({platform.machine()}, {os.cpu_count()} CPUs)",
        "commit": _commit(),
        "started_utc": _utc(time.time()),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(segment, indent=1) + "\n", encoding="utf-8")
    return segment


def save(compare_dir: pathlib.Path, checkpoint: pathlib.Path) -> list[str]:
    """Copies `compare_dir`'s state into `checkpoint`; returns one line per search copied."""
    if not (compare_dir / PLAN).is_file():
        raise CheckpointError(f"{compare_dir}: no {PLAN} (not a comparison directory)")
    checkpoint.mkdir(parents=True, exist_ok=True)
    shutil.copy2(compare_dir / PLAN, checkpoint / PLAN)
    lines = []
    for run in _runs(compare_dir):
        if not (run / "run.db").is_file():
            continue  # started and killed before its database existed: nothing to keep
        rel = run.relative_to(compare_dir)
        dest = checkpoint / rel
        if _finished(dest / "run.db"):
            continue
        ignore = shutil.ignore_patterns(*SKIPPED, ".*.tmp")
        shutil.copytree(run, dest, ignore=ignore, dirs_exist_ok=True)  # best/, report.md ...
        _snapshot(run / "run.db", dest / "run.db")
        for suffix in (".yaml", ".log"):
            side = run.parent / f"{run.name}{suffix}"
            if side.is_file():
                shutil.copy2(side, dest.parent / side.name)
        lines.append(f"{rel}: {'finished' if _finished(dest / 'run.db') else 'part-done'}")
    _copy_cache(compare_dir / CACHE, checkpoint / CACHE)
    segments_path = checkpoint / SEGMENTS
    segments = json.loads(segments_path.read_text("utf-8")) if segments_path.is_file() else []
    segment = {**segment_of(compare_dir), "saved_utc": _utc(time.time())}
    log = compare_dir.parent / "log.txt"  # scripts/controls_offline.sh's log of the compare
    if log.is_file():
        segment["log"] = log.read_text(encoding="utf-8", errors="replace").splitlines()
    segments = [s for s in segments if s.get("started_utc") != segment["started_utc"]]
    segments_path.write_text(json.dumps([*segments, segment], indent=1) + "\n", "utf-8")
    return lines


def _seed_program_here(checkpoint: pathlib.Path) -> pathlib.Path:
    plan = json.loads((checkpoint / PLAN).read_text(encoding="utf-8"))
    return (ROOT / plan["base"]["seed_program"]).resolve()


def restore(checkpoint: pathlib.Path, compare_dir: pathlib.Path) -> list[str]:
    """Copies into `compare_dir` every search of `checkpoint` it lacks; one line each."""
    if not (checkpoint / PLAN).is_file():
        raise CheckpointError(f"{checkpoint}: no {PLAN} (not a comparison checkpoint)")
    compare_dir.mkdir(parents=True, exist_ok=True)
    if (compare_dir / PLAN).is_file():
        if (compare_dir / PLAN).read_bytes() != (checkpoint / PLAN).read_bytes():
            raise CheckpointError(
                f"{compare_dir} holds a different comparison than {checkpoint} ({PLAN} differs)"
            )
    else:
        shutil.copy2(checkpoint / PLAN, compare_dir / PLAN)
    lines = []
    for run in _runs(checkpoint):
        rel = run.relative_to(checkpoint)
        dest = compare_dir / rel
        if (dest / "run.db").is_file():
            continue  # this machine's own copy is at least as new
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(run, dest)
        for suffix in (".yaml", ".log"):
            side = run.parent / f"{run.name}{suffix}"
            if side.is_file():
                shutil.copy2(side, dest.parent / side.name)
        config_path = dest / "config.yaml"
        if config_path.is_file():
            config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
            if not pathlib.Path(str(config.get("seed_program"))).is_file():
                config["seed_program"] = str(_seed_program_here(checkpoint))
                config_path.write_text(yaml.safe_dump(config, sort_keys=False), "utf-8")
        lines.append(f"{rel}: {'finished' if _finished(dest / 'run.db') else 'part-done'}")
    _copy_cache(checkpoint / CACHE, compare_dir / CACHE)
    segment_of(compare_dir)
    return lines


def finish(checkpoint: pathlib.Path, data: pathlib.Path) -> list[str]:
    """Carries the parts' record into a finished comparison's DATA_DIR; drops the checkpoint."""
    meta_path = data / "run.json"
    if not meta_path.is_file():
        raise CheckpointError(f"{data}: no run.json (the comparison is not copied there yet)")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    segments_path = checkpoint / SEGMENTS
    segments = json.loads(segments_path.read_text("utf-8")) if segments_path.is_file() else []
    last_path = data / SEGMENT  # the last part's segment.json, copied with the log
    last = json.loads(last_path.read_text("utf-8")) if last_path.is_file() else {}
    earlier = [s for s in segments if s.get("started_utc") != last.get("started_utc")]
    last_path.unlink(missing_ok=True)
    if earlier:
        ended = {**last, "host": meta["host"], "commit": meta["commit"]}
        ended.update(ended_utc=meta["date_utc"], wall_seconds=meta["wall_seconds"])
        parts = [*earlier, ended]
        (data / SEGMENTS).write_text(json.dumps(parts, indent=1) + "\n", encoding="utf-8")
        meta["wall_note"] = (
            f"in {len(parts)} parts, each resumed from the last one's committed checkpoint "
            f"(data/{SEGMENTS}: each part's host and commit); the last part "
            f"{meta['wall_seconds'] / 60:.1f} min"
        )
        meta_path.write_text(json.dumps(meta) + "\n", encoding="utf-8")
    shutil.rmtree(checkpoint, ignore_errors=True)
    return [f"{len(earlier)} earlier part(s) recorded in {data / SEGMENTS}"] if earlier else []


VERBS = {"save": save, "restore": restore, "finish": finish}


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[0] not in VERBS:
        sys.exit(__doc__.split("\n\n")[1].strip())
    verb, src, dest = argv[0], pathlib.Path(argv[1]), pathlib.Path(argv[2])
    try:
        lines = VERBS[verb](src, dest)
    except (CheckpointError, OSError, sqlite3.Error, yaml.YAMLError) as e:
        sys.exit(f"compare_checkpoint {verb}: {e}")
    for line in lines:
        print(f"{verb}: {line}")
    if verb != "finish":
        print(f"{verb}: {len(lines)} search(es) from {src} to {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
