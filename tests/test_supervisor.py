"""The worker supervisor (`spark_jax.workers`), on a tiny frame-speaking child (no JAX).

Each test starts its own child (`python -c CHILD`, ~50 ms) through `workers.serve` and drives
it with one request; every failure path must end with the child (and its process group)
dead and classified.
"""

from __future__ import annotations

import io
import os
import signal
import sys
import time

import pytest

from spark_jax import workers

CHILD = r"""
import os, signal, subprocess, sys, time
from spark_jax import workers

def handle(request, send):
    kind = request['type']
    if kind == 'echo':
        send({'type': 'echo', 'value': request['value']})
    elif kind == 'sleep':
        time.sleep(60)
    elif kind == 'alloc':
        hog = b'x' * (request['mb'] << 20)  # Written, so resident.
        time.sleep(60)
    elif kind == 'segv':
        os.kill(os.getpid(), signal.SIGSEGV)
    elif kind == 'die':
        sys.stderr.write(request['text'])
        sys.stderr.flush()
        os._exit(request['code'])
    elif kind == 'spawn':
        grandchild = subprocess.Popen(['sleep', '60'])
        send({'type': 'spawned', 'pid': grandchild.pid})
        time.sleep(60)
    elif kind == 'big':
        send({'type': 'big', 'blob': 'y' * request['size']})

sys.exit(workers.serve(handle))
"""


@pytest.fixture
def child():
    proc = workers.ChildProcess([sys.executable, "-c", CHILD], env=workers.python_env())
    proc.wait_ready(time.monotonic() + 30)
    yield proc
    proc.kill()


def _failure(
    child: workers.ChildProcess, request: dict, timeout_s: float = 10.0, **read_kwargs
) -> workers.Failure:
    child.send(request)
    with pytest.raises(workers.ChildFailed) as info:
        child.read(time.monotonic() + timeout_s, **read_kwargs)
    assert child.poll() is not None  # Dead and reaped.
    return info.value.failure


def _gone(pid: int) -> bool:
    """No such process, or only a zombie left for init to reap."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            return any(line.startswith("State:") and "Z" in line.split()[1] for line in f)
    except FileNotFoundError:
        return True


def test_frames_round_trip():
    message = {"type": "x", "value": [1, 2.5, "é", None]}
    stream = io.BytesIO(workers.encode_frame(message) * 2)
    assert workers.read_frame(stream) == message
    assert workers.read_frame(stream) == message
    assert workers.read_frame(stream) is None


def test_ready_then_round_trip(child):
    assert child.ready and 0 < child.startup_s < 30
    for value in ("a", list(range(1000))):
        child.send({"type": "echo", "value": value})
        assert child.read(time.monotonic() + 10) == {"type": "echo", "value": value}
    assert child.poll() is None


def test_timeout_kills_and_is_timeout(child):
    begin = time.monotonic()
    failure = _failure(child, {"type": "sleep"}, timeout_s=0.5)
    assert failure.kind == "timeout" and 0.5 <= time.monotonic() - begin < 5
    assert failure.returncode == -signal.SIGKILL


def test_rss_above_the_cap_is_memory(child):
    failure = _failure(child, {"type": "alloc", "mb": 300}, memory_cap=child.memory_cap(100))
    assert failure.kind == "memory" and "memory_mb 100" in failure.reason


def test_rss_within_the_cap_is_not_memory(child):
    failure = _failure(
        child, {"type": "alloc", "mb": 20}, timeout_s=1.0, memory_cap=child.memory_cap(200)
    )
    assert failure.kind == "timeout"


def test_death_by_signal_names_it(child):
    failure = _failure(child, {"type": "segv"})
    assert (failure.kind, failure.signal, failure.returncode) == ("signal", "SIGSEGV", -11)
    assert "killed by SIGSEGV" in failure.reason
    assert "Segmentation fault" in failure.reason  # faulthandler's text, from the stderr tail.


def test_exit_status_is_error_with_the_stderr_tail(child):
    failure = _failure(child, {"type": "die", "code": 3, "text": "bye now"})
    assert (failure.kind, failure.returncode, failure.signal) == ("error", 3, None)
    assert "exited with status 3" in failure.reason and "bye now" in failure.reason


def test_exit_after_an_allocation_failure_text_is_memory(child):
    failure = _failure(child, {"type": "die", "code": 1, "text": "std::bad_alloc while compiling"})
    assert failure.kind == "memory" and failure.returncode == 1


def test_sigkill_from_outside_is_memory_but_from_here_is_signal(child):
    child.send({"type": "sleep"})
    os.kill(child.pid, signal.SIGKILL)  # As the kernel's OOM killer would.
    with pytest.raises(workers.ChildFailed) as info:
        child.read(time.monotonic() + 10)
    assert info.value.failure.kind == "memory"

    other = workers.ChildProcess([sys.executable, "-c", CHILD], env=workers.python_env())
    other.wait_ready(time.monotonic() + 30)
    other.terminate()
    with pytest.raises(workers.ChildFailed) as info:
        other.read(time.monotonic() + 10)
    assert (info.value.failure.kind, info.value.failure.signal) == ("signal", "SIGKILL")


def test_kill_takes_the_process_group(child):
    child.send({"type": "spawn"})
    grandchild = child.read(time.monotonic() + 10)["pid"]
    assert not _gone(grandchild)
    deadline = time.monotonic() + 5
    assert child.kill() == -signal.SIGKILL
    while not _gone(grandchild) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _gone(grandchild)


def test_frame_cap_kills(child):
    child.send({"type": "big", "size": 5000})
    with pytest.raises(workers.FrameTooLarge, match="cap 1000"):
        child.read(time.monotonic() + 10, frame_cap=1000)
    assert child.poll() is not None


def test_send_to_a_dead_child_is_classified(child):
    child.send({"type": "die", "code": 4, "text": ""})
    time.sleep(0.3)
    with pytest.raises(workers.ChildFailed) as info:
        for _ in range(100):  # The pipe may take a write or two to break.
            child.send({"type": "echo", "value": "x" * 10000})
    assert info.value.failure.returncode == 4


def test_log_file_mode_keeps_only_this_childs_tail(tmp_path):
    log = tmp_path / "worker.log"
    log.write_text("Out of memory from an earlier worker\n")
    proc = workers.ChildProcess(
        [sys.executable, "-c", CHILD], env=workers.python_env(), log_path=str(log)
    )
    proc.wait_ready(time.monotonic() + 30)
    failure = _failure(proc, {"type": "die", "code": 2, "text": "logged line"})
    assert failure.kind == "error" and "logged line" in failure.reason
    assert "earlier worker" not in proc.tail()
    assert "--- worker start" in log.read_text() and "logged line" in log.read_text()


def test_close_asks_the_child_to_exit(child):
    child.close(wait_s=5)
    assert child.poll() == 0


@pytest.mark.parametrize(
    "text, memory",
    [
        ("MemoryError: allocation refused", True),
        ("XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate", True),
        ("std::bad_alloc", True),
        ("OSError: [Errno 12] Cannot allocate memory", True),
        ("jax: failed to allocate 4.0GiB", True),
        ("CUDA out of memory", True),
        ("ValueError: shapes (3,) and (4,) mismatch", False),
        ("memory_mb must be positive", False),
    ],
)
def test_memory_markers(text, memory):
    assert workers.mentions_memory(text) is memory
    assert workers.is_memory_error(RuntimeError(text)) is memory


def test_is_memory_error_looks_at_the_cause():
    assert workers.is_memory_error(MemoryError())
    try:
        try:
            raise RuntimeError("RESOURCE_EXHAUSTED")
        except RuntimeError as e:
            raise ValueError("program failed") from e
    except ValueError as outer:
        assert workers.is_memory_error(outer)
    assert not workers.is_memory_error(ValueError("program failed"))


def test_classify_exit_without_a_process():
    assert workers.classify_exit(-signal.SIGKILL).kind == "memory"
    assert workers.classify_exit(-signal.SIGKILL, killed_here=True).kind == "signal"
    assert workers.classify_exit(-signal.SIGABRT, "std::bad_alloc").kind == "memory"
    assert workers.classify_exit(0).kind == "error"
    assert workers.classify_exit(-200).signal == "signal 200"


def test_failure_mapped_into_a_callers_vocabulary():
    types = {"timeout": "timeout", "memory": "memory", "signal": "crash", "error": "crash"}
    assert workers.classify_exit(-11).mapped(types, "late") == ("crash", "worker killed by SIGSEGV")
    assert workers.Failure("timeout", "no frame").mapped(types, "no result in 5 s") == (
        "timeout",
        "no result in 5 s",
    )
    with pytest.raises(AssertionError):
        workers.Failure("crash", "not a kind")
