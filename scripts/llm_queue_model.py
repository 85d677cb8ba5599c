#!/usr/bin/env python3
"""The channel behind the command LLM backend for the real-model experiments: a file queue.

The command backend runs this script once per LLM call with the prompt on stdin. It writes
the prompt, unchanged and nothing else (no method, role or run), to
`$SPARK_LLM_QUEUE/pending/<id>.md` (atomically: a temporary name in the same folder, then a
rename; the id is unique: UTC time, pid and the prompt's hash), waits for
`$SPARK_LLM_QUEUE/answers/<id>.md` (written by the agent that claimed the prompt by moving it
to `claimed/<agent>/`; see scripts/llm_model_brief.md), prints it to stdout and exits 0.

Per call it reports on one standard-error line (spark_jax/llm/channel.py, read into
the call's record by the command backend): the answerer (the `claimed/<agent>/` folder), the
brief in force (`$SPARK_LLM_BRIEF`, required: its `Version:` line, sha256 and stated
answer-speed bound), the wait before the claim and the time from claim to answer. An answer
faster than the brief's bound is flagged in the record and in the experiments' tables.

After `$SPARK_LLM_QUEUE_TIMEOUT_S` seconds (default 3600) with no answer it exits 1 with one
line on stderr (the prompt stays in the queue for the record). Standard library only (it loads
channel.py by its path).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pathlib
import sys
import time

POLL_S = 0.1
_CHANNEL = pathlib.Path(__file__).resolve().parents[1] / "spark_jax/llm/channel.py"


def _channel_module():
    spec = importlib.util.spec_from_file_location("_spark_llm_channel", _CHANNEL)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


channel = _channel_module()


def _brief():
    path = os.environ.get("SPARK_LLM_BRIEF")
    if not path:
        sys.exit("llm_queue_model: SPARK_LLM_BRIEF is not set (the answerers' brief)")
    try:
        return channel.read_brief(path)
    except ValueError as e:
        sys.exit(f"llm_queue_model: {e}")


def _queue() -> pathlib.Path:
    root = os.environ.get("SPARK_LLM_QUEUE")
    if not root:
        sys.exit("llm_queue_model: SPARK_LLM_QUEUE is not set (the queue folder)")
    path = pathlib.Path(root)
    for sub in ("pending", "claimed", "answers", "unclear"):
        (path / sub).mkdir(parents=True, exist_ok=True)
    return path


def _timeout() -> float:
    raw = os.environ.get("SPARK_LLM_QUEUE_TIMEOUT_S", "3600")
    try:
        value = float(raw)
    except ValueError:
        sys.exit(f"llm_queue_model: SPARK_LLM_QUEUE_TIMEOUT_S must be seconds (got {raw!r})")
    if value <= 0:
        sys.exit(f"llm_queue_model: SPARK_LLM_QUEUE_TIMEOUT_S must be > 0 (got {raw!r})")
    return value


def prompt_id(prompt: str) -> str:
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    digest = hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:12]
    return f"{stamp}-{time.monotonic_ns() % 10**9:09d}-{os.getpid()}-{digest}"


def _answerer(queue: pathlib.Path, pid: str) -> str:
    owners = sorted(p.parent.name for p in queue.glob(f"claimed/*/{pid}.md"))
    return ",".join(owners) or "unknown (never claimed through claimed/)"


def main() -> int:
    queue, timeout, brief = _queue(), _timeout(), _brief()
    prompt = sys.stdin.read()
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
            print(f"llm_queue_model: no answer to {pid} after {timeout:g}s", file=sys.stderr)
            return 1
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
    sys.stdout.write(text)
    sys.stdout.flush()
    print(record.line(), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
