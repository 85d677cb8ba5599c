"""Whether JAX will silently train on the CPU of a machine that has an NVIDIA GPU.

The quick start's `pip install -e .` brings a CPU-only jaxlib; on a GPU machine JAX then
falls back to the CPU without a word and a search runs ten to a hundred times slower. This
check costs no backend initialisation (initialising one would take a GPU's memory in the
parent process of the evaluation workers): it looks for the driver's device files and for an
installed CUDA plugin of jaxlib.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

__all__ = ["cpu_fallback_note", "cuda_plugin_installed", "nvidia_gpu_present"]

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
