"""The child's side of a worker process: private frame pipes and the request loop.

`serve` takes fds 0/1 for the frames (duplicated privately; fd 0 then reads /dev/null and
fd 1 goes to /dev/null or to fd 2, so nothing the child prints can reach the frame stream),
enables faulthandler (fatal-signal tracebacks go to fd 2, which the parent keeps), runs
`prepare` (the slow imports), sends {'type': 'ready', 'pid', 'startup_s'} and then hands
each request to `handle` until EOF or {'type': 'exit'}. Standard library only.
"""

from __future__ import annotations

import faulthandler
import fcntl
import os
import select
import signal
import subprocess
import sys
import time
from typing import Any, Callable

from spark_jax.workers.frames import read_frame, write_frame
from spark_jax.workers.supervisor import PARENT_DEATH_FD_VAR

__all__ = ["Send", "serve"]

Send = Callable[[dict[str, Any]], None]


def serve(
    handle: Callable[[dict[str, Any], Send], None],
    *,
    prepare: Callable[[], None] | None = None,
    stdout_to_stderr: bool = False,
) -> int:
    """Serves requests until EOF or an 'exit' request; returns the exit status (0).

    Args:
      handle: called with each request and a `send(message)` for the answer frame(s).
      prepare: run once before 'ready' (its time is the startup_s reported).
      stdout_to_stderr: point fd 1 at fd 2 (a log) instead of /dev/null.
    """
    start = time.perf_counter()
    proto_in, proto_out = os.fdopen(os.dup(0), "rb"), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2 if stdout_to_stderr else devnull, 1)
    faulthandler.enable()
    _exit_with_parent()

    def send(message: dict[str, Any]) -> None:
        write_frame(proto_out, message)

    if prepare is not None:
        prepare()
    send({"type": "ready", "pid": os.getpid(), "startup_s": time.perf_counter() - start})
    while True:
        request = read_frame(proto_in)
        if request is None or request.get("type") == "exit":
            return 0
        handle(request, send)


def _exit_with_parent() -> None:
    """Dies with the parent, however it dies (kill -9 included), even in the middle of
    compiled code and even while stopped: the pipe end in `PARENT_DEATH_FD_VAR` gets SIGIO
    when its only writer, the parent, is gone, and SIGIO's default action ends the process.
    A stopped process (SIGSTOP) holds SIGIO pending, so a guardian process (`_GUARDIAN`,
    in this process group) also waits on that pipe and then SIGKILLs the group, which the
    kernel delivers to a stopped process too; it exits by itself when this process ends.
    (Linux's parent-death signal would fire when the spawning *thread* exits, too early for
    workers started from short-lived threads.)"""
    value = os.environ.pop(PARENT_DEATH_FD_VAR, "")
    if not value.isdigit():
        return
    fd = int(value)
    signal.signal(signal.SIGIO, signal.SIG_DFL)
    fcntl.fcntl(fd, fcntl.F_SETOWN, os.getpid())
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_ASYNC | os.O_NONBLOCK)
    if select.select([fd], [], [], 0)[0]:  # Already hung up: the parent died before we got here.
        os._exit(1)
    _start_guardian(fd)


# Waits on (parent-death pipe, this worker's liveness pipe); argv: the two fds.
_GUARDIAN = """
import os, select, signal, sys
death, alive = int(sys.argv[1]), int(sys.argv[2])
ready = select.select([death, alive], [], [])[0]
if death in ready and alive not in ready:
    group = os.getpgid(0)
    os.killpg(group, signal.SIGKILL)
    os.killpg(group, signal.SIGCONT)
"""


def _start_guardian(death_fd: int) -> None:
    """Starts the guardian (see `_exit_with_parent`); it sees EOF on `alive_r` when this
    process is gone (this process holds the only write end, never inherited)."""
    alive_r, alive_w = os.pipe()
    try:
        subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _GUARDIAN, str(death_fd), str(alive_r)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            close_fds=True,
            pass_fds=(death_fd, alive_r),
        )
    finally:
        os.close(alive_r)
    _GUARDIAN_PIPE.append(alive_w)  # held open until this process ends


_GUARDIAN_PIPE: list[int] = []
