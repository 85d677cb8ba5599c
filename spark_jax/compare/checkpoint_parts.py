"""The parts of a comparison that ran on more than one machine: one record per part.

A part (segment) is one machine's stretch of a comparison: its host (with the machine's
fingerprint, `labels.machine_fingerprint`: it tells apart two VMs with one host name and CPU),
commit, start and last save, and the compare log. `segment.json` beside the compare directory
holds this machine's part (started by `begin` or `restore`, copied with the log to the results
folder's data/); a checkpoint's `segments.json` holds every saved part. `finish` turns them
into the finished comparison's `data/segments.json` and its run.json's `wall_note`.
"""

from __future__ import annotations

import calendar
import json
import pathlib
import shutil
import subprocess
import time

from spark_jax.util.labels import machine_fingerprint, machine_label

__all__ = [
    "SEGMENT",
    "SEGMENTS",
    "CheckpointError",
    "begin",
    "finish",
    "record_saved_part",
    "segment_of",
    "wall_note",
]

SEGMENTS, SEGMENT = "segments.json", "segment.json"
# The checkout this module runs from (its commit names a part; "unknown" outside a checkout).
CHECKOUT = pathlib.Path(__file__).resolve().parents[2]


class CheckpointError(Exception):
    """A directory that is not what the verb needs; the message names it."""


def _commit() -> str:
    done = subprocess.run(
        ["git", "-C", str(CHECKOUT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    return done.stdout.strip() or "unknown"


def _utc(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def _epoch(stamp: str) -> float:
    """The inverse of _utc."""
    return calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))


def _read_list(path: pathlib.Path) -> list[dict]:
    return json.loads(path.read_text("utf-8")) if path.is_file() else []


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


def record_saved_part(compare_dir: pathlib.Path, checkpoint: pathlib.Path) -> None:
    """Records this machine's part in the checkpoint's segments.json as saved now (with the
    compare log beside COMPARE_DIR, when there is one), replacing its earlier save."""
    segments_path = checkpoint / SEGMENTS
    segments = _read_list(segments_path)
    segment = {**segment_of(compare_dir), "saved_utc": _utc(time.time())}
    log = compare_dir.parent / "log.txt"  # scripts/controls_offline.sh's log of the compare
    if log.is_file():
        segment["log"] = log.read_text(encoding="utf-8", errors="replace").splitlines()
    segments = [s for s in segments if s.get("started_utc") != segment["started_utc"]]
    segments_path.write_text(json.dumps([*segments, segment], indent=1) + "\n", "utf-8")


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
    """Carries the parts' record into a finished comparison's DATA_DIR; drops the checkpoint.
    A comparison that ran in one part gets neither segments.json nor a note."""
    meta_path = data / "run.json"
    if not meta_path.is_file():
        raise CheckpointError(f"{data}: no run.json (the comparison is not copied there yet)")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    segments = _read_list(checkpoint / SEGMENTS)
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
