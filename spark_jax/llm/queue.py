"""The file-queue channel behind the command LLM backend for the real-model experiments.

The command backend runs `scripts/llm_queue_model.py` once per LLM call with the prompt on
stdin; it calls `answer_stdin_from_queue`, which writes the prompt, unchanged and nothing else
(no method, role or run), to `$SPARK_LLM_QUEUE/pending/<id>.md` (atomically: a temporary name
in the same folder, then a rename; the id is unique: UTC time, pid and the prompt's hash),
waits for `$SPARK_LLM_QUEUE/answers/<id>.md` (written by the agent that claimed the prompt by
moving it to `claimed/<agent>/`; see scripts/llm_model_brief.md), prints it to stdout.

Per call it reports on one standard-error line (`channel.ChannelRecord`, read into the call's
record by the command backend): the answerer (the `claimed/<agent>/` folder), the brief in
force (`$SPARK_LLM_BRIEF`, required: its `Version:` line, sha256 and stated answer-speed
bound), the wait before the claim and the time from claim to answer. An answer faster than the
brief's bound is flagged in the record and in the experiments' tables.

After `$SPARK_LLM_QUEUE_TIMEOUT_S` seconds (default 3600) with no answer it raises
`QueueError` (the prompt stays in the queue for the record). Standard library only, beside
`channel`.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import sys
import time
from typing import Mapping

from spark_jax.llm import channel

__all__ = ["POLL_S", "QueueError", "answer_stdin_from_queue", "ask", "prompt_id", "settings"]

POLL_S = 0.1
FOLDERS = ("pending", "claimed", "answers", "unclear")


class QueueError(Exception):
    """A missing or bad setting, or no answer in time; the message is one line."""


def _brief(environ: Mapping[str, str]) -> channel.Brief:
    path = environ.get("SPARK_LLM_BRIEF")
    if not path:
        raise QueueError("SPARK_LLM_BRIEF is not set (the answerers' brief)")
    try:
        return channel.read_brief(path)
    except ValueError as e:
        raise QueueError(str(e)) from None


def _queue(environ: Mapping[str, str]) -> pathlib.Path:
    root = environ.get("SPARK_LLM_QUEUE")
    if not root:
        raise QueueError("SPARK_LLM_QUEUE is not set (the queue folder)")
    path = pathlib.Path(root)
    for sub in FOLDERS:
        (path / sub).mkdir(parents=True, exist_ok=True)
    return path


def _timeout(environ: Mapping[str, str]) -> float:
    raw = environ.get("SPARK_LLM_QUEUE_TIMEOUT_S", "3600")
    try:
        value = float(raw)
    except ValueError:
        raise QueueError(f"SPARK_LLM_QUEUE_TIMEOUT_S must be seconds (got {raw!r})") from None
    if value <= 0:
        raise QueueError(f"SPARK_LLM_QUEUE_TIMEOUT_S must be > 0 (got {raw!r})")
    return value


def settings(environ: Mapping[str, str]) -> tuple[pathlib.Path, float, channel.Brief]:
    """The queue folder (its subfolders made), the timeout and the brief, from `environ`.

    Raises:
      QueueError: a variable missing or malformed, or a brief without its two lines.
    """
    return _queue(environ), _timeout(environ), _brief(environ)


def prompt_id(prompt: str) -> str:
    """A unique name for one prompt in the queue: UTC time, a counter, pid, the text's hash."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    digest = hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:12]
    return f"{stamp}-{time.monotonic_ns() % 10**9:09d}-{os.getpid()}-{digest}"


def _answerer(queue: pathlib.Path, pid: str) -> str:
    owners = sorted(p.parent.name for p in queue.glob(f"claimed/*/{pid}.md"))
    return ",".join(owners) or "unknown (never claimed through claimed/)"


def ask(
    queue: pathlib.Path, prompt: str, timeout: float, brief: channel.Brief
) -> tuple[str, channel.ChannelRecord]:
    """Puts `prompt` in `queue`'s pending/ and waits for its answer; returns the answer and
    the call's channel record.

    Raises:
      QueueError: no answer after `timeout` seconds.
    """
    pid = prompt_id(prompt)
    tmp = queue / "pending" / f".{pid}.md.tmp"
    pending = queue / "pending" / f"{pid}.md"
    tmp.write_text(prompt, encoding="utf-8")
    os.replace(tmp, pending)
    arrived = time.monotonic()
    claimed = None
    answer = queue / "answers" / f"{pid}.md"
    deadline = arrived + timeout
    while not answer.is_file():
        now = time.monotonic()
        if claimed is None and not pending.exists():
            claimed = now
        if now > deadline:
            raise QueueError(f"no answer to {pid} after {timeout:g}s")
        time.sleep(POLL_S)
    answered = time.monotonic()
    claimed = answered if claimed is None else claimed  # claimed and answered within a poll
    text = answer.read_text(encoding="utf-8")
    record = channel.ChannelRecord(
        answerer=_answerer(queue, pid),
        brief_version=brief.version,
        brief_sha256=brief.sha256,
        bound_chars_per_s=brief.bound_chars_per_s,
        wait_s=round(claimed - arrived, 3),
        answer_s=round(answered - claimed, 3),
        chars=len(text),
    )
    return text, record


def answer_stdin_from_queue(environ: Mapping[str, str] = os.environ) -> None:
    """The command's whole job: the prompt from stdin through the queue, the answer to stdout,
    the channel record on one stderr line.

    Raises:
      QueueError: see `settings` and `ask`.
    """
    queue, timeout, brief = settings(environ)
    text, record = ask(queue, sys.stdin.read(), timeout, brief)
    sys.stdout.write(text)
    sys.stdout.flush()
    print(record.line(), file=sys.stderr)
