"""Record/replay of LLM calls in a JSONL cassette, so a run can be replayed exactly.

Each line is one completed call:

  {"key": "<role>:<sha256(system_sha256 + prompt_sha256)>", "role": ...,
   "prompt_sha256": sha256(prompt), "system_sha256": sha256(system or ''),
   "response": LLMResponse.to_dict()}

Hashing the two hashes (rather than `system + prompt`) keeps the key unambiguous
where the system/prompt boundary moves. Prompts themselves are not stored.
Identical calls (same key) are replayed in recorded order: the n-th call with a
key gets the n-th recorded response.
"""

from __future__ import annotations

import collections
import json
import logging
import os
from typing import Any

from spark_jax.llm import _text
from spark_jax.llm.base import CassetteError, LLMBackend, LLMResponse, ReplayMissError

__all__ = ["RecordBackend", "ReplayBackend", "cassette_key", "load_cassette"]

_log = logging.getLogger(__name__)


def cassette_key(role: str, prompt: str, system: str | None) -> tuple[str, str, str]:
    """Returns `(key, prompt_sha256, system_sha256)` for a call."""
    p_hash = _text.sha256_hex(prompt)
    s_hash = _text.sha256_hex(system or "")
    return f"{role}:{_text.sha256_hex(s_hash + p_hash)}", p_hash, s_hash


def load_cassette(path: str | os.PathLike[str]) -> dict[str, list[LLMResponse]]:
    """Reads a cassette into `{key: [responses in recorded order]}`.

    A corrupt *last* line (a crash mid-write) is ignored with a warning; any other
    corrupt line raises `CassetteError` naming its line number.
    """
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    while lines and not lines[-1].strip():
        lines.pop()
    table: dict[str, list[LLMResponse]] = collections.defaultdict(list)
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            key = entry["key"]
            response = LLMResponse.from_dict(entry["response"])
            if not isinstance(key, str):
                raise TypeError("key is not a string")
        except (ValueError, KeyError, TypeError) as e:
            if lineno == len(lines):
                _log.warning(
                    "%s:%d: ignoring truncated last cassette line (%s)",
                    path,
                    lineno,
                    type(e).__name__,
                )
                continue
            raise CassetteError(f"{path}:{lineno}: corrupt cassette line: {e}") from None
        table[key].append(response)
    return dict(table)


class RecordBackend(LLMBackend):
    """Wraps `inner` and appends every successful call to the cassette at `path`.

    The file is opened in append mode for each line and flushed, so a crash loses at
    most the line being written, and recording into an existing cassette resumes it.
    Failed calls are not recorded (the error propagates).
    """

    def __init__(self, inner: LLMBackend, path: str | os.PathLike[str]):
        self.inner = inner
        self.path = os.fspath(path)
        parent = os.path.dirname(self.path)
        if parent:
            os.makedirs(parent, exist_ok=True)

    @property
    def name(self) -> str:
        return f"record:{self.inner.name}"

    async def _complete(self, role: str, prompt: str, *, system: str | None = None) -> LLMResponse:
        response = await self.inner.complete(role, prompt, system=system)
        key, p_hash, s_hash = cassette_key(role, prompt, system)
        entry: dict[str, Any] = {
            "key": key,
            "role": role,
            "prompt_sha256": p_hash,
            "system_sha256": s_hash,
            "response": response.to_dict(),
        }
        line = json.dumps(entry, ensure_ascii=False, sort_keys=True) + "\n"
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


class ReplayBackend(LLMBackend):
    """Answers from a cassette written by `RecordBackend`; never calls a model.

    Returns the recorded `LLMResponse` unchanged (same text, tokens, latency).
    Raises `ReplayMissError` when the key was never recorded, or was recorded fewer
    times than it is now asked for.
    """

    def __init__(self, path: str | os.PathLike[str]):
        self.path = os.fspath(path)
        self._table = load_cassette(self.path)
        self._seen: collections.Counter[str] = collections.Counter()

    @property
    def name(self) -> str:
        return f"replay:{os.path.basename(self.path)}"

    def __len__(self) -> int:
        return sum(len(v) for v in self._table.values())

    async def _complete(self, role: str, prompt: str, *, system: str | None = None) -> LLMResponse:
        key, p_hash, _ = cassette_key(role, prompt, system)
        recorded = self._table.get(key, [])
        n = self._seen[key]
        if n >= len(recorded):
            detail = (
                f"recorded {len(recorded)} time(s), asked again"
                if recorded
                else f"not in {self.path}"
            )
            raise ReplayMissError(role, key.split(":", 1)[1], detail)
        self._seen[key] += 1
        return recorded[n]
