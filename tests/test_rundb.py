"""Tests for spark_jax.rundb: schema, idempotence, atomicity, resume after a crash, kill -9."""

from __future__ import annotations

import dataclasses
import os
import pathlib
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest
import records  # noqa: E402 - tests/records.py: record builders

from spark_jax import program as program_lib
from spark_jax.search.archive import ArchiveConfig, Candidate, IslandArchive
from spark_jax.search.rundb import (
    SCHEMA_VERSION,
    DuplicateAttemptError,
    RunDB,
    RunDBError,
    program_sha256,
)

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOURCE = "x = 1\n"


@pytest.fixture()
def db(tmp_path: pathlib.Path):
    with RunDB.create(tmp_path / "run" / "run.db", {"seed": 3}) as handle:
        yield handle


def feasible(db: RunDB, attempt: int, source: str | None = None):
    """Records a feasible proposal; returns (proposal, child program id)."""
    proposal = records.proposal(attempt, child_source=source or f"y = {attempt}\n")
    return proposal, db.record_proposal(proposal)


def evaluate(
    db: RunDB,
    attempt: int | None,
    program_id: str,
    ood: float | None = 0.5,
    archive_state=None,
    **job,
) -> int:
    return db.record_evaluation(
        program_id, attempt, records.job(**job), records.result(ood), archive_state=archive_state
    )


def test_schema_pragmas_and_meta(db: RunDB):
    tables = {r[0] for r in db._conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables == {
        "schema_version",
        "run_meta",
        "programs",
        "proposals",
        "evaluations",
        "llm_calls",
        "archive_snapshots",
    }
    assert db._conn.execute("SELECT version FROM schema_version").fetchone()[0] == (SCHEMA_VERSION)
    assert db._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db._conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert db._conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    with sqlite3.connect(db.path) as raw:  # WAL is a property of the file
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.get_meta("seed") == 3 and db.get_meta("missing", "x") == "x"
    db.set_meta("config", {"llm": {"api_key_env": "OPENAI_API_KEY"}, "budget": 10})
    assert db.get_meta("config")["budget"] == 10
    with pytest.raises(RunDBError, match="credential"):
        db.set_meta("config", {"llm": {"api_key": "sk-123"}})
    assert db.integrity_check() == []


def test_bad_paths_and_corrupt_files(tmp_path: pathlib.Path, db: RunDB):
    with pytest.raises(RunDBError, match="already exists"):
        RunDB.create(db.path)
    with pytest.raises(RunDBError, match="does not exist"):
        RunDB.open(tmp_path / "nope.db")
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(RunDBError, match="junk.db"):
        RunDB.open(junk)
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(RunDBError, match="other.db"):
        RunDB.open(other)


def test_insert_program_is_idempotent_by_normalized_sha(db: RunDB):
    first = db.insert_program(SOURCE)
    assert db.insert_program(SOURCE) == first
    assert db.insert_program("x = 1   \r\n") == first  # normalization: same program
    child = db.insert_program("x = 2\n", parent_id=first)
    assert child != first and db.get_program(child)["parent_id"] == first
    assert program_sha256(SOURCE) == program_lib.Program(SOURCE).sha256
    assert db.get_program(first)["sha256"] == program_sha256(SOURCE)
    assert db._conn.execute("SELECT COUNT(*) FROM programs").fetchone()[0] == 2
    with pytest.raises(RunDBError, match="FOREIGN KEY"):
        db.insert_program("z = 3\n", parent_id="unknown")


def test_duplicates_raise(db: RunDB):
    proposal, child = feasible(db, 0)
    with pytest.raises(DuplicateAttemptError, match="attempt 0"):
        db.record_proposal(proposal)
    evaluate(db, 0, child)
    with pytest.raises(DuplicateAttemptError, match="attempt 0 already has an evaluation"):
        evaluate(db, 0, child, ood=0.9)
    seed = db.insert_program(SOURCE)
    evaluate(db, None, seed)
    with pytest.raises(DuplicateAttemptError, match="baseline"):
        evaluate(db, None, seed)
    evaluate(db, None, seed, task="bfs")
    assert db.attempt_count() == 1 and db.evaluated_count() == 3
    assert db.evaluated_count(include_baseline=False) == 1
    numpy_result = records.result(0.5, macs=np.int64(5), final_loss=np.float32(0.5))
    db.record_evaluation(seed, None, records.job(task="bfs", seed=1), numpy_result)
    evaluate(db, None, seed, None, task="bfs", seed=2)  # a failed evaluation
    assert db.evaluations()[-2]["macs"] == 5
    # The budget counts an evaluation whatever training gave; the scored count does not.
    assert db.evaluated_count() == 5 and db.scored_count() == 4
    stored = db.evaluation_results()
    assert stored[-2][2].evaluation == numpy_result.evaluation
    assert stored[-1][2].error_type == "error" and stored[-1][2].evaluation is None
    assert len(db.llm_calls(0)) == 1


def test_records_round_trip_as_they_are(db: RunDB):
    calls = (
        records.call("asr", is_llm=True, backend="openai", model="m", latency_s=0.5),
        records.call("sar", response="```python\nx = 1\n```", reasoning="think"),
    )
    stored = records.proposal(0, calls=calls, created_at=5.0)
    failed = records.proposal(1, "failed", created_at=6.0)
    infeasible = records.proposal(2, "infeasible", child_source="z = 1\n", created_at=7.0)
    for p in (stored, failed, infeasible):
        db.record_proposal(p)
    assert db.proposals() == [stored, failed, infeasible]
    assert db.proposals()[0].diff == stored.feasibility.diff != ""
    assert db.program_source(db.program_id(stored.child_source)) == stored.child_source
    assert db.program_id(infeasible.child_source) is None  # only feasible children are programs


def test_invalid_writes_raise(db: RunDB):
    db.record_proposal(records.proposal(0, "infeasible"))
    with pytest.raises(RunDBError, match="not a recorded feasible proposal"):
        evaluate(db, 0, db.insert_program(SOURCE))
    with pytest.raises(RunDBError, match="not a recorded feasible proposal"):
        evaluate(db, 5, db.insert_program(SOURCE))
    with pytest.raises(RunDBError, match="status"):
        db.record_proposal(records.proposal(1, "weird"))
    with pytest.raises(RunDBError, match="no child program"):
        db.record_proposal(records.replace(records.proposal(1), child_source=None))
    with pytest.raises(RunDBError, match="commit failed"):
        db.record_llm_calls(42, [records.call("asr")])  # no such attempt
    assert len(db.llm_calls()) == 1 and db.attempt_count() == 1


def test_transaction_is_atomic_and_nests(db: RunDB):
    with pytest.raises(KeyError):
        with db.transaction():
            feasible(db, 0)
            db.save_archive_snapshot(0, {"x": 1})
            raise KeyError("boom")
    assert (db.attempt_count(), db.llm_calls(), db.latest_archive_snapshot()) == (0, [], None)
    assert db._conn.execute("SELECT COUNT(*) FROM programs").fetchone()[0] == 0
    with db.transaction():
        feasible(db, 0)
        with pytest.raises(DuplicateAttemptError):
            feasible(db, 0)  # the inner savepoint rolls back; the outer step goes on
        feasible(db, 1)
    assert [p.attempt for p in db.proposals()] == [0, 1]
    assert len(db.llm_calls()) == 2


def test_pending_evaluations_after_a_crash(tmp_path: pathlib.Path):
    path = tmp_path / "run.db"
    archive = IslandArchive(ArchiveConfig(seed=1))
    with RunDB.create(path, {"seed": 1}, clock=lambda: 123.0) as db:
        seed = db.insert_program(SOURCE)
        archive.add(Candidate(seed, program_sha256(SOURCE), 0.4, 100))
        evaluate(db, None, seed, 0.4, archive_state=archive.to_state())
        _, done = feasible(db, 0)
        with db.transaction():
            evaluate(db, 0, done)
            archive.add(Candidate(done, "sha", 0.5, 100, island=0, parent_id=seed, iteration=0))
            db.save_archive_snapshot(0, archive.to_state())
        crashed, crashed_id = feasible(db, 1)  # committed; the process dies before its evaluation
        db.record_proposal(records.proposal(2, "failed", calls=()))
    with RunDB.open(path) as db:
        assert db.pending_evaluations() == [dataclasses.replace(crashed, created_at=123.0)]
        assert db.next_attempt_index() == 3 and db.missing_attempts() == []
        after, state = db.latest_archive_snapshot()
        assert after == 0 and IslandArchive.from_state(state).to_state() == archive.to_state()
        evaluate(db, 1, crashed_id, 0.7)
        assert db.pending_evaluations() == [] and db.evaluated_count() == 3
        history = db.history()
        assert [
            (h["attempt"], h["status"], h["eval_status"], h["ood_score"], h["llm_calls"])
            for h in history
        ] == [
            (0, "feasible", "ok", 0.5, 1),
            (1, "feasible", "ok", 0.7, 1),
            (2, "failed", None, None, 0),
        ]
        assert db.evaluations()[0]["proposal_attempt"] is None


def test_second_connection_sees_everything(tmp_path: pathlib.Path):
    path = tmp_path / "run.db"
    with RunDB.create(path, {"command": ["spark-jax", "search"]}) as writer:
        with RunDB.open(path) as reader:
            feasible(writer, 0)
            writer.save_archive_snapshot(0, {"k": [1, 2]})
            assert reader.attempt_count() == 1
            assert reader.pending_evaluations()[0].attempt == 0
            assert reader.latest_archive_snapshot() == (0, {"k": [1, 2]})
            assert reader.get_meta("command") == ["spark-jax", "search"]
    with RunDB.open(path) as again:
        assert again.proposals()[0].feasibility == records.report()


WRITER = textwrap.dedent("""\
    import sys
    sys.path.insert(0, sys.argv[2])
    import records
    from spark_jax.search.rundb import RunDB
    db = RunDB.open(sys.argv[1])
    attempt = db.next_attempt_index()
    while True:
        with db.transaction():
            db.record_proposal(records.proposal(
                attempt, child_source=f'x = {attempt}\\n' + '# pad\\n' * 200,
                feasibility=records.report(diff='+' * 4000),
                calls=tuple(records.call(role) for role in ('asr', 'rc', 'sar'))))
        print(attempt, flush=True)
        attempt += 1
""")


def test_kill_9_leaves_a_consistent_database(tmp_path: pathlib.Path):
    path = tmp_path / "run.db"
    RunDB.create(path, {"seed": 0}).close()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    last = -1
    for round_ in range(3):
        child = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), str(ROOT / "tests")],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            for _ in range(15 + 7 * round_):
                last = int(child.stdout.readline())
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait(timeout=30)
            child.stdout.close()
        assert child.returncode == -signal.SIGKILL
        with RunDB.open(path) as db:
            assert db.integrity_check() == []
            attempts = [p.attempt for p in db.proposals()]
            assert attempts == list(range(len(attempts))) and attempts[-1] >= last
            calls = db.llm_calls()
            assert len(calls) == 3 * len(attempts)
            assert all(db.program_id(p.child_source) for p in db.proposals())
            assert len(db.pending_evaluations()) == len(attempts)


def test_threads_share_one_handle(db: RunDB):
    def writer(offset: int) -> None:
        for k in range(10):
            with db.transaction():
                feasible(db, offset + k, source=f"w = {offset + k}\n")

    threads = [threading.Thread(target=writer, args=(10 * i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [p.attempt for p in db.proposals()] == list(range(40))
    assert len(db.llm_calls()) == 40 and db.integrity_check() == []


def test_create_builds_under_a_temporary_name_and_clears_a_stale_one(tmp_path):
    path = tmp_path / "run.db"
    stale = tmp_path / "run.db.creating"
    stale.write_bytes(b"half-made by a killed process")  # no tables, not SQLite
    with RunDB.create(path, meta={"task": "dfs"}) as db:
        assert db.get_meta("task") == "dfs"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.db"]
    with RunDB.open(path) as db:
        assert db.get_meta("task") == "dfs"
