"""What the file-queue channel of the command backend records per call, and the speed rule.

The queue channel (`llm.queue`, run by `scripts/llm_queue_model.py`) hands an answerer the
prompt text only (the bytes the command backend writes to its stdin, in `pending/<id>.md`) and
waits for `answers/<id>.md`. Per call it reports, on one standard-error line that starts with `PREFIX`
(JSON after it):

  answerer        the agent that claimed the prompt (`claimed/<agent>/<id>.md`)
  brief_version   the `Version:` line of the brief the answerers work under ($SPARK_LLM_BRIEF)
  brief_sha256    that file's hash (what exactly was in force)
  bound_chars_per_s  the brief's stated bound on answer speed (`Answer-speed bound:` line)
  wait_s          from the prompt's arrival in `pending/` to its claim
  answer_s        from the claim to the answer (what the answerer spent on it)
  chars           the answer's length in characters

`CommandBackend` reads that line into `LLMResponse.channel` (kept in the cassette) and names
the answerer and the brief in the call's model label (kept in the run database). An answer
written faster than the bound (`chars / answer_s`) is flagged: an agent that writes its answer
token by token after reading the prompt does not reach it, one that builds the answer with
tools (copying the parent with `sed`, a script) does.

Standard library only.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import pathlib
import re
from typing import Any

__all__ = ["PREFIX", "Brief", "ChannelRecord", "chars_per_s", "is_fast", "read_brief"]

PREFIX = "spark-llm-channel: "
_VERSION = re.compile(r"^\s*Version:\s*(\S.*?)\s*$", re.MULTILINE)
_BOUND = re.compile(
    r"^\s*Answer-speed bound:\s*([0-9]+(?:\.[0-9]+)?)\s*characters per second", re.MULTILINE
)


@dataclasses.dataclass(frozen=True)
class Brief:
    """The brief in force: its version line, its file's sha256, its stated speed bound."""

    version: str
    sha256: str
    bound_chars_per_s: float


def read_brief(path: str | pathlib.Path) -> Brief:
    """Reads a brief's `Version: ...` and `Answer-speed bound: N characters per second`
    lines.

    Raises:
      ValueError: (one line) the file is missing or lacks either line.
    """
    path = pathlib.Path(path)
    if not path.is_file():
        raise ValueError(f"brief {path}: no such file")
    data = path.read_bytes()
    text = data.decode("utf-8")
    version, bound = _VERSION.search(text), _BOUND.search(text)
    if not version or not bound:
        missing = "a 'Version:' line" if not version else "an 'Answer-speed bound:' line"
        raise ValueError(f"brief {path}: needs {missing}")
    return Brief(version.group(1), hashlib.sha256(data).hexdigest(), float(bound.group(1)))


def chars_per_s(chars: int, seconds: float) -> float:
    """Answer speed; infinite for an answer that took no measurable time."""
    return chars / seconds if seconds > 0 else float("inf")


def is_fast(chars: int, seconds: float, bound: float) -> bool:
    """True when the answer came faster than `bound` characters per second."""
    return chars_per_s(chars, seconds) > bound


@dataclasses.dataclass(frozen=True)
class ChannelRecord:
    """One call through the queue channel (see the module docstring)."""

    answerer: str
    brief_version: str
    brief_sha256: str
    bound_chars_per_s: float
    wait_s: float
    answer_s: float
    chars: int

    @property
    def chars_per_s(self) -> float:
        return chars_per_s(self.chars, self.answer_s)

    @property
    def fast(self) -> bool:
        """Faster than the brief's bound: possibly built with tools rather than written."""
        return is_fast(self.chars, self.answer_s, self.bound_chars_per_s)

    def to_dict(self) -> dict[str, Any]:
        speed = self.chars_per_s
        speed = round(speed, 1) if speed != float("inf") else None  # None: no measurable time
        return {**dataclasses.asdict(self), "chars_per_s": speed, "fast": self.fast}

    def line(self) -> str:
        """The standard-error line the queue script prints."""
        return PREFIX + json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_stderr(cls, text: str) -> ChannelRecord | None:
        """The last channel line of a command's standard error, or None if it has none.

        Raises:
          ValueError: a channel line that is not a complete record.
        """
        lines = [ln[len(PREFIX) :] for ln in text.splitlines() if ln.startswith(PREFIX)]
        if not lines:
            return None
        try:
            data = json.loads(lines[-1])
            return cls(**{f.name: data[f.name] for f in dataclasses.fields(cls)})
        except (json.JSONDecodeError, KeyError, TypeError) as e:
            raise ValueError(f"bad channel record on stderr: {lines[-1][:200]!r} ({e})") from None

    def label(self, model: str) -> str:
        """The call's model label: what answered it, under which brief, how fast."""
        speed = f"{self.chars_per_s:.0f} chars/s"
        if self.fast:
            speed += f", FASTER than the brief's bound {self.bound_chars_per_s:g}"
        return (
            f"{model}: agent {self.answerer}, brief {self.brief_version} "
            f"(sha256 {self.brief_sha256[:12]}), answered in {self.answer_s:.1f} s ({speed})"
        )
