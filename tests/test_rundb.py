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

from spark_jax import program as program_lib
from spark_jax.search.archive import ArchiveConfig, Candidate, IslandArchive
from spark_jax.search.rundb import (SCHEMA_VERSION, DuplicateAttemptError, EvaluationRecord,
                             LLMCallRecord, ProposalRecord, RunDB, RunDBError,
                             program_sha256)

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOURCE = 'x = 1\n'


@pytest.fixture()
def db(tmp_path: pathlib.Path):
    with RunDB.create(tmp_path / 'run' / 'run.db', {'seed': 3}) as handle:
        yield handle


def feasible(db: RunDB, attempt: int, source: str | None = None) -> ProposalRecord:
    child = db.insert_program(source or f'y = {attempt}\n')
    proposal = ProposalRecord(attempt=attempt, status='feasible', island=attempt % 5,
                              factor='OPERATOR', child_program_id=child, diff='--- a\n+++ b\n',
                              entanglement='operator', is_llm=True,
                              feasibility={'ok': True, 'stage': None})
    db.record_proposal(proposal, [LLMCallRecord(attempt, 'sar', prompt_tokens=10)])
    return proposal


def evaluation(attempt: int | None, program_id: str, ood: float = 0.5) -> EvaluationRecord:
    return EvaluationRecord(program_id=program_id, status='ok', proposal_attempt=attempt,
                            task='dfs', preset='smoke', seed=0, ood_score=ood, macs=100,
                            metrics={'curve': [0.1, 0.2]})


def test_schema_pragmas_and_meta(db: RunDB):
    tables = {r[0] for r in db._conn.execute("SELECT name FROM sqlite_master "
                                            "WHERE type = 'table'")}
    assert tables == {'schema_version', 'run_meta', 'programs', 'proposals', 'evaluations',
                      'llm_calls', 'archive_snapshots'}
    assert db._conn.execute('SELECT version FROM schema_version').fetchone()[0] == (
        SCHEMA_VERSION)
    assert db._conn.execute('PRAGMA journal_mode').fetchone()[0] == 'wal'
    assert db._conn.execute('PRAGMA synchronous').fetchone()[0] == 2  # FULL
    assert db._conn.execute('PRAGMA foreign_keys').fetchone()[0] == 1
    with sqlite3.connect(db.path) as raw:  # WAL is a property of the file
        assert raw.execute('PRAGMA journal_mode').fetchone()[0] == 'wal'
    assert db.get_meta('seed') == 3 and db.get_meta('missing', 'x') == 'x'
    db.set_meta('config', {'llm': {'api_key_env': 'OPENAI_API_KEY'}, 'budget': 10})
    assert db.get_meta('config')['budget'] == 10
    with pytest.raises(RunDBError, match='credential'):
        db.set_meta('config', {'llm': {'api_key': 'sk-123'}})
    assert db.integrity_check() == []


def test_bad_paths_and_corrupt_files(tmp_path: pathlib.Path, db: RunDB):
    with pytest.raises(RunDBError, match='already exists'):
        RunDB.create(db.path)
    with pytest.raises(RunDBError, match='does not exist'):
        RunDB.open(tmp_path / 'nope.db')
    junk = tmp_path / 'junk.db'
    junk.write_bytes(b'this is not a database' * 100)
    with pytest.raises(RunDBError, match='junk.db'):
        RunDB.open(junk)
    other = tmp_path / 'other.db'
    sqlite3.connect(other).execute('CREATE TABLE t (x)').connection.close()
    with pytest.raises(RunDBError, match='other.db'):
        RunDB.open(other)


def test_insert_program_is_idempotent_by_normalized_sha(db: RunDB):
    first = db.insert_program(SOURCE)
    assert db.insert_program(SOURCE) == first
    assert db.insert_program('x = 1   \r\n') == first  # normalization: same program
    child = db.insert_program('x = 2\n', parent_id=first)
    assert child != first and db.get_program(child)['parent_id'] == first
    assert program_sha256(SOURCE) == program_lib.Program(SOURCE).sha256
    assert db.get_program(first)['sha256'] == program_sha256(SOURCE)
    assert db._conn.execute('SELECT COUNT(*) FROM programs').fetchone()[0] == 2
    with pytest.raises(RunDBError, match='FOREIGN KEY'):
        db.insert_program('z = 3\n', parent_id='unknown')


def test_duplicates_raise(db: RunDB):
    proposal = feasible(db, 0)
    with pytest.raises(DuplicateAttemptError, match='attempt 0'):
        db.record_proposal(proposal)
    db.record_evaluation(evaluation(0, proposal.child_program_id))
    with pytest.raises(DuplicateAttemptError, match='attempt 0 already has an evaluation'):
        db.record_evaluation(evaluation(0, proposal.child_program_id, ood=0.9))
    seed = db.insert_program(SOURCE)
    db.record_evaluation(evaluation(None, seed))
    with pytest.raises(DuplicateAttemptError, match='baseline'):
        db.record_evaluation(evaluation(None, seed))
    db.record_evaluation(EvaluationRecord(seed, 'ok', task='bfs', preset='smoke', seed=0))
    assert db.attempt_count() == 1 and db.evaluated_count() == 3
    assert db.evaluated_count(include_baseline=False) == 1
    db.record_evaluation(EvaluationRecord(seed, 'error', task='bfs', preset='smoke', seed=1,
                                          macs=np.int64(5), metrics={'x': np.float32(0.5)},
                                          error='Traceback ...'))
    assert db.evaluations()[-1]['macs'] == 5 and db.evaluated_count() == 3
    assert len(db.llm_calls(0)) == 1


def test_invalid_writes_raise(db: RunDB):
    db.record_proposal(ProposalRecord(attempt=0, status='infeasible', failure_stage='syntax',
                                      failure_type='syntax_error', reason='bad'))
    with pytest.raises(RunDBError, match='not a recorded feasible proposal'):
        db.record_evaluation(evaluation(0, db.insert_program(SOURCE)))
    with pytest.raises(RunDBError, match='not a recorded feasible proposal'):
        db.record_evaluation(evaluation(5, db.insert_program(SOURCE)))
    with pytest.raises(RunDBError, match='status'):
        db.record_proposal(ProposalRecord(attempt=1, status='weird'))
    with pytest.raises(RunDBError, match='CHECK'):
        db.record_proposal(ProposalRecord(attempt=1, status='feasible'))  # no child
    with pytest.raises(RunDBError, match='commit failed'):
        db.record_llm_calls([LLMCallRecord(attempt=42, role='asr')])  # no such attempt
    assert db.llm_calls() == [] and db.attempt_count() == 1


def test_transaction_is_atomic_and_nests(db: RunDB):
    with pytest.raises(KeyError):
        with db.transaction():
            feasible(db, 0)
            db.save_archive_snapshot(0, {'x': 1})
            raise KeyError('boom')
    assert (db.attempt_count(), db.llm_calls(), db.latest_archive_snapshot()) == (0, [], None)
    assert db._conn.execute('SELECT COUNT(*) FROM programs').fetchone()[0] == 0
    with db.transaction():
        feasible(db, 0)
        with pytest.raises(DuplicateAttemptError):
            feasible(db, 0)  # the inner savepoint rolls back; the outer step goes on
        feasible(db, 1)
    assert [p.attempt for p in db.proposals()] == [0, 1]
    assert len(db.llm_calls()) == 2


def test_pending_evaluations_after_a_crash(tmp_path: pathlib.Path):
    path = tmp_path / 'run.db'
    archive = IslandArchive(ArchiveConfig(seed=1))
    with RunDB.create(path, {'seed': 1}, clock=lambda: 123.0) as db:
        seed = db.insert_program(SOURCE)
        archive.add(Candidate(seed, program_sha256(SOURCE), 0.4, 100))
        db.record_evaluation(evaluation(None, seed, 0.4), archive_state=archive.to_state())
        done = feasible(db, 0)
        with db.transaction():
            db.record_evaluation(evaluation(0, done.child_program_id))
            archive.add(Candidate(done.child_program_id, 'sha', 0.5, 100, island=0,
                                  parent_id=seed, iteration=0))
            db.save_archive_snapshot(0, archive.to_state())
        crashed = feasible(db, 1)  # committed; the process dies before its evaluation
        db.record_proposal(ProposalRecord(attempt=2, status='failed', reason='timeout'))
    with RunDB.open(path) as db:
        assert db.pending_evaluations() == [dataclasses.replace(crashed, created_at=123.0)]
        assert db.next_attempt_index() == 3 and db.missing_attempts() == []
        after, state = db.latest_archive_snapshot()
        assert after == 0 and IslandArchive.from_state(state).to_state() == archive.to_state()
        db.record_evaluation(evaluation(1, crashed.child_program_id, 0.7))
        assert db.pending_evaluations() == [] and db.evaluated_count() == 3
        history = db.history()
        assert [(h['attempt'], h['status'], h['eval_status'], h['ood_score'], h['llm_calls'])
                for h in history] == [(0, 'feasible', 'ok', 0.5, 1),
                                      (1, 'feasible', 'ok', 0.7, 1),
                                      (2, 'failed', None, None, 0)]
        assert db.evaluations()[0]['proposal_attempt'] is None


def test_second_connection_sees_everything(tmp_path: pathlib.Path):
    path = tmp_path / 'run.db'
    with RunDB.create(path, {'command': ['spark-jax', 'search']}) as writer:
        with RunDB.open(path) as reader:
            feasible(writer, 0)
            writer.save_archive_snapshot(0, {'k': [1, 2]})
            assert reader.attempt_count() == 1
            assert reader.pending_evaluations()[0].attempt == 0
            assert reader.latest_archive_snapshot() == (0, {'k': [1, 2]})
            assert reader.get_meta('command') == ['spark-jax', 'search']
    with RunDB.open(path) as again:
        assert again.proposals()[0].feasibility == {'ok': True, 'stage': None}


WRITER = textwrap.dedent('''\
    import sys
    from spark_jax.search.rundb import LLMCallRecord, ProposalRecord, RunDB
    db = RunDB.open(sys.argv[1])
    attempt = db.next_attempt_index()
    while True:
        with db.transaction():
            child = db.insert_program(f'x = {attempt}\\n' + '# pad\\n' * 200)
            db.record_proposal(
                ProposalRecord(attempt=attempt, status='feasible', child_program_id=child,
                               diff='+' * 4000),
                [LLMCallRecord(attempt, role) for role in ('asr', 'rc', 'sar')])
        print(attempt, flush=True)
        attempt += 1
''')


def test_kill_9_leaves_a_consistent_database(tmp_path: pathlib.Path):
    path = tmp_path / 'run.db'
    RunDB.create(path, {'seed': 0}).close()
    env = {**os.environ, 'PYTHONPATH': str(ROOT)}
    last = -1
    for round_ in range(3):
        child = subprocess.Popen([sys.executable, '-c', WRITER, str(path)], cwd=ROOT, env=env,
                                 stdout=subprocess.PIPE, text=True)
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
            assert all(db.get_program(p.child_program_id) for p in db.proposals())
            assert len(db.pending_evaluations()) == len(attempts)


def test_threads_share_one_handle(db: RunDB):
    def writer(offset: int) -> None:
        for k in range(10):
            with db.transaction():
                feasible(db, offset + k, source=f'w = {offset + k}\n')

    threads = [threading.Thread(target=writer, args=(10 * i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [p.attempt for p in db.proposals()] == list(range(40))
    assert len(db.llm_calls()) == 40 and db.integrity_check() == []
