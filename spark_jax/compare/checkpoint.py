"""Carries an unfinished `spark-jax compare` directory from one machine to the next.

    carry("save", [COMPARE_DIR, CHECKPOINT_DIR])     # scripts/compare_checkpoint.py save ...
    carry("restore", [CHECKPOINT_DIR, COMPARE_DIR])
    carry("finish", [CHECKPOINT_DIR, DATA_DIR])
    carry("begin", [COMPARE_DIR])

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

`finish`, once the comparison has finished and been copied to DATA_DIR (`compare.export`
and run.json), copies segments.json there, writes into run.json a `wall_note` that says the
comparison ran in parts (their spans added up, and the last invocation's wall time), and
deletes CHECKPOINT_DIR and DATA_DIR/segment.json (the finishing machine's part, which tells its
own saves from the earlier machines'). A comparison that ran in one part gets neither file nor
note.

`begin` starts this machine's part, where no checkpoint is restored. The parts' records
(`segment.json`, `segments.json`, the wall note) are `checkpoint_parts`'s.

Used by scripts/results/compare-offline.sh and intensify.sh through
scripts/compare_checkpoint.py.
"""

from __future__ import annotations

import contextlib
import json
import pathlib
import shutil
import sqlite3
from typing import NamedTuple

import yaml

from spark_jax.compare.checkpoint_parts import (
    CheckpointError,
    begin,
    finish,
    record_saved_part,
    segment_of,
)

__all__ = ["VERBS", "CheckpointError", "Progress", "UsageError", "carry", "restore", "save"]

PLAN, CACHE = "compare.json", "eval-cache"
SKIPPED = {"lock", "run.db", "run.db-wal", "run.db-shm", "run.db-journal"}


class UsageError(CheckpointError):
    """An unknown verb, or the wrong number of directories for it."""


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
    record_saved_part(compare_dir, checkpoint)
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


VERBS = {"save": save, "restore": restore, "finish": finish, "begin": begin}
ARITY = {"save": 2, "restore": 2, "finish": 2, "begin": 1}  # how many directories each takes


def carry(verb: str, paths: list[pathlib.Path]) -> list[str]:
    """Runs `verb` on `paths` (as the command line names them); returns the lines to print:
    one per search it copied or left, then, for save and restore, how many it copied.

    Raises:
      UsageError: an unknown verb or the wrong number of paths.
      CheckpointError: (one line) a directory that is not what the verb needs, or a file
        that could not be read or written.
    """
    if verb not in VERBS or len(paths) != ARITY[verb]:
        raise UsageError(f"{verb} {' '.join(map(str, paths))}".strip())
    try:
        lines = VERBS[verb](*paths)
    except (OSError, sqlite3.Error, yaml.YAMLError) as e:
        raise CheckpointError(str(e)) from e
    out = [f"{verb}: {line}" for line, _ in lines]
    if verb in ("save", "restore"):
        copied = sum(copied for _, copied in lines)
        out.append(f"{verb}: {copied} search(es) copied from {paths[0]} to {paths[-1]}")
    return out
