#!/usr/bin/env python3
"""A stand-in for the model agents, for dry runs of the reliability harness: NOT a model.

    python scripts/llm_fake_queue_agent.py QUEUE --agent fake-1 [--program FILE] [--stop-after S]

Claims pending prompts as the model brief says and answers each from canned text
(`spark_jax.llm.fake_agent`). Stops after `--stop-after` seconds with nothing pending
(default 30).
"""

from __future__ import annotations

import argparse
import pathlib
import sys

from spark_jax.config.assets import seed_program_path
from spark_jax.llm import fake_agent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("queue", type=pathlib.Path)
    ap.add_argument("--agent", default="fake-1")
    ap.add_argument("--program", help="the canned program (default: the shipped triplet_gmpnn)")
    ap.add_argument("--stop-after", type=float, default=30.0)
    args = ap.parse_args()
    program = pathlib.Path(args.program or seed_program_path("triplet_gmpnn"))
    fake_agent.answer_queue(
        args.queue, args.agent, program.read_text(encoding="utf-8"), args.stop_after
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
