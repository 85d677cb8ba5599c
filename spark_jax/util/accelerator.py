"""Whether JAX will silently train on the CPU of a machine that has an NVIDIA GPU, and which
backend and devices JAX will train on.

The quick start's `pip install -e .` brings a CPU-only jaxlib; on a GPU machine JAX then
falls back to the CPU without a word and a search runs ten to a hundred times slower. This
check costs no backend initialisation (initialising one would take a GPU's memory in the
parent process of the evaluation workers): it looks for the driver's device files and for an
installed CUDA plugin of jaxlib. `backend_lines` asks a short-lived child process (no
preallocation) which backend and devices JAX picks: the training commands print it at start
on a terminal (`SPARK_JAX_BACKEND_LINE=1` anywhere, `0` never), with a warning when a GPU is
visible but JAX runs on the CPU.
"""

from __future__ import annotations

import collections
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

__all__ = [
    "backend_lines",
    "cpu_fallback_note",
    "cuda_plugin_installed",
    "nvidia_gpu_present",
    "probe_backend",
    "wants_backend_line",
]

_CUDA_PLUGINS = (
    "jax_cuda12_plugin",
    "jax_cuda13_plugin",
    "jax_plugins.xla_cuda12",
    "jax_plugins.xla_cuda13",
)


def nvidia_gpu_present(proc_root: str = "/proc/driver/nvidia/gpus") -> bool:
    """True when the NVIDIA driver lists at least one GPU on this machine."""
    root = Path(proc_root)
    try:
        return root.is_dir() and any(root.iterdir())
    except OSError:
        return False


def cuda_plugin_installed() -> bool:
    """True when a CUDA plugin of jaxlib is importable (imports nothing)."""
    for name in _CUDA_PLUGINS:
        try:
            if importlib.util.find_spec(name) is not None:
                return True
        except (ImportError, ValueError):
            continue
    return False


def cpu_fallback_note(environ: os._Environ | dict | None = None) -> str | None:
    """A one-line note when a GPU is present, no CUDA jaxlib is installed and nobody asked
    for the CPU (JAX_PLATFORMS=cpu or CUDA_VISIBLE_DEVICES='' silence it); else None."""
    env = os.environ if environ is None else environ
    if "cpu" in env.get("JAX_PLATFORMS", "").lower() or env.get("CUDA_VISIBLE_DEVICES") == "":
        return None
    if not nvidia_gpu_present() or cuda_plugin_installed():
        return None
    return (
        "note: this machine has an NVIDIA GPU but JAX has no CUDA plugin, so it trains on the "
        "CPU; install one with pip install -e '.[cuda12]' (driver >= 525) or '.[cuda13]' "
        "(driver >= 580), or set JAX_PLATFORMS=cpu to silence this"
    )


_PROBE = (
    "import json, jax; "
    "print(json.dumps([jax.default_backend(), [d.device_kind for d in jax.devices()]]))"
)


def probe_backend(timeout_s: float = 120.0) -> tuple[str, list[str]] | None:
    """(backend, device kinds) JAX picks here, asked of a child process (no preallocation,
    so no GPU memory is held); None when JAX cannot start or does not answer in time."""
    env = dict(os.environ, XLA_PYTHON_CLIENT_PREALLOCATE="false", TF_CPP_MIN_LOG_LEVEL="3")
    try:
        done = subprocess.run(
            [sys.executable, "-c", _PROBE],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            env=env,
            stdin=subprocess.DEVNULL,
        )
        backend, kinds = json.loads(done.stdout.strip().splitlines()[-1])
        return str(backend), [str(k) for k in kinds]
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError, TypeError):
        return None


def backend_lines(
    probe: tuple[str, list[str]] | None, environ: os._Environ | dict | None = None
) -> list[str]:
    """The startup lines for a probe's answer: 'JAX backend: gpu; devices: NVIDIA H100 x1',
    and a warning when the machine has an NVIDIA GPU but JAX runs on the CPU (unless the CPU
    was asked for: JAX_PLATFORMS=cpu or CUDA_VISIBLE_DEVICES='')."""
    env = os.environ if environ is None else environ
    if probe is None:
        return ["JAX backend: unknown (JAX did not start in a probe process)"]
    backend, kinds = probe
    counts = collections.Counter(kinds)
    devices = ", ".join(f"{k} x{n}" for k, n in sorted(counts.items())) or "none"
    lines = [f"JAX backend: {backend}; devices: {devices}"]
    asked_cpu = "cpu" in env.get("JAX_PLATFORMS", "").lower()
    if backend == "cpu" and nvidia_gpu_present() and not asked_cpu:
        if env.get("CUDA_VISIBLE_DEVICES") == "":
            return lines
        why = (
            "its CUDA plugin is installed but did not start (driver or CUDA version? run "
            "python -c 'import jax; print(jax.devices())' to see the error)"
            if cuda_plugin_installed()
            else "no CUDA plugin is installed: pip install -e '.[cuda12]' (driver >= 525) "
            "or '.[cuda13]' (driver >= 580)"
        )
        lines.append(f"warning: this machine has an NVIDIA GPU but JAX runs on the CPU: {why}")
    return lines


def wants_backend_line(stream, environ: os._Environ | dict | None = None) -> bool:
    """Whether to print the backend line: on a terminal, or as SPARK_JAX_BACKEND_LINE says."""
    env = os.environ if environ is None else environ
    flag = env.get("SPARK_JAX_BACKEND_LINE")
    if flag in ("0", "1"):
        return flag == "1"
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
