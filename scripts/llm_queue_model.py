#!/usr/bin/env python3
"""The channel behind the command LLM backend for the real-model experiments: a file queue.

    SPARK_LLM_QUEUE=DIR SPARK_LLM_BRIEF=FILE [SPARK_LLM_QUEUE_TIMEOUT_S=3600] \
        python3 scripts/llm_queue_model.py < PROMPT

Prints the answer; exits 1 with one line on stderr when a setting is missing or no answer came
in time. What it does: `spark_jax.llm.queue`.
"""

from __future__ import annotations

import sys

from spark_jax.llm import queue


def main() -> int:
    try:
        queue.answer_stdin_from_queue()
    except queue.QueueError as e:
        sys.exit(f"llm_queue_model: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
