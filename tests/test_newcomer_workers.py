"""Issue 30's worker faults, each reproduced: a worker stopped with SIGSTOP when its parent
is killed with kill -9 must still go (no orphan), its guardian must not outlive a worker that
ends normally, and a killed search's `/tmp/spark-sandbox-*` directory is removed at the
next start."""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import time

from spark_jax import workers

ROOT = pathlib.Path(__file__).resolve().parents[1]
HARNESS = ROOT / "tests" / "fault_harness.py"


def _alive(pid: int) -> bool:
    try:
        state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def _wait_for(predicate, limit_s: float = 30.0) -> bool:
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def _group(pgid: int) -> list[int]:
    out = []
    for entry in pathlib.Path("/proc").iterdir():
        if entry.name.isdigit() and _alive(int(entry.name)):
            try:
                if os.getpgid(int(entry.name)) == pgid:
                    out.append(int(entry.name))
            except ProcessLookupError:
                pass
    return out


def test_a_stopped_worker_goes_when_its_parent_is_killed(tmp_path):
    parent = subprocess.Popen(
        [sys.executable, str(HARNESS), "orphan"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        child_pid = int(parent.stdout.readline())
        assert _wait_for(lambda: len(_group(child_pid)) == 2)  # the worker and its guardian
        os.kill(child_pid, signal.SIGSTOP)
        assert _wait_for(
            lambda: (
                pathlib.Path(f"/proc/{child_pid}/stat").read_text().split(")")[1].split()[0] == "T"
            )
        )
    finally:
        os.killpg(parent.pid, signal.SIGKILL)
        parent.communicate()
    try:
        assert _wait_for(lambda: not _alive(child_pid)), "a stopped worker outlived its parent"
        assert _wait_for(lambda: not _group(child_pid)), "the guardian outlived the worker"
    finally:
        for pid in _group(child_pid):
            os.kill(pid, signal.SIGKILL)


def test_the_guardian_ends_with_a_worker_that_exits_normally():
    child = workers.ChildProcess(
        [
            sys.executable,
            "-c",
            "from spark_jax.workers.child import serve; serve(lambda r, s: None)",
        ],
        env=workers.python_env(),
    )
    child.wait_ready(time.monotonic() + 60)
    pgid = child.pid
    assert _wait_for(lambda: len(_group(pgid)) == 2)
    child.close(wait_s=10)
    assert _wait_for(lambda: not _group(pgid)), "the guardian outlived its worker"


def test_a_killed_searchs_sandbox_directory_is_removed_at_the_next_start(tmp_path, monkeypatch):
    import tempfile

    from spark_jax.feasibility import sandbox

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    code = (
        "import os, sys, tempfile; tempfile.tempdir = sys.argv[1]\n"
        "from spark_jax.feasibility.sandbox import SandboxWorker\n"
        "w = SandboxWorker(); print(w._root, flush=True); os.kill(os.getpid(), 9)"
    )
    killed = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        env=workers.python_env(),
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    leftover = pathlib.Path(killed.stdout.strip())
    assert leftover.is_dir() and leftover.parent == tmp_path  # kill -9 leaks it
    live = sandbox.SandboxWorker()  # a live owner's directory is never taken
    try:
        old = time.time() - 3600
        for path in (leftover, pathlib.Path(live._root)):
            os.utime(path, (old, old))
        assert sandbox.remove_stale_roots(str(tmp_path)) == [str(leftover)]
        assert not leftover.exists() and pathlib.Path(live._root).is_dir()
        fresh = tmp_path / "spark-sandbox-fresh"  # owner file, unlocked, just made: left alone
        fresh.mkdir()
        (fresh / ".owner").touch()
        legacy = tmp_path / "spark-sandbox-legacy"  # no owner file (another version): kept
        legacy.mkdir()
        os.utime(legacy, (old, old))
        assert sandbox.remove_stale_roots(str(tmp_path)) == []
    finally:
        live.close()
    assert not pathlib.Path(live._root).exists()
    # and the next start sweeps by itself
    (tmp_path / "spark-sandbox-old").mkdir()
    (tmp_path / "spark-sandbox-old" / ".owner").touch()
    os.utime(tmp_path / "spark-sandbox-old", (old, old))
    with sandbox.SandboxWorker():
        assert not (tmp_path / "spark-sandbox-old").exists()
