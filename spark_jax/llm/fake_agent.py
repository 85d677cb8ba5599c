"""A stand-in for the model agents on the file queue, for dry runs of the reliability harness:
NOT a model.

`answer_queue` claims pending prompts exactly as the model brief says (`mv pending/<id>.md
claimed/<agent>/<id>.md`), answers each from canned text by the answer format the prompt asks
for (`canned_answer`: a `FACTOR:` line, a directive, or the canned program in a ```python
block: the same for every prompt, so most methods' checks judge it), writes the answer to a
temporary name and renames it into `answers/<id>.md`. It stops after `stop_after` seconds with
nothing pending. scripts/llm_fake_queue_agent.py runs it.
"""

from __future__ import annotations

import os
import pathlib
import time

__all__ = ["answer_queue", "canned_answer"]


def canned_answer(prompt: str, program: str) -> str:
    """The canned answer in the format `prompt` asks for."""
    if "FACTOR: OPERATOR" in prompt:
        return "The operator aggregates with a max only.\nFACTOR: OPERATOR\n"
    if "Do not write code blocks" in prompt:
        return "Replace the max over triplets with a mean to smooth the messages.\n"
    return f"```python\n{program}```\n"


def _answer_pending(queue: pathlib.Path, claimed: pathlib.Path, agent: str, program: str) -> int:
    """Claims and answers every prompt pending now; returns how many it answered."""
    answered = 0
    for name in sorted(p.name for p in (queue / "pending").glob("*.md")):
        try:
            os.rename(queue / "pending" / name, claimed / name)  # the atomic claim
        except FileNotFoundError:
            continue  # another agent claimed it first
        prompt = (claimed / name).read_text(encoding="utf-8")
        tmp = queue / "answers" / f".{name}.{agent}.tmp"
        tmp.write_text(canned_answer(prompt, program), encoding="utf-8")
        os.replace(tmp, queue / "answers" / name)
        answered += 1
    return answered


def answer_queue(queue: pathlib.Path, agent: str, program: str, stop_after: float) -> None:
    """Answers `queue`'s prompts as `agent` with the canned `program` until nothing has been
    pending for `stop_after` seconds."""
    claimed = queue / "claimed" / agent
    for sub in (queue / "pending", queue / "answers", claimed):
        sub.mkdir(parents=True, exist_ok=True)
    idle_since = time.monotonic()
    while time.monotonic() - idle_since < stop_after:
        if _answer_pending(queue, claimed, agent, program):
            idle_since = time.monotonic()
        time.sleep(0.2)
