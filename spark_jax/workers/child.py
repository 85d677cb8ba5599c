"""The child's side of a worker process: private frame pipes and the request loop.

`serve` takes fds 0/1 for the frames (duplicated privately; fd 0 then reads /dev/null and
fd 1 goes to /dev/null or to fd 2, so nothing the child prints can reach the frame stream),
enables faulthandler (fatal-signal tracebacks go to fd 2, which the parent keeps), runs
`prepare` (the slow imports), sends {'type': 'ready', 'pid', 'startup_s'} and then hands
each request to `handle` until EOF or {'type': 'exit'}. Standard library only.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import threading
import time
from typing import Any, Callable

from spark_jax.workers.frames import read_frame, write_frame
from spark_jax.workers.supervisor import PARENT_PID_VAR

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


def _exit_with_parent(poll_s: float = 0.5) -> None:
    """Kills this process group once the parent that started us is gone (kill -9 included).

    A daemon thread watches the parent PID: when we are reparented the group (this worker
    and anything it spawned) is killed; a parent that died before we started (`PARENT_PID_VAR`
    names it, our parent is already init) too. Polling works on every POSIX system; Linux's
    parent-death signal would fire when the spawning *thread* exits, which is too early for
    workers started from short-lived threads.
    """
    expected = os.environ.get(PARENT_PID_VAR, "")
    parent = os.getppid()
    orphaned = parent == 1 and expected.isdigit() and int(expected) != 1

    def watch() -> None:
        while not orphaned and os.getppid() == parent:
            time.sleep(poll_s)
        try:
            if os.getpgid(0) == os.getpid():  # we lead our own group: take it all down
                os.killpg(os.getpid(), signal.SIGKILL)
        finally:
            os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()
