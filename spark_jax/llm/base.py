"""The LLM boundary: one async contract, an immutable response record, and errors.

Contract (every backend, LLM or not):

  response = await backend.complete(role, prompt, system=None)

  * `role` names the SPARK role ('route', 'directive', 'edit', ...); it is only used
    for bookkeeping, caching keys and dynamic test servers, never sent as a message.
  * returns exactly one `LLMResponse`; `response.text` is the answer with any
    reasoning removed, `response.reasoning` holds the removed part ('' if none).
  * raises only `LLMError` subclasses for failures at the boundary.
  * `backend.stats()` returns `{role: {'calls', 'failures', 'prompt_tokens',
    'completion_tokens', 'latency_s', 'attempts'}}`; never secrets.

Subclasses implement `_complete` (same signature as `complete`) and `name`;
`complete` wraps `_complete` with the per-role bookkeeping.
"""

from __future__ import annotations

import abc
import dataclasses
import time
from typing import Any

__all__ = [
    "LLMBackend",
    "LLMResponse",
    "LLMError",
    "LLMHTTPError",
    "LLMRetriesExhausted",
    "LLMResponseError",
    "LLMTimeoutError",
    "LLMCommandError",
    "ReplayMissError",
    "CassetteError",
]


class LLMError(RuntimeError):
    """Base class of every failure at the LLM boundary.

    Attributes (set by `LLMBackend.complete` on the way out):
      attempts: requests made before giving up (1 unless the backend says more).
      latency_s: wall time of the failed call, retries and backoff included.
    """

    attempts: int = 1
    latency_s: float = 0.0


class LLMHTTPError(LLMError):
    """A non-retryable HTTP error (e.g. 400/401/403/404/422).

    Attributes:
      status_code: the HTTP status.
      message: the server's error message (secrets redacted).
    """

    def __init__(self, status_code: int, message: str):
        super().__init__(f"HTTP {status_code}: {message}")
        self.status_code = status_code
        self.message = message


class LLMResponseError(LLMError):
    """The server answered 200 but the body is unusable (bad JSON, no choices)."""


class LLMRetriesExhausted(LLMError):
    """Every attempt failed with a retryable error.

    Attributes:
      attempts: number of requests made.
      last_error: a short description of the last failure (secrets redacted).
    """

    def __init__(self, attempts: int, last_error: str):
        super().__init__(f"gave up after {attempts} attempts; last error: {last_error}")
        self.attempts = attempts
        self.last_error = last_error


class LLMTimeoutError(LLMError):
    """A backend (e.g. a command) did not answer within its timeout."""


class LLMCommandError(LLMError):
    """A command backend exited with a non-zero status.

    Attributes:
      returncode: the exit status.
      stderr_tail: the last characters of its standard error.
    """

    def __init__(self, returncode: int, stderr_tail: str):
        super().__init__(f"command exited with status {returncode}; stderr tail:\n{stderr_tail}")
        self.returncode = returncode
        self.stderr_tail = stderr_tail


class ReplayMissError(LLMError):
    """A replay cassette holds no (more) response for this role and prompt hash."""

    def __init__(self, role: str, prompt_hash: str, detail: str = ""):
        msg = f"no recorded response for role={role!r} hash={prompt_hash}"
        super().__init__(msg + (f" ({detail})" if detail else ""))
        self.role = role
        self.prompt_hash = prompt_hash


class CassetteError(LLMError):
    """A cassette file is corrupt (the message names the line number)."""


@dataclasses.dataclass(frozen=True)
class LLMResponse:
    """One completed call.

    Attributes:
      role: the SPARK role that asked.
      text: the answer, reasoning removed.
      reasoning: reasoning text kept apart from the answer ('' if none).
      model: model name reported by the backend.
      backend: backend kind ('openai', 'command', 'offline', ...).
      prompt_tokens: prompt tokens (from the server, else estimated).
      completion_tokens: completion tokens (from the server, else estimated).
      latency_s: wall time of the call, retries and backoff included.
      attempts: number of tries (HTTP requests) it took.
      is_llm: False for non-LLM editors (e.g. the rule-based offline backend).
      tokens_estimated: True when token counts are a len/4 estimate.
      finish_reason: the server's finish reason ('length' means truncated), or ''.
      channel: what a queue channel reported for the call (`channel.ChannelRecord.to_dict`:
        the answerer, the brief in force, the answer's time and speed), or {} if none.
    """

    role: str
    text: str
    reasoning: str = ""
    model: str = ""
    backend: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    attempts: int = 1
    is_llm: bool = True
    tokens_estimated: bool = False
    finish_reason: str = ""
    channel: dict[str, Any] = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serializable dict of all fields."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LLMResponse:
        """Inverse of `to_dict`; unknown keys are ignored, missing ones defaulted."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclasses.dataclass
class _RoleStats:
    calls: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    attempts: int = 0


class LLMBackend(abc.ABC):
    """Abstract async LLM backend; see the module docstring for the contract."""

    @property
    @abc.abstractmethod
    def name(self) -> str:
        """Short human-readable identity, e.g. 'openai:qwen3-8b'. Never secrets."""

    @abc.abstractmethod
    async def _complete(self, role: str, prompt: str, *, system: str | None = None) -> LLMResponse:
        """Backend-specific completion; raise `LLMError` subclasses on failure."""

    async def complete(self, role: str, prompt: str, *, system: str | None = None) -> LLMResponse:
        """Answers `prompt` for `role` and records per-role stats.

        Args:
          role: SPARK role name (non-empty).
          prompt: the user message.
          system: optional system message.

        Returns:
          The `LLMResponse` (text with reasoning removed).

        Raises:
          LLMError: (or a subclass) on any failure; counted in `failures`.
        """
        if not role:
            raise ValueError("role must be a non-empty string")
        stats = self._stats_for(role)
        start = time.perf_counter()
        try:
            response = await self._complete(role, prompt, system=system)
        except LLMError as e:
            e.latency_s = time.perf_counter() - start
            stats.failures += 1
            stats.latency_s += e.latency_s
            stats.attempts += e.attempts
            raise
        stats.calls += 1
        stats.prompt_tokens += response.prompt_tokens
        stats.completion_tokens += response.completion_tokens
        stats.latency_s += time.perf_counter() - start
        stats.attempts += response.attempts
        return response

    def _stats_for(self, role: str) -> _RoleStats:
        table: dict[str, _RoleStats] = self.__dict__.setdefault("_role_stats", {})
        return table.setdefault(role, _RoleStats())

    def stats(self) -> dict[str, dict[str, float]]:
        """Per-role counters: calls, failures, prompt/completion tokens, latency_s, attempts."""
        table: dict[str, _RoleStats] = self.__dict__.get("_role_stats", {})
        return {role: dataclasses.asdict(s) for role, s in sorted(table.items())}

    async def aclose(self) -> None:
        """Releases resources (HTTP connections, files). Safe to call twice."""

    async def __aenter__(self) -> LLMBackend:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"
