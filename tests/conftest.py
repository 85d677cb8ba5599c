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


@pytest.fixture(scope="session")
def check_options():
    """Feasibility options at the tiny preset's processor sizes, with short limits."""
    from spark_jax.config import protocol as config
    from spark_jax.feasibility.checker import CheckOptions

    return CheckOptions.from_protocol(config.get_preset("tiny"), timeout_s=20.0, memory_mb=1024)


@pytest.fixture(scope="session")
def sandbox_worker(check_options):
    """One warm sandbox worker for the whole session (cold start outside any check's clock)."""
    from spark_jax.feasibility.sandbox import SandboxWorker

    with SandboxWorker() as w:
        w.start(check_options.to_dict())
        yield w
