"""A backend that pipes the prompt to a command and reads the answer from stdout.

Works with CLIs such as `ollama run MODEL` or `llm -m MODEL`. The command gets
`system + '\\n\\n' + prompt` (or just the prompt) on stdin; its stdout, with
`<think>` blocks split off as for the OpenAI backend, is the answer.

A command that is a channel to other answerers (the file queue, `scripts/llm_queue_model.py`)
reports per call who answered, under which brief, and how fast, on a standard-error line
(`channel.PREFIX`): it is kept in `LLMResponse.channel` and named in the response's model label.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import signal
import time

from spark_jax.llm import _text
from spark_jax.llm.base import LLMBackend, LLMCommandError, LLMResponse, LLMTimeoutError
from spark_jax.llm.channel import ChannelRecord

__all__ = ["CommandBackend"]

_STDERR_TAIL = 2000


class CommandBackend(LLMBackend):
    """Runs `command` once per call.

    Args:
      command: argv list (run directly), or a string (run through the shell).
      timeout_s: wall-clock limit; on expiry the process group is killed and
        `LLMTimeoutError` is raised.
      model: label reported in `LLMResponse.model` (default: the command's program).
    """

    def __init__(
        self, command: list[str] | str, timeout_s: float = 600.0, model: str | None = None
    ):
        if not command:
            raise ValueError("command must be non-empty")
        if timeout_s <= 0:
            raise ValueError("timeout_s must be > 0")
        self.command = command
        self.timeout_s = timeout_s
        program = shlex.split(command)[0] if isinstance(command, str) else command[0]
        self.model = model or os.path.basename(program)

    @property
    def name(self) -> str:
        return f"command:{self.model}"

    async def _spawn(self) -> asyncio.subprocess.Process:
        pipes = dict(
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        new_session = os.name == "posix"  # So a timeout can kill the whole group.
        if isinstance(self.command, str):
            return await asyncio.create_subprocess_shell(
                self.command, start_new_session=new_session, **pipes
            )
        return await asyncio.create_subprocess_exec(
            *self.command, start_new_session=new_session, **pipes
        )

    @staticmethod
    def _kill(proc: asyncio.subprocess.Process) -> None:
        try:
            if os.name == "posix":
                os.killpg(proc.pid, signal.SIGKILL)
            else:
                proc.kill()
        except (ProcessLookupError, PermissionError):
            pass

    async def _complete(self, role: str, prompt: str, *, system: str | None = None) -> LLMResponse:
        stdin = f"{system}\n\n{prompt}" if system else prompt
        start = time.perf_counter()
        proc = await self._spawn()
        try:
            out, err = await asyncio.wait_for(
                proc.communicate(stdin.encode("utf-8")), timeout=self.timeout_s
            )
        except asyncio.TimeoutError:
            self._kill(proc)
            await proc.wait()
            raise LLMTimeoutError(
                f"command {self.name!r} timed out after {self.timeout_s}s and was killed"
            ) from None
        except BaseException:
            self._kill(proc)
            raise
        if proc.returncode != 0:
            tail = err.decode("utf-8", errors="replace")[-_STDERR_TAIL:].strip()
            raise LLMCommandError(int(proc.returncode or 0), tail)
        raw = out.decode("utf-8", errors="replace")
        answer, reasoning = _text.split_reasoning(raw)
        try:
            record = ChannelRecord.from_stderr(err.decode("utf-8", errors="replace"))
        except ValueError as e:
            raise LLMCommandError(0, str(e)) from None
        return LLMResponse(
            role=role,
            text=answer,
            reasoning=reasoning,
            model=record.label(self.model) if record else self.model,
            channel=record.to_dict() if record else {},
            backend="command",
            prompt_tokens=_text.estimate_tokens(stdin),
            completion_tokens=_text.estimate_tokens(raw),
            latency_s=time.perf_counter() - start,
            attempts=1,
            is_llm=True,
            tokens_estimated=True,
        )
