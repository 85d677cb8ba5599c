"""Options whose values are names in `config.registry`, checked when parsed against every
registered name (a plug-in's on $SPARK_JAX_METHODS included) rather than a list fixed when
the parser was built: a seed mode a plug-in registers can be chosen with `--seed-mode`."""

from __future__ import annotations

import argparse

from spark_jax.config import registry
from spark_jax.config.evaluation import DEFAULT_SEED_MODE

__all__ = ["add_seed_mode_arg", "seed_mode"]


def seed_mode(value: str) -> str:
    """`value` when it names a registered seed mode (an argparse `type`); else an argparse
    error worded as argparse's own for a bad choice (one line, exit 2). A shipped name is
    answered without importing any plug-in."""
    try:
        if registry.is_known("seed", value):
            return value
        names = registry.seed_mode_names()
    except registry.RegistryError as e:  # a broken plug-in
        raise argparse.ArgumentTypeError(str(e)) from None
    choices = ", ".join(map(repr, names))
    raise argparse.ArgumentTypeError(f"invalid choice: {value!r} (choose from {choices})")


def add_seed_mode_arg(p: argparse.ArgumentParser, text: str) -> None:
    """Adds `--seed-mode` (how one program trains K seeds; `text` its help), default the
    registry's first; the usage line names the shipped modes (building the parser imports no
    plug-in), the value may be any registered one."""
    p.add_argument(
        "--seed-mode",
        type=seed_mode,
        default=DEFAULT_SEED_MODE,
        metavar="{" + ",".join(registry.shipped_names("seed")) + "}",
        help=text,
    )
