#!/usr/bin/env python3
"""A stand-in for the model agents, for dry runs of the reliability harness: NOT a model.

    python scripts/llm_fake_queue_agent.py QUEUE --agent fake-1 [--program FILE] [--stop-after S]

Claims pending prompts exactly as the model brief says (`mv pending/<id>.md
claimed/<agent>/<id>.md`), answers each from canned text by the answer format the prompt
asks for (a `FACTOR:` line, a directive, or the canned program in a ```python block: the
same for every prompt, so most methods' checks judge it), writes the answer to a temporary
name and renames it into `answers/<id>.md`. Stops after `--stop-after` seconds with nothing
pending (default 30).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time


def answer(prompt: str, program: str) -> str:
    if "FACTOR: OPERATOR" in prompt:
        return "The operator aggregates with a max only.\nFACTOR: OPERATOR\n"
    if "Do not write code blocks" in prompt:
        return "Replace the max over triplets with a mean to smooth the messages.\n"
    return f"```python\n{program}```\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("queue")
    ap.add_argument("--agent", default="fake-1")
    ap.add_argument("--program", help="the canned program (default: the shipped triplet_gmpnn)")
    ap.add_argument("--stop-after", type=float, default=30.0)
    args = ap.parse_args()
    queue = pathlib.Path(args.queue)
    claimed = queue / "claimed" / args.agent
    for sub in (queue / "pending", queue / "answers", claimed):
        sub.mkdir(parents=True, exist_ok=True)
    program_path = args.program or (
        pathlib.Path(__file__).resolve().parents[1] / "processors" / "triplet_gmpnn.py"
    )
    program = pathlib.Path(program_path).read_text(encoding="utf-8")
    idle_since = time.monotonic()
    while time.monotonic() - idle_since < args.stop_after:
        names = sorted(p.name for p in (queue / "pending").glob("*.md"))
        for name in names:
            try:
                os.rename(queue / "pending" / name, claimed / name)  # the atomic claim
            except FileNotFoundError:
                continue  # another agent claimed it first
            prompt = (claimed / name).read_text(encoding="utf-8")
            tmp = queue / "answers" / f".{name}.{args.agent}.tmp"
            tmp.write_text(answer(prompt, program), encoding="utf-8")
            os.replace(tmp, queue / "answers" / name)
            idle_since = time.monotonic()
        time.sleep(0.2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
