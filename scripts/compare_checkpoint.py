#!/usr/bin/env python3
"""Carries an unfinished `spark-jax compare` directory from one machine to the next.

    python scripts/compare_checkpoint.py save COMPARE_DIR CHECKPOINT_DIR
    python scripts/compare_checkpoint.py restore CHECKPOINT_DIR COMPARE_DIR
    python scripts/compare_checkpoint.py finish CHECKPOINT_DIR DATA_DIR
    python scripts/compare_checkpoint.py begin COMPARE_DIR

A comparison that needs more hours than one machine lives (results/compare-offline: about 8
hours on a 2-core VM) is committed part-done as a checkpoint and resumed elsewhere, where
`spark-jax compare` keeps the finished searches, resumes the unfinished ones from their
databases and starts the missing ones.

`save` writes into CHECKPOINT_DIR: compare.json, the result cache (eval-cache/), and for each
search METHOD/seed-S/ its run.db (a consistent snapshot, taken through SQLite's backup even
while the search writes, so it resumes as after a kill -9 at that moment; rollback journal,
so no -wal file is committed), the rest of its run directory (not its lock), and
METHOD/seed-S.yaml and .log beside it. Each run directory is written beside its place and
renamed into it, so an interrupted save leaves the last whole copy. A search is not copied when
its checkpoint copy has finished or is further along (finished with a final test on fresh
seeds where this one's reused the search's, then more attempts or evaluations), nor
while its seed program's first training is still in flight (nothing to keep: it starts
again). It also records this machine's part in segments.json (host, machine fingerprint
(`labels.machine_fingerprint`: tells apart two VMs with one host name and CPU), commit,
start and last save, the compare log), one entry per segment.json beside COMPARE_DIR, which `begin` or
`restore` starts.

`restore` copies into COMPARE_DIR every search of the checkpoint that is further along than
this machine's copy (or that it lacks), whole, the same way, and the result cache's missing
entries. A run directory's config.yaml names its seed program by the absolute path of the
checkout it started in; where that path cannot be read here, it is pointed at the plan's seed
program as this checkout resolves it (the search itself refuses to resume unless the text is
the seed it started from). The compare directory's xla-cache is never carried: it is per
machine.

`finish`, once the comparison has finished and been copied to DATA_DIR (scripts/compare_copy.py
and run.json), copies segments.json there, writes into run.json a `wall_note` that says the
comparison ran in parts (their spans added up, and the last invocation's wall time), and
deletes CHECKPOINT_DIR and DATA_DIR/segment.json (the finishing machine's part, which tells its
own saves from the earlier machines'). A comparison that ran in one part gets neither file nor
note.

`begin` starts this machine's part, where no checkpoint is restored.

Standard library, PyYAML and spark_jax's config and labels (used by
scripts/results/compare-offline.sh).
"""

from __future__ import annotations

import calendar
import contextlib
import json
import pathlib
import shutil
import sqlite3
import subprocess
import sys
import time
from typing import NamedTuple

import yaml

from spark_jax.util.labels import machine_fingerprint, machine_label

ROOT = pathlib.Path(__file__).resolve().parent.parent
PLAN, CACHE, SEGMENTS, SEGMENT = "compare.json", "eval-cache", "segments.json", "segment.json"
SKIPPED = {"lock", "run.db", "run.db-wal", "run.db-shm", "run.db-journal"}


class CheckpointError(Exception):
    """A directory that is not what the verb needs; the message names it."""


class Progress(NamedTuple):
    """How far one search got, read from its run database."""

    finished: bool  # it records `finished_at`
    fresh_final: bool  # its final test trained on fresh seeds (records `train_seeds`)
    attempts: int  # proposal attempts made
    evaluations: int  # evaluations landed, its seed's included
    seeded: bool  # its seed program's evaluation has landed

    def further_than(self, other: Progress) -> bool:
        """Finished where `other` is not, else a final test on fresh seeds where `other`'s
        reused the search's (scored again by a resume), else more attempts, else more
        evaluations."""
        return self[:4] > other[:4]


def _progress(db_path: pathlib.Path) -> Progress | None:
    """None when there is no readable run database."""
    if not db_path.is_file():
        return None
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        done = db.execute("SELECT value FROM run_meta WHERE key = 'finished_at'").fetchone()
        final = db.execute("SELECT value FROM run_meta WHERE key = 'final_test'").fetchone()
        attempts = db.execute("SELECT count(*) FROM proposals").fetchone()[0]
        evaluations, seeded = db.execute(
            "SELECT count(*), count(*) - count(proposal_attempt) FROM evaluations"
        ).fetchone()
    except sqlite3.Error:
        return None
    finally:
        db.close()
    finished = done is not None and json.loads(done[0]) is not None
    fresh = final is not None and "train_seeds" in (json.loads(final[0]) or {})
    return Progress(finished, fresh, attempts, evaluations, seeded > 0)


def _state(progress: Progress) -> str:
    return "finished" if progress.finished else f"part-done ({progress.attempts} attempts)"


def _old(dest: pathlib.Path) -> pathlib.Path:
    return dest.with_name(f".{dest.name}.old")


def _recover(dest: pathlib.Path) -> None:
    """Puts back a run directory that `_swap_in` had moved aside when it was interrupted."""
    if _old(dest).exists() and not dest.exists():
        _old(dest).rename(dest)


def _swap_in(tmp: pathlib.Path, dest: pathlib.Path) -> None:
    """Replaces `dest` by the fully written `tmp` (renames: an interrupted copy never stands in
    for a run directory, and `_recover` puts back one moved aside)."""
    _recover(dest)
    old = _old(dest)
    shutil.rmtree(old, ignore_errors=True)
    if dest.exists():
        dest.rename(old)
    tmp.rename(dest)
    shutil.rmtree(old, ignore_errors=True)


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


def _copy_cache(src: pathlib.Path, dest: pathlib.Path) -> None:
    """Copies the result-cache entries `dest` lacks (not the cache's temporary files, which
    start with a dot and may be renamed while this runs)."""
    for path in sorted(p for p in src.glob("[!.]*") if p.is_file()) if src.is_dir() else []:
        target = dest / path.name
        if not target.exists():
            dest.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileNotFoundError):
                shutil.copy2(path, target)


def _copy_sides(run: pathlib.Path, dest_parent: pathlib.Path) -> None:
    """Copies what stands beside a run directory, METHOD/seed-S.yaml and .log, to `dest_parent`."""
    for suffix in (".yaml", ".log"):
        side = run.parent / f"{run.name}{suffix}"
        if side.is_file():
            shutil.copy2(side, dest_parent / side.name)


def _commit() -> str:
    done = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return done.stdout.strip() or "unknown"


def _utc(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def _epoch(stamp: str) -> float:
    """The inverse of _utc."""
    return calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))


def segment_of(compare_dir: pathlib.Path) -> dict:
    """This machine's part of the comparison (segment.json beside COMPARE_DIR, where
    scripts/controls_offline.sh keeps its log and copies both to DATA_DIR), started if new."""
    path = compare_dir.parent / SEGMENT
    if path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))
    segment = {
        "host": machine_label(),  # names the machine's fingerprint too
        "fingerprint": machine_fingerprint(),
        "commit": _commit(),
        "started_utc": _utc(time.time()),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(segment, indent=1) + "\n", encoding="utf-8")
    return segment


def _same_plan(compare_dir: pathlib.Path, checkpoint: pathlib.Path) -> None:
    """Raises unless both hold the same comparison (or one holds none yet)."""
    ours, theirs = compare_dir / PLAN, checkpoint / PLAN
    if ours.is_file() and theirs.is_file() and ours.read_bytes() != theirs.read_bytes():
        raise CheckpointError(
            f"{compare_dir} holds a different comparison than {checkpoint} ({PLAN} differs)"
        )


def save(compare_dir: pathlib.Path, checkpoint: pathlib.Path) -> list[tuple[str, bool]]:
    """Copies `compare_dir`'s state into `checkpoint`; returns a line per search it copied or
    left, each with whether it was copied."""
    if not (compare_dir / PLAN).is_file():
        raise CheckpointError(f"{compare_dir}: no {PLAN} (not a comparison directory)")
    _same_plan(compare_dir, checkpoint)
    checkpoint.mkdir(parents=True, exist_ok=True)
    shutil.copy2(compare_dir / PLAN, checkpoint / PLAN)
    lines = []
    for run in _runs(compare_dir):
        rel = run.relative_to(compare_dir)
        _recover(checkpoint / rel)
        live, kept = _progress(run / "run.db"), _progress(checkpoint / rel / "run.db")
        if live is None or not live.seeded:  # nothing but its seed's training, in flight
            if live is not None:
                lines.append((f"{rel}: not kept (its seed program is still training)", False))
            continue
        behind = kept is not None and kept.further_than(live)
        if behind or (kept is not None and kept.finished and not live.further_than(kept)):
            if behind:
                lines.append((f"{rel}: the checkpoint's copy is further along; kept", False))
            continue
        tmp = checkpoint / rel.parent / f".{run.name}.saving"
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            shutil.copytree(run, tmp, ignore=shutil.ignore_patterns(*SKIPPED, ".*.tmp"))
        except shutil.Error as e:  # a file the search replaced while it was copied
            shutil.rmtree(tmp, ignore_errors=True)
            lines.append(
                (f"{rel}: not saved this time (changed while copied: {e.args[0][0][2]})", False)
            )
            continue
        _snapshot(run / "run.db", tmp / "run.db")
        _swap_in(tmp, checkpoint / rel)
        _copy_sides(run, checkpoint / rel.parent)
        lines.append((f"{rel}: {_state(_progress(checkpoint / rel / 'run.db'))}", True))
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


def _seed_program_here(checkpoint: pathlib.Path) -> str:
    """The plan's seed program as `spark-jax compare` resolves it here (from the working
    directory, as scripts/results/ run it: the checkout's root)."""
    from spark_jax.config import search as search_config

    plan = json.loads((checkpoint / PLAN).read_text(encoding="utf-8"))
    return search_config.from_dict(plan["base"]).seed_program


def restore(checkpoint: pathlib.Path, compare_dir: pathlib.Path) -> list[tuple[str, bool]]:
    """Copies into `compare_dir` every search of `checkpoint` further along than its own; a
    line per search it copied or left, each with whether it was copied."""
    if not (checkpoint / PLAN).is_file():
        raise CheckpointError(f"{checkpoint}: no {PLAN} (not a comparison checkpoint)")
    _same_plan(compare_dir, checkpoint)
    compare_dir.mkdir(parents=True, exist_ok=True)
    if not (compare_dir / PLAN).is_file():
        shutil.copy2(checkpoint / PLAN, compare_dir / PLAN)
    lines = []
    for run in _runs(checkpoint):
        rel = run.relative_to(checkpoint)
        dest = compare_dir / rel
        _recover(dest)
        saved, local = _progress(run / "run.db"), _progress(dest / "run.db")
        if saved is None or not saved.seeded:  # saved before its seed trained: starts again
            continue
        if local is not None and not saved.further_than(local):
            lines.append((f"{rel}: this machine's copy is as far along; kept", False))
            continue
        tmp = dest.parent / f".{dest.name}.restoring"
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(run, tmp)
        config_path = tmp / "config.yaml"
        if config_path.is_file():
            config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
            if not pathlib.Path(str(config.get("seed_program"))).is_file():
                config["seed_program"] = _seed_program_here(checkpoint)
                config_path.write_text(yaml.safe_dump(config, sort_keys=False), "utf-8")
        _swap_in(tmp, dest)
        _copy_sides(run, dest.parent)
        lines.append((f"{rel}: {_state(saved)}", True))
    _copy_cache(checkpoint / CACHE, compare_dir / CACHE)
    segment_of(compare_dir)
    return lines


def _own_part(segments: list[dict], meta: dict) -> dict:
    """The finishing machine's saved part when its segment.json did not reach DATA_DIR (a
    comparison started by an older scripts/controls_offline.sh): the last one saved from the
    same host and commit before the end, if any."""
    own = [
        s
        for s in segments
        if (s.get("host"), s.get("commit")) == (meta["host"], meta["commit"])
        and s.get("started_utc", "") <= meta["date_utc"]
    ]
    return max(own, key=lambda s: s["started_utc"]) if own else {}


def wall_note(parts: list[dict]) -> str:
    """What run.json says of a comparison's wall time when it ran in `parts` (the last one
    ended, with its wall_seconds): their number and their spans added up, each earlier part
    from its start to its last save (work after that save was done again)."""
    earlier = sum(_epoch(p["saved_utc"]) - _epoch(p["started_utc"]) for p in parts[:-1])
    total = (earlier + parts[-1]["wall_seconds"]) / 3600
    return (
        f"in {len(parts)} parts, each resumed from the last one's committed checkpoint "
        f"(data/{SEGMENTS}: each part's host, commit, start and last save), {total:.1f} h "
        f"together; the last part {parts[-1]['wall_seconds'] / 60:.1f} min"
    )


def finish(checkpoint: pathlib.Path, data: pathlib.Path) -> list[tuple[str, bool]]:
    """Carries the parts' record into a finished comparison's DATA_DIR; drops the checkpoint."""
    meta_path = data / "run.json"
    if not meta_path.is_file():
        raise CheckpointError(f"{data}: no run.json (the comparison is not copied there yet)")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    segments_path = checkpoint / SEGMENTS
    segments = json.loads(segments_path.read_text("utf-8")) if segments_path.is_file() else []
    last_path = data / SEGMENT  # the last part's segment.json, copied with the log
    last = json.loads(last_path.read_text("utf-8")) if last_path.is_file() else None
    last = last if last is not None else _own_part(segments, meta)
    earlier = [s for s in segments if s.get("started_utc") != last.get("started_utc")]
    last_path.unlink(missing_ok=True)
    if earlier:
        ended = {**last, "host": meta["host"], "commit": meta["commit"]}
        ended.update(ended_utc=meta["date_utc"], wall_seconds=meta["wall_seconds"])
        parts = [*earlier, ended]
        (data / SEGMENTS).write_text(json.dumps(parts, indent=1) + "\n", encoding="utf-8")
        meta["wall_note"] = wall_note(parts)
        meta_path.write_text(json.dumps(meta) + "\n", encoding="utf-8")
    shutil.rmtree(checkpoint, ignore_errors=True)
    if not earlier:
        return []
    return [(f"{len(earlier)} earlier part(s) recorded in {data / SEGMENTS}", False)]


def begin(compare_dir: pathlib.Path) -> list[tuple[str, bool]]:
    """Starts this machine's part (segment.json), if it has not started."""
    segment = segment_of(compare_dir)
    return [(f"this part started {segment['started_utc']} on {segment['host']}", False)]


VERBS = {"save": save, "restore": restore, "finish": finish, "begin": begin}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in VERBS or len(argv) != (2 if argv[0] == "begin" else 3):
        sys.exit(__doc__.split("\n\n")[1].strip())
    verb, paths = argv[0], [pathlib.Path(a) for a in argv[1:]]
    src, dest = paths[0], paths[-1]
    try:
        lines = VERBS[verb](*paths)
    except (CheckpointError, OSError, sqlite3.Error, yaml.YAMLError) as e:
        sys.exit(f"compare_checkpoint {verb}: {e}")
    for line, _ in lines:
        print(f"{verb}: {line}")
    if verb in ("save", "restore"):
        copied = sum(copied for _, copied in lines)
        print(f"{verb}: {copied} search(es) copied from {src} to {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
