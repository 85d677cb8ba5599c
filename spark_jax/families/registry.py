"""The registry of task families: each found by name, its plug-in imported on first use.

A family is one plug-in folder, `spark_jax/plugins/<name>/`: a package whose module defines
`FAMILY` (an object with the `contract.TaskFamily` members), with its seed programs in
`seeds/` and its contract beside them. `PLUGINS` below is the registry (one line per shipped
family); `$SPARK_JAX_FAMILIES` names more plug-in folders (os.pathsep-separated; the folder's
name is the family's). A family is imported the first time it is asked for by name, so this
module imports nothing of `spark_jax` but the contract and the plug-in file loader (`loader`),
and every floor can name the boundary; the plug-ins themselves (`spark_jax.plugins`) stand
above evaluation.
"""

from __future__ import annotations

import importlib
import os
import pathlib
import sys
from typing import Any

from spark_jax.families.contract import TaskFamily
from spark_jax.families.loader import import_file

__all__ = ["DEFAULT_FAMILY", "PATH_VARIABLE", "PLUGINS", "get", "names", "register"]

# The family a search, an evaluation job and a feasibility check take when none is named:
# CLRS, the paper's benchmark (records written before families existed are CLRS runs). The
# one place the default family is named.
DEFAULT_FAMILY = "clrs"

# The registry: family name -> the module that defines its `FAMILY` (imported on first use).
PLUGINS = {
    "cartpole": "spark_jax.plugins.cartpole",
    "classify": "spark_jax.plugins.classify",
    "clrs": "spark_jax.plugins.clrs",
}
PATH_VARIABLE = "SPARK_JAX_FAMILIES"  # More plug-in folders, os.pathsep-separated.

_REGISTRY: dict[str, TaskFamily] = {}


def register(family: TaskFamily) -> TaskFamily:
    """Adds `family` under its name; raises ValueError on a duplicate or a missing preset."""
    if family.name in _REGISTRY and _REGISTRY[family.name] is not family:
        raise ValueError(f"task family {family.name!r} is already registered")
    missing = {"tiny", "smoke"} - set(family.presets)
    if missing:
        raise ValueError(f"task family {family.name!r} lacks presets {sorted(missing)}")
    _REGISTRY[family.name] = family
    return family


def _plugin_folders() -> dict[str, pathlib.Path]:
    """The plug-in folders named by $SPARK_JAX_FAMILIES, by family name (the folder's)."""
    folders = {}
    for entry in os.environ.get(PATH_VARIABLE, "").split(os.pathsep):
        if entry.strip():
            folder = pathlib.Path(entry.strip()).expanduser().resolve()
            folders[folder.name] = folder
    return folders


def _import_folder(name: str, folder: pathlib.Path) -> Any:
    """Imports the plug-in package in `folder` (its relative imports work) once."""
    module_name = f"spark_jax_family_plugin_{name}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    init = folder / "__init__.py"
    if not init.is_file():
        raise ValueError(f"task family {name!r}: {folder} has no __init__.py (${PATH_VARIABLE})")
    return import_file(module_name, init, [str(folder)])


def _load(name: str) -> TaskFamily:
    """Imports the plug-in `name` and registers its `FAMILY`."""
    folders = _plugin_folders()
    try:
        if name in folders:
            module = _import_folder(name, folders[name])
        else:
            module = importlib.import_module(PLUGINS[name])
    except Exception as e:  # noqa: BLE001 - a broken plug-in is a one-line error
        raise ValueError(f"task family {name!r} cannot be imported: {type(e).__name__}: {e}") from e
    family = getattr(module, "FAMILY", None)
    if family is None or getattr(family, "name", None) != name:
        raise ValueError(f"task family {name!r}: its module defines no FAMILY named {name!r}")
    return register(family) if name not in _REGISTRY else _REGISTRY[name]


def get(name: str) -> TaskFamily:
    """The family `name` (its plug-in imported on first use); ValueError naming the known ones."""
    if name in _REGISTRY:
        return _REGISTRY[name]
    if name not in PLUGINS and name not in _plugin_folders():
        raise ValueError(f"unknown task family {name!r}; known: {', '.join(names())}")
    return _load(name)


def names() -> tuple[str, ...]:
    """Every family's name (shipped, on $SPARK_JAX_FAMILIES, or registered), sorted."""
    return tuple(sorted(set(PLUGINS) | set(_plugin_folders()) | set(_REGISTRY)))
