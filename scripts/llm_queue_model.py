#!/usr/bin/env python3
"""The "model" behind the command LLM backend for the reliability experiment: a file queue.

The command backend runs this script once per LLM call with the prompt on stdin. It writes
the prompt, unchanged, to `$SPARK_LLM_QUEUE/pending/<id>.md` (atomically: a temporary name
in the same folder, then a rename; the id is unique: UTC time, pid and the prompt's hash),
waits for `$SPARK_LLM_QUEUE/answers/<id>.md` (written by a model agent, see
results/llm-reliability/model_brief.md), prints it to stdout and exits 0. After
`$SPARK_LLM_QUEUE_TIMEOUT_S` seconds (default 3600) with no answer it exits 1 with one line
on stderr (the prompt stays in the queue for the record). Standard library only.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import sys
import time

POLL_S = 1.0


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


def main() -> int:
    queue, timeout = _queue(), _timeout()
    prompt = sys.stdin.read()
    pid = prompt_id(prompt)
    tmp = queue / "pending" / f".{pid}.md.tmp"
    tmp.write_text(prompt, encoding="utf-8")
    os.replace(tmp, queue / "pending" / f"{pid}.md")
    answer = queue / "answers" / f"{pid}.md"
    deadline = time.monotonic() + timeout
    while not answer.is_file():
        if time.monotonic() > deadline:
            print(f"llm_queue_model: no answer to {pid} after {timeout:g}s", file=sys.stderr)
            return 1
        time.sleep(POLL_S)
    sys.stdout.write(answer.read_text(encoding="utf-8"))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
