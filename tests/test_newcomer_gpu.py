"""Issue 30's GPU start: a line naming JAX's backend and devices, and a warning when an
NVIDIA GPU is visible but JAX runs on the CPU (the CUDA plugin missing or not starting)."""

from __future__ import annotations

import io

from spark_jax import cli
from spark_jax.util import accelerator


def test_the_probe_names_this_machines_backend():
    backend, kinds = accelerator.probe_backend()
    assert backend in ("cpu", "gpu", "tpu") and kinds
    line = accelerator.backend_lines((backend, kinds), {})[0]
    assert line.startswith(f"JAX backend: {backend}; devices: ")


def test_gpu_visible_but_jax_on_cpu_warns(monkeypatch):
    monkeypatch.setattr(accelerator, "nvidia_gpu_present", lambda: True)
    monkeypatch.setattr(accelerator, "cuda_plugin_installed", lambda: False)
    lines = accelerator.backend_lines(("cpu", ["cpu"]), {})
    assert lines[0] == "JAX backend: cpu; devices: cpu x1"
    assert "NVIDIA GPU but JAX runs on the CPU" in lines[1] and ".[cuda12]" in lines[1]
    monkeypatch.setattr(accelerator, "cuda_plugin_installed", lambda: True)
    assert "did not start" in accelerator.backend_lines(("cpu", ["cpu"]), {})[1]
    assert len(accelerator.backend_lines(("cpu", ["cpu"]), {"JAX_PLATFORMS": "cpu"})) == 1
    assert len(accelerator.backend_lines(("cpu", ["cpu"]), {"CUDA_VISIBLE_DEVICES": ""})) == 1
    gpu = accelerator.backend_lines(("gpu", ["NVIDIA H100 80GB HBM3"] * 2), {})
    assert gpu == ["JAX backend: gpu; devices: NVIDIA H100 80GB HBM3 x2"]
    assert accelerator.backend_lines(None, {})[0].startswith("JAX backend: unknown")


def test_backend_line_on_a_terminal_or_when_asked():
    tty, pipe = io.StringIO(), io.StringIO()
    tty.isatty = lambda: True
    assert accelerator.wants_backend_line(tty, {}) and not accelerator.wants_backend_line(pipe, {})
    assert accelerator.wants_backend_line(pipe, {"SPARK_JAX_BACKEND_LINE": "1"})
    assert not accelerator.wants_backend_line(tty, {"SPARK_JAX_BACKEND_LINE": "0"})


def test_training_commands_print_it_first(monkeypatch, capsys):
    monkeypatch.setenv("SPARK_JAX_BACKEND_LINE", "1")
    monkeypatch.setattr(accelerator, "probe_backend", lambda: ("gpu", ["NVIDIA H100"]))
    assert cli.main(["evaluate", "processors/mpnn.py", "--preset", "nope"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "JAX backend: gpu; devices: NVIDIA H100 x1" and "unknown preset" in err[1]
    assert cli.main(["report", "/nonexistent"]) == 2  # not a training command: no probe
    assert "JAX backend" not in capsys.readouterr().err
