"""Files shipped inside the package: seed programs, prompt templates, reference tables.

The source tree keeps them at the top level (`processors/`, `prompts/`, `reference/`);
`spark_jax/assets/` links to them, and a built wheel carries real copies, so the same
`importlib.resources` lookup works for an editable install and for an installed wheel.
"""

from __future__ import annotations

import importlib.resources
import pathlib

__all__ = ["asset_dir", "seed_program_path", "seed_programs"]

_KINDS = ("processors", "prompts", "reference")


def asset_dir(kind: str) -> pathlib.Path:
    """The directory of one kind of shipped file: 'processors', 'prompts' or 'reference' (a
    task family's seeds are in its plug-in folder: `spark_jax.families`)."""
    if kind not in _KINDS:
        raise ValueError(f"Unexpected asset kind {kind!r}; expected one of {_KINDS}")
    root = importlib.resources.files("spark_jax") / "assets" / kind
    return pathlib.Path(str(root)).resolve()


def seed_program_path(name: str) -> pathlib.Path:
    """The shipped seed program `name` (e.g. 'triplet_gmpnn')."""
    return asset_dir("processors") / f"{name}.py"


def seed_programs() -> dict[str, pathlib.Path]:
    """Every shipped seed program, by name."""
    return {p.stem: p for p in sorted(asset_dir("processors").glob("*.py"))}
