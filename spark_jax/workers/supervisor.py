"""The parent's side of a worker process: spawn, frames, limits, kill, and why it ended.

`ChildProcess` runs a command in its own session (process group), talks frames over its
stdin/stdout (`frames`), keeps its stderr either as a bounded in-memory tail (a drain thread)
or appended to a log file, watches its RSS against a `MemoryCap` while waiting for a frame,
and kills the whole process group. Every way a child fails while the parent waits on it is
one `Failure` of kind:
  'timeout'  no frame before the deadline (killed here);
  'memory'   RSS above the cap (killed here), or it died with an out-of-memory text in its
             stderr, or by a SIGKILL not sent here (the kernel's OOM killer);
  'signal'   it died by another signal (`Failure.signal` names it, e.g. 'SIGSEGV');
  'error'    it exited with a status.
Callers map these onto their own vocabulary. Out-of-memory texts are recognised by one list,
`MEMORY_MARKERS` (`mentions_memory`, `is_memory_error`), which the children use too.
Deadlines are on `time.monotonic`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pathlib
import re
import signal
import subprocess
import threading
import time
from typing import Any, Mapping, Sequence

from spark_jax.workers.frames import FrameEOF, FrameTimeout, encode_frame, read_frame_from

__all__ = [
    "PARENT_DEATH_FD_VAR",
    "register_secret_env",
    "package_pythonpath",
    "scrubbed_env",
    "KINDS",
    "MEMORY_MARKERS",
    "ChildFailed",
    "ChildProcess",
    "Failure",
    "MemoryCap",
    "classify_exit",
    "is_memory_error",
    "mentions_memory",
    "python_env",
    "rss_bytes",
    "signal_name",
]

KINDS = ("timeout", "memory", "signal", "error")
# Texts of allocation failures: Python, XLA/JAX (host and device), C++, libc.
MEMORY_MARKERS = (
    "MemoryError",
    "Out of memory",
    "out of memory",
    "bad_alloc",
    "RESOURCE_EXHAUSTED",
    "Cannot allocate memory",
    "failed to allocate",
)
POLL_S = 0.05  # How often a waiting parent polls the pipe and the RSS.
EXIT_GRACE_S = 1.0  # After EOF, how long the child may take to exit before it is killed.
_REASON_TAIL = 400  # Characters of the stderr tail quoted in a reason.
_READY_FRAME_CAP = 1 << 16

# The directory holding this spark_jax package: children put it first on PYTHONPATH.
_PACKAGE_ROOT = pathlib.Path(__file__).resolve().parents[2]


def package_pythonpath(env: Mapping[str, str]) -> str:
    """PYTHONPATH for a child that must import this same spark_jax: the directory holding
    the package first, then `env`'s own PYTHONPATH."""
    return os.pathsep.join([str(_PACKAGE_ROOT), *filter(None, [env.get("PYTHONPATH")])])


def mentions_memory(text: str) -> bool:
    """Whether `text` (an exception text, a stderr tail) reports an allocation failure."""
    return any(marker in text for marker in MEMORY_MARKERS)


def is_memory_error(e: BaseException) -> bool:
    """Whether `e` or its direct cause is a MemoryError or reads like an allocation failure."""
    chain = [e] + ([e.__cause__] if e.__cause__ is not None else [])
    return any(isinstance(x, MemoryError) or mentions_memory(str(x)) for x in chain)


def signal_name(signum: int) -> str:
    """'SIGSEGV' for 11; 'signal N' for numbers without a name."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def rss_bytes(pid: int) -> int | None:
    """The resident set size of process `pid` (None when unknown, e.g. it is gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return None
    return None


# The child's end of a pipe only the parent writes to: it hangs up when the parent dies.
PARENT_DEATH_FD_VAR = "SPARK_JAX_PARENT_DEATH_FD"
# Variable names that hold credentials: API keys, tokens, secrets, cloud logins.
_SECRET_NAME = re.compile(
    r"(API_?KEY|TOKEN|SECRET|PASSW(OR)?D|CREDENTIAL|PRIVATE_?KEY|ACCESS_?KEY|SESSION_?KEY"
    r"|AUTH|COOKIE|^OPENAI_|^ANTHROPIC_|^AWS_|^AZURE_|^GH_|^GITHUB_|^HUGGING_?FACE)",
    re.IGNORECASE,
)
_EXTRA_SECRET_NAMES: set[str] = set()


def register_secret_env(name: str) -> None:
    """Adds a variable name (e.g. a config's `api_key_env`) to those `scrubbed_env` drops."""
    _EXTRA_SECRET_NAMES.add(name)


def scrubbed_env(environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` without credential variables (API keys, tokens, passwords, cloud logins,
    and the names given to `register_secret_env`)."""
    return {
        k: v
        for k, v in environ.items()
        if k not in _EXTRA_SECRET_NAMES and not _SECRET_NAME.search(k)
    }


def python_env(overrides: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment for a `python -m spark_jax....` child, plus `overrides`.

    PYTHONPATH starts with the directory holding this spark_jax (the child imports the same
    code), bytecode is not written, TF_CPP_MIN_LOG_LEVEL defaults to 3. Credentials are
    left out (`scrubbed_env`): children run candidate programs.
    """
    env = scrubbed_env(os.environ)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["PYTHONPATH"] = package_pythonpath(env)
    env.update(overrides or {})
    return env


@dataclasses.dataclass(frozen=True)
class Failure:
    """Why a child failed: kind (one of KINDS), a one-line reason (with the stderr tail of a
    death), the exit status (negative: the signal; None when unknown) and the signal name."""

    kind: str
    reason: str
    returncode: int | None = None
    signal: str | None = None

    def __post_init__(self) -> None:
        assert self.kind in KINDS, self.kind

    def mapped(self, types: Mapping[str, str], timeout_reason: str) -> tuple[str, str]:
        """(`types[kind]`, reason) in a caller's vocabulary; a timeout's reason is
        `timeout_reason` (the caller knows its limit, the supervisor only a deadline)."""
        return types[self.kind], timeout_reason if self.kind == "timeout" else self.reason


def classify_exit(returncode: int | None, tail: str = "", *, killed_here: bool = False) -> Failure:
    """Classifies a child that ended by itself (or was SIGKILLed here, `killed_here`).

    'memory' when `tail` reports an allocation failure or a SIGKILL came from elsewhere;
    else 'signal' for a death by signal and 'error' for an exit status.
    """
    tail = tail.strip()
    name = None
    if returncode is not None and returncode < 0:
        name = signal_name(-returncode)
        how = f"killed by {name}"
        oom_kill = returncode == -signal.SIGKILL and not killed_here
        kind = "memory" if oom_kill or mentions_memory(tail) else "signal"
    else:
        how = f"exited with status {returncode}"
        kind = "memory" if mentions_memory(tail) else "error"
    reason = f"worker {how}" + (f": ...{tail[-_REASON_TAIL:]}" if tail else "")
    return Failure(kind, reason, returncode, name)


class ChildFailed(Exception):
    """The child failed while the parent sent to it or waited on it; it is dead now."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.reason)
        self.failure = failure


@dataclasses.dataclass(frozen=True)
class MemoryCap:
    """An RSS limit: `baseline_bytes` (the child's RSS when set) + `extra_bytes`."""

    baseline_bytes: int
    extra_bytes: int

    def excess(self, rss: int | None) -> str | None:
        """None within the cap, else the reason of a 'memory' failure."""
        if rss is None or rss <= self.baseline_bytes + self.extra_bytes:
            return None
        return (
            f"worker RSS {rss >> 20} MiB above the cap ({self.baseline_bytes >> 20} MiB "
            f"at start + memory_mb {self.extra_bytes >> 20}); killed"
        )


class ChildProcess:
    """One supervised worker process (mutable; one owner thread, `terminate` from any).

    Started on construction with `start_new_session=True` (its own process group), stdin and
    stdout as the frame pipes. Its stderr goes to `log_path` (appended, after a start line)
    or, without one, into a bounded in-memory tail of `tail_bytes`. After any exception from
    `send`, `read` or `wait_ready` the child is dead (killed and reaped here).
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        log_path: str | None = None,
        tail_bytes: int = 8192,
    ) -> None:
        self.log_path = log_path
        self.started = time.monotonic()
        self.ready = False
        self.startup_s: float | None = None  # Start to the 'ready' frame.
        self._buffer = bytearray()
        self._tail = bytearray()
        self._tail_bytes = tail_bytes
        self._log_offset = 0
        self._killed_here = False
        log = open(log_path, "ab") if log_path is not None else None  # noqa: SIM115
        # The child dies with us (kill -9 included): it gets the read end of a pipe whose
        # only writer we hold; when the kernel closes our end, the child gets SIGIO.
        death_r, self._death_w = os.pipe()
        env = dict(os.environ if env is None else env)
        env[PARENT_DEATH_FD_VAR] = str(death_r)
        try:
            if log is not None:
                log.write(f"--- worker start {time.strftime('%Y-%m-%d %H:%M:%S')}\n".encode())
                log.flush()
                self._log_offset = log.tell()
            self._proc = subprocess.Popen(
                list(argv),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log if log is not None else subprocess.PIPE,
                cwd=cwd,
                env=env,
                start_new_session=True,
                close_fds=True,
                pass_fds=(death_r,),
            )
        except BaseException:
            os.close(self._death_w)
            raise
        finally:
            os.close(death_r)
            if log is not None:
                log.close()  # The child has its own descriptor.
        self._drain: threading.Thread | None = None
        if log is None:
            self._drain = threading.Thread(target=self._drain_stderr, daemon=True)
            self._drain.start()

    @property
    def pid(self) -> int:
        return self._proc.pid

    def poll(self) -> int | None:
        """The exit status, or None while it runs."""
        return self._proc.poll()

    def rss_bytes(self) -> int | None:
        return rss_bytes(self._proc.pid)

    def memory_cap(self, memory_mb: int) -> MemoryCap:
        """A cap of `memory_mb` MiB above the child's RSS now."""
        return MemoryCap(self.rss_bytes() or 0, int(memory_mb) * 2**20)

    # -- frames ------------------------------------------------------------------------------
    def send(self, message: dict[str, Any]) -> None:
        """Writes one frame; raises ChildFailed when the child is gone."""
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.write(encode_frame(message))
            self._proc.stdin.flush()
        except (OSError, ValueError):  # Broken pipe, or closed after a kill.
            raise ChildFailed(self._death()) from None

    def read(
        self, deadline: float, *, frame_cap: int | None = None, memory_cap: MemoryCap | None = None
    ) -> dict[str, Any]:
        """The next frame, waiting until `deadline` (time.monotonic).

        Raises ChildFailed ('timeout' at the deadline, 'memory' when the RSS exceeds
        `memory_cap`, or the classified death when the pipe closes), FrameTooLarge (a frame
        above `frame_cap`) or ValueError (a garbled frame); in every case the child is killed.
        """
        assert self._proc.stdout is not None

        def watchdog() -> None:
            excess = memory_cap.excess(self.rss_bytes()) if memory_cap is not None else None
            if excess is not None:
                raise ChildFailed(Failure("memory", excess))

        try:
            return read_frame_from(
                self._proc.stdout.fileno(),
                self._buffer,
                deadline,
                clock=time.monotonic,
                frame_cap=frame_cap,
                poll_s=POLL_S,
                tick=None if memory_cap is None else watchdog,
            )
        except FrameEOF:
            failure = self._death()
        except FrameTimeout:
            rc = self.kill()
            failure = Failure("timeout", "no frame before the deadline; killed", rc)
        except ChildFailed as e:
            rc = self.kill()
            failure = dataclasses.replace(e.failure, returncode=rc)
        except BaseException:
            self.kill()
            raise
        raise ChildFailed(failure)

    def wait_ready(self, deadline: float) -> None:
        """Waits for the child's first frame, which must be {'type': 'ready'} (once).

        Raises like `read`, and ValueError for any other first frame (the child is killed).
        """
        if self.ready:
            return
        frame = self.read(deadline, frame_cap=_READY_FRAME_CAP)
        if frame.get("type") != "ready":
            self.kill()
            raise ValueError(f"unexpected first frame {frame.get('type')!r}")
        self.ready = True
        self.startup_s = time.monotonic() - self.started

    # -- ending ------------------------------------------------------------------------------
    def _death(self) -> Failure:
        """Reaps a child that closed its pipe (killing it after a grace) and classifies it."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout=EXIT_GRACE_S)
        rc = self.kill()
        return classify_exit(rc, self.tail(), killed_here=self._killed_here)

    def terminate(self) -> None:
        """SIGKILLs the child's process group (safe from any thread; reaps nothing)."""
        if self._proc.poll() is None:
            self._killed_here = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, signal.SIGKILL)  # Its leftovers too, if it is gone.

    def kill(self) -> int | None:
        """Kills the process group, reaps the child and closes its pipes; its exit status."""
        self.terminate()
        try:
            rc = self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            rc = None
        streams = [self._proc.stdin, self._proc.stdout]
        if self._drain is not None:
            self._drain.join(timeout=2)
            if not self._drain.is_alive():  # Else a survivor holds stderr; closing blocks.
                streams.append(self._proc.stderr)
        for stream in streams:
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()
        if self._death_w >= 0:
            os.close(self._death_w)
            self._death_w = -1
        return rc

    def close(self, wait_s: float = 0.0) -> None:
        """Asks the child to exit ({'type': 'exit'}), gives it `wait_s`, then kills."""
        with contextlib.suppress(ChildFailed):
            self.send({"type": "exit"})
        if wait_s > 0:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=wait_s)
        self.kill()

    # -- stderr ------------------------------------------------------------------------------
    def _drain_stderr(self) -> None:
        stream = self._proc.stderr
        assert stream is not None
        with contextlib.suppress(OSError, ValueError):
            while True:
                chunk = stream.read1(4096)
                if not chunk:
                    return
                self._tail += chunk
                del self._tail[: -self._tail_bytes]

    def tail(self, limit: int = 600) -> str:
        """The last `limit` characters this child wrote to stderr (its part of the log)."""
        if self.log_path is None:
            return bytes(self._tail).decode("utf-8", "replace").strip()[-limit:]
        try:
            with open(self.log_path, "rb") as f:
                f.seek(max(self._log_offset, os.path.getsize(self.log_path) - limit))
                return f.read().decode("utf-8", "replace").strip()[-limit:]
        except OSError:
            return ""
