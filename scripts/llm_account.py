#!/usr/bin/env python3
"""The account of the stand-in model of a real-model results folder: who answered, under which
brief, which answers may have been built with tools, and the tables with and without them
(`spark_jax.results.llm_account`).

    python scripts/llm_account.py [--check] results/llm-reliability
    python scripts/llm_account.py [--check] results/llm-trained
"""

import sys

from spark_jax.results.llm_account import main

if __name__ == "__main__":
    sys.exit(main())
