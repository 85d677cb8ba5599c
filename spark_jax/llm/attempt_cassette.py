"""A cassette keyed by attempt, for attempts that run concurrently (proposal-only mode).

`RecordBackend` replays the n-th call of a prompt with the n-th recorded answer, in the
order calls completed; with several attempts in flight that order depends on timing, and
two attempts may send the same prompt. Here each line also names its attempt (the
`ATTEMPT` context variable, set by the caller around each attempt's task), and a call is
answered by the n-th recorded line with its key *and* attempt. So a replay gives every
attempt the answers it got, whatever order the attempts finish in.

Failed calls are recorded too (`"error"`: the message), and replayed as the same
`LLMError`, so a replay reproduces an attempt that lost its answer (e.g. a timeout).

With an `inner` backend the cassette is resumed: a call already recorded for its attempt
(a run killed after the answer came) is answered from the file, not asked again; a new one
goes to `inner` and is appended. Without `inner` it is a pure replay (`ReplayMissError`
for a call never recorded).
"""

from __future__ import annotations

import collections
import contextvars
import json
import os
from typing import Any

from spark_jax.llm.base import CassetteError, LLMBackend, LLMError, LLMResponse, ReplayMissError
from spark_jax.llm.cassette import cassette_key

__all__ = ["ATTEMPT", "AttemptCassetteBackend"]

ATTEMPT: contextvars.ContextVar[int | None] = contextvars.ContextVar("attempt", default=None)


def _load(path: str) -> dict[tuple[str, int | None], list[dict[str, Any]]]:
    table: dict[tuple[str, int | None], list[dict[str, Any]]] = collections.defaultdict(list)
    if not os.path.exists(path):
        return table
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    for lineno, line in enumerate(lines, start=1):
        try:
            entry = json.loads(line)
            if "response" in entry:
                LLMResponse.from_dict(entry["response"])  # checked now, not mid-run
            elif not isinstance(entry.get("error"), str):
                raise KeyError("response or error")
            table[(entry["key"], entry.get("attempt"))].append(entry)
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            if lineno == len(lines):  # a crash mid-write: the call is asked again
                continue
            raise CassetteError(f"{path}:{lineno}: corrupt cassette line: {e}") from None
    return table


class AttemptCassetteBackend(LLMBackend):
    """Record (with `inner`) or replay (without) calls keyed by prompt and attempt."""

    def __init__(self, path: str | os.PathLike[str], inner: LLMBackend | None = None):
        self.path = os.fspath(path)
        self.inner = inner
        if inner is None and not os.path.isfile(self.path):
            raise CassetteError(f"replay cassette not found: {self.path}")
        parent = os.path.dirname(self.path)
        if inner is not None and parent:
            os.makedirs(parent, exist_ok=True)
        self._table = _load(self.path)
        self._seen: collections.Counter[tuple[str, int | None]] = collections.Counter()

    @property
    def name(self) -> str:
        inner = self.inner.name if self.inner is not None else os.path.basename(self.path)
        return f"{'record' if self.inner is not None else 'replay'}:{inner}"

    async def _complete(self, role: str, prompt: str, *, system: str | None = None) -> LLMResponse:
        key, p_hash, s_hash = cassette_key(role, prompt, system)
        slot = (key, ATTEMPT.get())
        n = self._seen[slot]
        self._seen[slot] += 1
        recorded = self._table.get(slot, [])
        if n < len(recorded):
            entry = recorded[n]
            if "error" in entry:
                raise LLMError(entry["error"])
            return LLMResponse.from_dict(entry["response"])
        if self.inner is None:
            detail = f"attempt {slot[1]}: recorded {len(recorded)} time(s), asked again"
            raise ReplayMissError(role, p_hash, detail if recorded else f"not in {self.path}")
        entry: dict[str, Any] = dict(
            key=key, attempt=slot[1], role=role, prompt_sha256=p_hash, system_sha256=s_hash
        )
        try:
            response = await self.inner.complete(role, prompt, system=system)
        except LLMError as e:
            self._append({**entry, "error": str(e)})
            raise LLMError(str(e)) from None  # as a replay raises it
        self._append({**entry, "response": response.to_dict()})
        return response

    def _append(self, entry: dict[str, Any]) -> None:
        line = json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n"
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(line)
            f.flush()

    async def aclose(self) -> None:
        if self.inner is not None:
            await self.inner.aclose()
