"""Imports a plug-in by its path: a Python file, or a folder's `__init__.py` as a package.

Both plug-in registries name plug-ins by path: method plug-ins on `$SPARK_JAX_METHODS`
(`config.registry`) and task-family folders on `$SPARK_JAX_FAMILIES` (`families.registry`).
Each is imported as a module of its own under a name its registry chooses, so that a dotted
path can name what it defines and a package's relative imports work. A plug-in that fails to
import leaves nothing behind in `sys.modules`, so that fixing it and asking again works.
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys
import types

__all__ = ["import_file"]


def import_file(
    module_name: str, path: pathlib.Path, search_locations: list[str] | None = None
) -> types.ModuleType:
    """Executes the Python file `path` as the module `sys.modules[module_name]` and returns it.

    Args:
      module_name: the name the module gets (and keeps in `sys.modules`).
      path: the .py file (a package's `__init__.py` with `search_locations`).
      search_locations: the package's folders, so its relative imports work; None: `path`
        is a module, or a package when its name is `__init__.py`.

    Raises:
      FileNotFoundError: no Python file at `path`.
      Whatever the file raises while it runs (the module is then removed again).
    """
    options = {} if search_locations is None else {"submodule_search_locations": search_locations}
    spec = importlib.util.spec_from_file_location(module_name, path, **options)
    if spec is None or not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[module_name]
        raise
    return module
