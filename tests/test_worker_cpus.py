"""Local workers sharing the machine's CPUs each get a disjoint slice of them (JAX on the CPU:
XLA sizes its thread pools to the CPUs a process may use, so unpinned workers oversubscribe
every core)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from spark_jax.evaluation import worker
from spark_jax.util import accelerator

pytestmark = pytest.mark.skipif(
    not hasattr(os, "sched_getaffinity"), reason="CPU affinity is Linux-only"
)


@pytest.fixture
def four_cpus(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    monkeypatch.setattr(accelerator, "nvidia_gpu_present", lambda: False)


def _cpus(slot, num_workers, devices=None):
    return worker.worker_env(slot, devices, None, num_workers=num_workers).get(worker.CPUS_ENV)


def test_sharing_workers_get_disjoint_equal_slices(four_cpus):
    assert [_cpus(s, 2) for s in range(2)] == ["0,1", "2,3"]
    assert [_cpus(s, 4) for s in range(4)] == ["0", "1", "2", "3"]
    assert [_cpus(s, 3) for s in range(3)] == ["0", "1", "2"]  # one CPU left idle


def test_no_slice_for_one_worker_too_many_workers_or_accelerators(four_cpus, monkeypatch):
    assert _cpus(0, 1) is None
    assert [_cpus(s, 5) for s in range(5)] == [None] * 5
    assert _cpus(0, 2, devices=["0", "1"]) is None  # pinned to devices: a GPU machine
    monkeypatch.setattr(accelerator, "nvidia_gpu_present", lambda: True)
    assert _cpus(0, 2) is None


def test_an_explicit_environment_wins(four_cpus):
    env = worker.worker_env(1, None, {worker.CPUS_ENV: "0"}, num_workers=2)
    assert env[worker.CPUS_ENV] == "0"


def _affinity_after_pin(value: str) -> tuple[str, str]:
    code = (
        "import os; from spark_jax.evaluation import worker; "
        f"worker._pin_cpus({{worker.CPUS_ENV: {value!r}}}); "
        "print(sorted(os.sched_getaffinity(0)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip(), done.stderr


def test_the_worker_pins_itself_before_jax_starts():
    first = min(os.sched_getaffinity(0))
    out, _ = _affinity_after_pin(str(first))
    assert out == f"[{first}]"


def test_a_malformed_cpu_list_is_reported_and_ignored():
    out, err = _affinity_after_pin("zero,one")
    assert out == str(sorted(os.sched_getaffinity(0)))
    assert worker.CPUS_ENV in err and "not applied" in err
