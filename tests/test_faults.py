"""Fault injection: kill -9 at random moments, the run-directory lock, SIGINT/SIGTERM, workers
that outlive their parent, scrubbed worker environments, and database error paths.

The fast variants drive the real loop, database, lock, CLI and signal handling through
`tests/fault_harness.py` (scripted executor and feasibility check); the slow variant kills
the real `spark-jax search` on configs/tiny.yaml.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import random
import signal
import sqlite3
import subprocess
import sys
import time

import fault_harness as harness
import pytest

from spark_jax import cli, workers
from spark_jax.search import loop
from spark_jax.search.lock import RunLock, RunLockedError
from spark_jax.search.rundb import RunDB, RunDBError

ROOT = pathlib.Path(__file__).resolve().parents[1]
HARNESS = ROOT / "tests" / "fault_harness.py"


def _harness(*args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(HARNESS), *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        **kw,
    )


def _proposals(db_path: pathlib.Path) -> int:
    try:
        with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as conn:
            return conn.execute("SELECT COUNT(*) FROM proposals").fetchone()[0]
    except sqlite3.Error:
        return -1


def _wait_for(predicate, proc: subprocess.Popen | None = None, limit_s: float = 120.0) -> bool:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        if proc is not None and proc.poll() is not None:
            return predicate()
        time.sleep(0.02)
    return False


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("faults") / "reference"
    harness.run(run_dir)
    return harness.summary(run_dir)


def _kill9_trials(reference, tmp_path, trials: int, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    counts = {"trials": 0, "killed_mid_run": 0, "finished_before_kill": 0, "equal": 0}
    for trial in range(trials):
        run_dir = tmp_path / f"trial{trial}"
        proc = _harness("search", str(run_dir))
        db = run_dir / "run.db"
        assert _wait_for(db.exists, proc), proc.communicate()
        time.sleep(rng.uniform(0.0, 1.5))
        finished = proc.poll() is not None
        with contextlib.suppress(ProcessLookupError):  # it may have finished and exited
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        counts["trials"] += 1
        counts["finished_before_kill" if finished else "killed_mid_run"] += 1
        harness.run(run_dir, resume=True)
        got = harness.summary(run_dir)
        assert got == reference, f"trial {trial} (seed {seed}) differs after resume"
        counts["equal"] += 1
    return counts


def test_kill9_at_random_moments_then_resume_equals_uninterrupted(reference, tmp_path):
    seed = int(os.environ.get("SPARK_JAX_FAULT_SEED", time.time_ns() % 10_000))
    counts = _kill9_trials(reference, tmp_path, trials=3, seed=seed)
    assert counts["equal"] == 3


@pytest.mark.slow
def test_kill9_many_random_moments(reference, tmp_path):
    seed = int(os.environ.get("SPARK_JAX_FAULT_SEED", time.time_ns() % 10_000))
    counts = _kill9_trials(reference, tmp_path, trials=12, seed=seed)
    print(f"\nkill -9 trials (seed {seed}): {counts}")
    assert counts["equal"] == 12 and counts["killed_mid_run"] >= 6


def test_lock_refuses_a_second_process_naming_the_holder(tmp_path, capsys):
    run_dir = tmp_path / "run"
    holder = _harness("hold", str(run_dir))
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(RunLockedError, match=f"process {holder.pid}"):
            RunLock.acquire(run_dir)
        # A fresh start on the held directory: one line naming the PID, exit 2, no writes.
        code = cli.main(
            ["search", "--config", str(harness.TINY), "--run-dir", str(run_dir), "--no-progress"]
        )
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(err) == 1 and f"in use by process {holder.pid}" in err[0]
        assert sorted(p.name for p in run_dir.iterdir()) == ["lock"]
    finally:
        os.killpg(holder.pid, signal.SIGKILL)
        holder.communicate()
    # The holder died (kill -9): its lock went with it.
    with RunLock.acquire(run_dir):
        pass


def test_resume_of_a_live_run_is_refused_and_config_written_once(tmp_path):
    run_dir = tmp_path / "run"
    live = _harness("search", str(run_dir), "--eval-s", "2.0")
    try:
        assert _wait_for(lambda: _proposals(run_dir / "run.db") >= 0, live)
        snapshot = (run_dir / "config.yaml").read_text()
        second = _harness("search", str(run_dir), "--resume")
        _, err = second.communicate(timeout=120)
        assert second.returncode == 2
        assert err.strip().splitlines() == [
            line for line in err.strip().splitlines() if f"process {live.pid}" in line
        ]
        assert (run_dir / "config.yaml").read_text() == snapshot
    finally:
        os.killpg(live.pid, signal.SIGKILL)
        live.communicate()
    with RunDB.open(run_dir / "run.db") as db:
        assert db.get_meta("config") is not None and db.integrity_check() in ([], ["ok"])


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_stops_cleanly_and_resume_equals_uninterrupted(reference, tmp_path, signum):
    run_dir = tmp_path / "run"
    # Slow evaluations: the signal lands while one is in flight (it is abandoned, not awaited).
    proc = _harness("search", str(run_dir), "--eval-s", "30")
    assert _wait_for(lambda: _proposals(run_dir / "run.db") >= 1, proc), proc.communicate()
    proc.send_signal(signum)
    try:
        out, err = proc.communicate(timeout=25)  # well before the 30 s evaluation ends
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    lines = err.strip().splitlines()
    assert proc.returncode == 128 + signum, err
    assert len(lines) == 1 and lines[0].startswith(f"stopped by {signal.Signals(signum).name}")
    assert f"spark-jax search --resume {run_dir}" in lines[0]
    with RunDB.open(run_dir / "run.db") as db:
        assert db.get_meta("stopped")["reason"] == "interrupted"
        assert db.get_meta("finished_at") is None
    harness.run(run_dir, resume=True)
    assert harness.summary(run_dir) == reference


def test_workers_die_with_their_parent(tmp_path):
    parent = _harness("orphan")
    try:
        child_pid = int(parent.stdout.readline())
        assert _alive(child_pid)
    finally:
        os.killpg(parent.pid, signal.SIGKILL)
        parent.communicate()
    assert _wait_for(lambda: not _alive(child_pid), limit_s=30), "worker outlived its parent"


def _alive(pid: int) -> bool:
    try:
        state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def test_candidate_workers_get_no_credentials(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "aws-secret")
    monkeypatch.setenv("HF_TOKEN", "hf-secret")
    monkeypatch.setenv("MY_LLM_KEYVAR", "custom-secret")
    monkeypatch.setenv("SPARK_JAX_HARMLESS", "kept")
    workers.register_secret_env("MY_LLM_KEYVAR")
    child = workers.ChildProcess(
        [
            sys.executable,
            "-c",
            "import os, sys\n"
            "from spark_jax.workers.child import serve\n"
            "serve(lambda r, send: send({'env': sorted(os.environ)}))",
        ],
        env=workers.python_env(),
    )
    try:
        child.wait_ready(time.monotonic() + 60)
        child.send({"type": "env"})
        names = child.read(time.monotonic() + 60)["env"]
    finally:
        child.close()
    assert "SPARK_JAX_HARMLESS" in names and "PATH" in names
    secrets = {"OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "HF_TOKEN", "MY_LLM_KEYVAR"}
    assert not secrets & set(names)


def test_failed_write_reports_the_real_error(tmp_path):
    db = RunDB.create(tmp_path / "run.db")
    try:
        pages = db._conn.execute("PRAGMA page_count").fetchone()[0]
        db._conn.execute(f"PRAGMA max_page_count = {pages}")
        with pytest.raises(sqlite3.Error) as info:
            with db.transaction():
                db.set_meta("big", "x" * 200_000)
        assert "full" in str(info.value)  # not "cannot rollback - no transaction is active"
        assert not db._conn.in_transaction
        db._conn.execute(f"PRAGMA max_page_count = {pages * 1000}")
        with db.transaction():  # the connection is still usable
            db.set_meta("small", 1)
        assert db.get_meta("small") == 1 and db.get_meta("big") is None
    finally:
        db.close()


def test_empty_and_corrupt_databases_are_one_line_errors(tmp_path):
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    with pytest.raises(RunDBError, match="is empty"):
        RunDB.open(empty)
    corrupt = tmp_path / "corrupt.db"
    corrupt.write_bytes(b"garbage" * 1000)
    with pytest.raises(RunDBError, match="corrupt") as info:
        RunDB.open(corrupt)
    assert "\n" not in str(info.value)


def test_search_error_types():
    assert issubclass(loop.SearchUsageError, loop.SearchError)
    assert issubclass(loop.EditorFailing, loop.SearchError)


def test_resume_refuses_a_config_that_disagrees_with_the_database(tmp_path):
    run_dir = tmp_path / "run"
    harness.run(run_dir, max_attempts=2)
    with pytest.raises(loop.SearchUsageError, match="differs from the config stored"):
        harness.run(run_dir, resume=True, max_attempts=3)
    with RunDB.open(run_dir / "run.db") as db:
        assert db.attempt_count() == 2


def test_resume_accepts_the_seed_program_moved_but_not_changed(tmp_path):
    """A run resumed from another checkout names its (shipped) seed by another path: the
    same text is the same seed; a different text is refused."""
    run_dir = tmp_path / "run"
    harness.run(run_dir, max_attempts=2)
    shipped = pathlib.Path(harness.config().seed_program)
    moved = tmp_path / "elsewhere" / shipped.name
    moved.parent.mkdir()
    moved.write_text(shipped.read_text(encoding="utf-8"), encoding="utf-8")
    harness.run(run_dir, resume=True, max_attempts=2, seed_program=str(moved))
    with RunDB.open(run_dir / "run.db") as db:
        assert db.attempt_count() == 2
    moved.write_text(moved.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    with pytest.raises(loop.SearchUsageError, match="at search.seed_program"):
        harness.run(run_dir, resume=True, max_attempts=2, seed_program=str(moved))


@pytest.mark.slow
def test_kill9_real_search_at_random_moments(tmp_path):
    """The real `spark-jax search` on configs/tiny.yaml (training, sandbox, workers), killed
    with SIGKILL at random moments after its database exists; each resume must equal an
    uninterrupted run. SPARK_JAX_FAULT_TRIALS sets the number of trials (default 10)."""
    trials = int(os.environ.get("SPARK_JAX_FAULT_TRIALS", "10"))
    seed = int(os.environ.get("SPARK_JAX_FAULT_SEED", time.time_ns() % 10_000))
    rng = random.Random(seed)
    argv = [sys.executable, "-m", "spark_jax.cli", "search", "--no-progress"]
    tiny = ["--config", str(harness.TINY)]

    def search(*args: str) -> subprocess.Popen:
        return subprocess.Popen(
            [*argv, *args],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )

    begin = time.monotonic()
    ref = search(*tiny, "--run-dir", str(tmp_path / "reference"))
    assert ref.wait() == 0
    span = time.monotonic() - begin
    expected = harness.summary(tmp_path / "reference")
    mid_run = 0
    for trial in range(trials):
        run_dir = tmp_path / f"trial{trial}"
        proc = search(*tiny, "--run-dir", str(run_dir))
        assert _wait_for((run_dir / "run.db").exists, proc, limit_s=600)
        time.sleep(rng.uniform(0.0, span * 0.8))
        mid_run += proc.poll() is None
        with contextlib.suppress(ProcessLookupError):  # it may have finished and exited
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        assert search("--resume", str(run_dir)).wait() == 0
        assert harness.summary(run_dir) == expected, f"trial {trial} (seed {seed})"
    print(f"\nreal kill -9 trials (seed {seed}): {trials} equal, {mid_run} killed mid-run")
