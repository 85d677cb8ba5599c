#!/usr/bin/env python3
"""The channel behind the command LLM backend for the real-model experiments: a file queue.

    SPARK_LLM_QUEUE=DIR SPARK_LLM_BRIEF=FILE [SPARK_LLM_QUEUE_TIMEOUT_S=3600] \
        python3 scripts/llm_queue_model.py < PROMPT

Prints the answer; exits 1 with one line on stderr when a setting is missing or no answer came
in time. What it does: `spark_jax.llm.queue`. The `python3` that the experiments' configs name
must import spark_jax (the virtual environment on PATH, or the package installed).
"""

from __future__ import annotations

import sys

try:
    from spark_jax.llm import queue
except ImportError as e:  # one line for the call's record, not a traceback
    sys.exit(f"llm_queue_model: {sys.executable} cannot import spark_jax ({e}): put the "
             "environment that has it on PATH")  # fmt: skip


def main() -> int:
    try:
        queue.answer_stdin_from_queue()
    except queue.QueueError as e:
        sys.exit(f"llm_queue_model: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
