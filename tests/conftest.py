"""Shared pytest fixtures: paths to the seed programs, small tasks, quiet logs."""

from __future__ import annotations

import atexit
import os
import pathlib
import shutil
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# One persistent XLA compilation cache for the session, inherited by every worker, sandbox and
# CLI the tests start: a program that several tests train (the tiny seeds on bfs/dfs) compiles
# once per session, as session fixtures do for in-process work. Fresh per session, so a test
# run never reads compiles from an earlier one.
if "JAX_COMPILATION_CACHE_DIR" not in os.environ:
    _CACHE = tempfile.mkdtemp(prefix="spark-jax-test-xla-")
    os.environ["JAX_COMPILATION_CACHE_DIR"] = _CACHE
    atexit.register(shutil.rmtree, _CACHE, ignore_errors=True)

# No test downloads a dataset (20News, Mice Protein fetch on first use): a missing cache is
# the one-line error at once, with or without a network. Tests of the download path unset it.
os.environ.setdefault("SPARK_JAX_OFFLINE", "1")

import pytest  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
PROCESSORS = ROOT / "processors"
SEEDS = ("triplet_gmpnn", "mpnn", "pgn")


# XLA's quick CPU compile (backend optimisation level 0, no fusion emitters): compiling is
# nearly all of what a tiny-preset run costs (training takes ~0.1 s a job), and these flags cut
# it by over half with the same scores to the bit on the tasks measured (bfs, minimum).
QUICK_XLA_FLAGS = "--xla_backend_optimization_level=0 --xla_cpu_use_fusion_emitters=false"


@pytest.fixture
def quick_compiles(monkeypatch):
    """The processes the test starts (workers, probes, searches; all of a run alike) compile
    with QUICK_XLA_FLAGS and keep every compile, however quick, in the session's XLA cache."""
    flags = f"{os.environ.get('XLA_FLAGS', '')} {QUICK_XLA_FLAGS}".strip()
    monkeypatch.setenv("XLA_FLAGS", flags)
    monkeypatch.setenv("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")


@pytest.fixture(scope="session")
def seed_paths() -> dict[str, pathlib.Path]:
    return {name: PROCESSORS / f"{name}.py" for name in SEEDS}


@pytest.fixture(scope="session")
def check_options():
    """Feasibility options at the tiny preset's processor sizes. The 60 s limit only bounds a
    check that hangs (tests of the limit itself set their own): a seed's semantic stage has
    taken over 20 s with two pytest workers on a loaded 2-core machine."""
    from spark_jax.config import protocol as config
    from spark_jax.feasibility.checker import CheckOptions

    return CheckOptions.from_protocol(config.get_preset("tiny"), timeout_s=60.0, memory_mb=1024)


@pytest.fixture(scope="session")
def sandbox_worker(check_options):
    """One warm sandbox worker for the whole session (cold start outside any check's clock)."""
    from spark_jax.feasibility.sandbox import SandboxWorker

    with SandboxWorker() as w:
        w.start(check_options.to_dict())
        yield w
