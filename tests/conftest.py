"""Shared pytest fixtures: paths to the seed programs, small tasks, quiet logs."""
from __future__ import annotations

import os
import pathlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import pytest  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
PROCESSORS = ROOT / "processors"
SEEDS = ("triplet_gmpnn", "mpnn", "pgn")


@pytest.fixture(scope="session")
def seed_paths() -> dict[str, pathlib.Path]:
    return {name: PROCESSORS / f"{name}.py" for name in SEEDS}
