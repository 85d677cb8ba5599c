"""`compare.checkpoint` (scripts/compare_checkpoint.py) carries an unfinished comparison from one machine to the next:
what `save` commits, `restore` puts back so that `spark-jax compare` keeps the finished searches
and resumes the others; `finish` records the parts. Run on a copy of a committed comparison
(results/controls-offline/data): one search made part-done, one stopped before its seed trained."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from spark_jax.compare import checkpoint as compare_checkpoint
from spark_jax.compare.runner import run_status
from spark_jax.config import search as search_config
from spark_jax.search import startup
from spark_jax.search.rundb import RunDB
from spark_jax.util import labels

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "compare_checkpoint.py"
SOURCE = ROOT / "results" / "controls-offline" / "data"
PART_DONE = "openevolve/seed-1"
UNSEEDED = "spark/seed-2"  # stopped while its seed program's first training was in flight


def _checkpoint(verb: str, *paths: Path) -> subprocess.CompletedProcess:
    """The verb run through the library, with what the script prints on success."""
    lines = compare_checkpoint.carry(verb, list(paths))
    return subprocess.CompletedProcess(verb, 0, "".join(f"{line}\n" for line in lines), "")


def _evaluations(db: Path) -> list[tuple]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        return con.execute("SELECT * FROM evaluations ORDER BY rowid").fetchall()


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A comparison directory as a machine leaves it: searches finished and one part-done,
    live WAL databases and locks, run configs naming a checkout that is gone."""
    cmp = tmp_path / "work" / "cmp"
    shutil.copytree(SOURCE, cmp, ignore=shutil.ignore_patterns("plots", "*.md", "*.txt"))
    (cmp / "run.json").unlink()
    with sqlite3.connect(cmp / PART_DONE / "run.db") as con:
        con.execute("DELETE FROM run_meta WHERE key IN ('finished_at', 'final_test')")
        con.execute("PRAGMA journal_mode=WAL")
    with sqlite3.connect(cmp / UNSEEDED / "run.db") as con:
        for table in ("evaluations", "archive_snapshots", "llm_calls", "proposals"):
            con.execute(f"DELETE FROM {table}")
        con.execute("DELETE FROM run_meta WHERE key IN ('finished_at', 'final_test')")
    for run in cmp.glob("*/seed-*/"):
        (run / "lock").write_text("1234\n")
        config = yaml.safe_load((run / "config.yaml").read_text())
        config["seed_program"] = "/gone/checkout/processors/mpnn.py"
        (run / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    (tmp_path / "work" / "log.txt").write_text("[compare] spark seed 0: starting\n")
    return cmp


def test_save_then_restore_on_a_fresh_machine_gives_back_every_search(work, tmp_path):
    checkpoint = tmp_path / "checkpoint"
    # The part-done search is live: its last commit sits in the WAL, not yet in run.db.
    writer = sqlite3.connect(work / PART_DONE / "run.db")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    with writer:
        writer.execute("INSERT INTO run_meta VALUES ('probe', '1')")
    try:
        assert (work / PART_DONE / "run.db-wal").stat().st_size > 0
        saved = _checkpoint("save", work, checkpoint)
    finally:
        writer.close()
    assert saved.returncode == 0, saved.stderr
    runs = sorted(str(p.relative_to(work)) for p in work.glob("*/seed-*") if p.is_dir())
    kept = [r for r in runs if r != UNSEEDED]
    assert f"save: {len(runs) - 1} search(es) copied" in saved.stdout
    assert f"save: {PART_DONE}: part-done (2 attempts)" in saved.stdout
    assert f"save: {UNSEEDED}: not kept (its seed program is still training)" in saved.stdout
    assert not (checkpoint / UNSEEDED).exists()
    # What is committed: rollback-journal databases, no lock, no WAL beside them.
    leftovers = [p.name for p in checkpoint.rglob("*") if p.name.endswith(("-wal", "-shm"))]
    assert not leftovers and not list(checkpoint.rglob("lock"))
    with sqlite3.connect(checkpoint / PART_DONE / "run.db") as con:
        assert con.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        assert con.execute("SELECT value FROM run_meta WHERE key = 'probe'").fetchone() == ("1",)
    (segment,) = json.loads((checkpoint / "segments.json").read_text())
    assert segment["log"] == ["[compare] spark seed 0: starting"] and segment["commit"]
    # Each part names its machine by a fingerprint, not only by host name and CPU.
    assert segment["fingerprint"] == labels.machine_fingerprint()
    assert segment["host"] == labels.machine_label() and segment["fingerprint"] in segment["host"]

    fresh = tmp_path / "fresh" / "cmp"
    restored = _checkpoint("restore", checkpoint, fresh)
    assert restored.returncode == 0, restored.stderr
    assert sorted(str(p.relative_to(fresh)) for p in fresh.glob("*/seed-*") if p.is_dir()) == kept
    for run in kept:
        assert run_status(fresh / run) == run_status(work / run), run
        assert _evaluations(fresh / run / "run.db") == _evaluations(work / run / "run.db")
        assert (fresh / f"{run}.log").is_file()
        # What `spark-jax search --resume` checks before it goes on: the seed program is
        # readable and is the seed the run started from, the config is the stored one.
        cfg = search_config.load(fresh / run / "config.yaml")
        assert Path(cfg.seed_program).resolve() == ROOT / "processors" / "mpnn.py"
        startup.check_inputs(cfg)
        with RunDB.open(fresh / run / "run.db") as db:
            startup.check_resume_config(db, cfg, fresh / run / "config.yaml")
    assert run_status(fresh / PART_DONE) == "unfinished"
    assert (fresh / "compare.json").read_bytes() == (work / "compare.json").read_bytes()
    assert json.loads((fresh.parent / "segment.json").read_text())["started_utc"]


def test_a_second_save_copies_only_what_has_not_finished(work, tmp_path):
    checkpoint = tmp_path / "checkpoint"
    assert _checkpoint("save", work, checkpoint).returncode == 0
    again = _checkpoint("save", work, checkpoint)
    assert again.returncode == 0, again.stderr
    assert again.stdout.splitlines()[:2] == [
        f"save: {PART_DONE}: part-done (2 attempts)",
        f"save: {UNSEEDED}: not kept (its seed program is still training)",
    ]
    (segment,) = json.loads((checkpoint / "segments.json").read_text())  # the same part


def test_the_copy_further_along_wins_both_ways(work, tmp_path):
    checkpoint = tmp_path / "checkpoint"
    assert _checkpoint("save", work, checkpoint).returncode == 0
    with sqlite3.connect(work / PART_DONE / "run.db") as con:  # this machine is behind
        con.execute("DELETE FROM evaluations WHERE proposal_attempt = 1")
        con.execute("DELETE FROM proposals WHERE attempt = 1")
    behind = _evaluations(work / PART_DONE / "run.db")
    saved = _checkpoint("save", work, checkpoint)
    assert f"save: {PART_DONE}: the checkpoint's copy is further along; kept" in saved.stdout
    assert len(_evaluations(checkpoint / PART_DONE / "run.db")) == len(behind) + 1
    restored = _checkpoint("restore", checkpoint, work)
    assert restored.returncode == 0, restored.stderr
    assert f"restore: {PART_DONE}: part-done (2 attempts)" in restored.stdout
    assert len(_evaluations(work / PART_DONE / "run.db")) == len(behind) + 1
    assert not list(work.rglob(".*.restoring")) and not list(work.rglob(".*.old"))


def _final_test_seeds(run: Path, seeds: list[int] | None) -> None:
    """Sets (or, None, drops as a run before the fresh-seed rule stored it) the final test's
    `train_seeds` in `run`'s database."""
    with sqlite3.connect(run / "run.db") as con:
        (value,) = con.execute("SELECT value FROM run_meta WHERE key = 'final_test'").fetchone()
        stored = {k: v for k, v in json.loads(value).items() if k != "train_seeds"}
        if seeds is not None:
            stored["train_seeds"] = seeds
        con.execute("UPDATE run_meta SET value = ? WHERE key = 'final_test'", (json.dumps(stored),))


def test_a_final_test_scored_again_on_fresh_seeds_replaces_the_stale_copy(work, tmp_path):
    """A finished search whose final test reused its seeds (the checkpoint's) and the same
    search after `compare` scored its final test again on fresh seeds: the fresh one wins."""
    checkpoint, finished = tmp_path / "checkpoint", "spark/seed-0"
    _final_test_seeds(work / finished, None)
    assert run_status(work / finished) == "stale"
    assert _checkpoint("save", work, checkpoint).returncode == 0
    assert run_status(checkpoint / finished) == "stale"
    _final_test_seeds(work / finished, [1])  # what `compare` leaves after scoring it again
    assert run_status(work / finished) == "finished"
    saved = _checkpoint("save", work, checkpoint)
    assert f"save: {finished}: finished" in saved.stdout
    assert run_status(checkpoint / finished) == "finished"
    elsewhere = tmp_path / "elsewhere" / "cmp"  # a machine that still holds the stale copy
    shutil.copytree(SOURCE, elsewhere, ignore=shutil.ignore_patterns("plots", "*.md", "*.txt"))
    _final_test_seeds(elsewhere / finished, None)
    restored = _checkpoint("restore", checkpoint, elsewhere)
    assert f"restore: {finished}: finished" in restored.stdout
    assert run_status(elsewhere / finished) == "finished"


def test_restore_keeps_this_machines_own_copy_and_both_refuse_another_comparison(work, tmp_path):
    checkpoint = tmp_path / "checkpoint"
    assert _checkpoint("save", work, checkpoint).returncode == 0
    before = (work / PART_DONE / "config.yaml").read_bytes()
    restored = _checkpoint("restore", checkpoint, work)
    assert "restore: 0 search(es) copied" in restored.stdout
    assert (work / PART_DONE / "config.yaml").read_bytes() == before
    plan = json.loads((work / "compare.json").read_text())
    (work / "compare.json").write_text(json.dumps({**plan, "seeds": [0]}))
    for verb, src, dest in (("restore", checkpoint, work), ("save", work, checkpoint)):
        with pytest.raises(compare_checkpoint.CheckpointError, match=r"\(compare.json differs\)$"):
            _checkpoint(verb, src, dest)


def test_a_run_directory_moved_aside_by_an_interrupted_copy_is_put_back(work, tmp_path):
    checkpoint, fresh = tmp_path / "checkpoint", tmp_path / "fresh" / "cmp"
    assert _checkpoint("save", work, checkpoint).returncode == 0
    assert _checkpoint("restore", checkpoint, fresh).returncode == 0
    run = fresh / PART_DONE  # interrupted between its two renames: only the old copy stands
    run.rename(run.with_name(f".{run.name}.old"))
    restored = _checkpoint("restore", checkpoint, fresh)
    assert restored.returncode == 0, restored.stderr
    assert f"restore: {PART_DONE}: this machine's copy is as far along; kept" in restored.stdout
    assert run_status(run) == "unfinished" and not run.with_name(f".{run.name}.old").exists()


def test_finish_records_the_parts_and_drops_the_checkpoint(work, tmp_path):
    checkpoint, data = tmp_path / "checkpoint", tmp_path / "data"
    assert _checkpoint("save", work, checkpoint).returncode == 0
    data.mkdir()
    last = {"host": "b", "commit": "def", "started_utc": "2026-01-02T00:00:00Z"}
    (data / "segment.json").write_text(json.dumps(last))
    meta = {"command": "c", "commit": "def", "date_utc": "2026-01-02T02:00:00Z", "host": "b"}
    (data / "run.json").write_text(json.dumps({**meta, "wall_seconds": 600}))
    done = _checkpoint("finish", checkpoint, data)
    assert done.returncode == 0, done.stderr
    assert not checkpoint.exists() and not (data / "segment.json").exists()
    parts = json.loads((data / "segments.json").read_text())
    assert [p["commit"] for p in parts][1:] == ["def"] and parts[-1]["wall_seconds"] == 600
    note = json.loads((data / "run.json").read_text())["wall_note"]
    assert note.startswith("in 2 parts,") and note.endswith("the last part 10.0 min")
    assert "0.2 h together" in note  # the first part's few seconds to its save, then 600 s


def test_finish_of_a_run_in_one_part_records_no_parts(work, tmp_path):
    # The machine saved along the way (a checkpoint with its own part), then finished itself;
    # and a comparison never saved: both in one part, no note, segment.json dropped from data/.
    checkpoint, data = tmp_path / "checkpoint", tmp_path / "data"
    assert _checkpoint("save", work, checkpoint).returncode == 0
    (part,) = json.loads((checkpoint / "segments.json").read_text())
    data.mkdir()
    meta = {"command": "c", "commit": part["commit"], "date_utc": "2999-01-01T00:00:00Z"}
    for segment in (None, part):
        if segment is not None:
            (data / "segment.json").write_text(json.dumps(segment))
        (data / "run.json").write_text(
            json.dumps({**meta, "host": part["host"], "wall_seconds": 6})
        )
        done = _checkpoint("finish", checkpoint, data)
        assert done.returncode == 0 and not done.stdout, done.stderr
        assert sorted(p.name for p in data.iterdir()) == ["run.json"]
        assert "wall_note" not in json.loads((data / "run.json").read_text())


def test_bad_directories_get_one_line(tmp_path):
    for verb in ("save", "restore", "finish"):
        with pytest.raises(compare_checkpoint.CheckpointError) as refused:
            _checkpoint(verb, tmp_path / "nothing", tmp_path / "out")
        assert len(str(refused.value).splitlines()) == 1, refused.value
    with pytest.raises(compare_checkpoint.UsageError):
        _checkpoint("begin", tmp_path / "a", tmp_path / "b")


def test_the_script_keeps_its_command_line(tmp_path):
    """scripts/results/*.sh run the script: the verb's lines on stdout, one line on a refusal,
    the usage on a bad call."""

    def script(*args):
        cmd = [sys.executable, str(SCRIPT), *map(str, args)]
        return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)

    done = script("begin", tmp_path / "cmp")
    assert done.returncode == 0 and done.stdout.startswith("begin: this part started "), done
    refused = script("save", tmp_path / "nothing", tmp_path / "out")
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1, refused.stderr
    assert refused.stderr.startswith("compare_checkpoint save: ")
    usage = script("restore", tmp_path)
    assert usage.returncode == 1 and "scripts/compare_checkpoint.py begin" in usage.stderr


def test_export_copies_the_record_of_a_comparison(tmp_path):
    """`compare.export` (scripts/compare_copy.py): the plan, report, plots, each search's
    database and config, and the extra files; nothing from a directory that is no comparison."""
    from spark_jax.compare import export

    data = tmp_path / "data"
    export.copy_comparison(SOURCE, data, [SOURCE / "run.json"])
    runs = sorted(str(p.relative_to(SOURCE)) for p in SOURCE.glob("*/seed-*") if p.is_dir())
    assert sorted(str(p.relative_to(data)) for p in data.glob("*/seed-*") if p.is_dir()) == runs
    for run in runs:
        assert _evaluations(data / run / "run.db") == _evaluations(SOURCE / run / "run.db")
        assert (data / run / "config.yaml").read_bytes() == (
            SOURCE / run / "config.yaml"
        ).read_bytes()
    assert (data / "run.json").is_file() and (data / "plots").is_dir()
    with pytest.raises(export.NotAComparison, match="no compare.json"):
        export.copy_comparison(tmp_path / "nothing", tmp_path / "out", [])
    assert not (tmp_path / "out").exists()
