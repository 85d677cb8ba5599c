"""SPARK's two-step edit in its prompts: an OPERATOR edit may add a named submodule that
nothing calls yet, a later ACTION edit wires it in (`program.submodules` finds them).

SPARK-only text: the route, directive and edit prompts carry it; no baseline prompt does.
"""

from __future__ import annotations

from typing import Sequence

from spark_jax.program.submodules import unused_submodules

__all__ = ["submodule_note", "unused_line"]


def _names(names: Sequence[str]) -> str:
    return ", ".join(f"`self.{n}`" for n in names)


def unused_line(parent_source: str) -> str:
    """The route prompt's line on the parent's defined-but-unused submodules."""
    unused = unused_submodules(parent_source)
    if not unused:
        return "none (every submodule `setup` defines is called)"
    return f"{_names(unused)}: defined in `setup`, not called yet; an ACTION edit can wire them in"


def submodule_note(parent_source: str, factor: str | None) -> str:
    """SPARK's two-step edit for the directive and edit prompts of `factor`: an OPERATOR
    edit may add a named submodule that nothing calls yet; a later ACTION edit wires it in,
    and its prompt lists the parent's defined-but-unused submodules."""
    unused = unused_submodules(parent_source)
    if factor == "ACTION":
        if not unused:
            return (
                "The parent's `setup` defines no submodule that is still unused: call only "
                "the attributes it defines."
            )
        return (
            f"The parent's `setup` defines {_names(unused)}, which nothing calls yet: an "
            "earlier OPERATOR edit added them as the first step of a two-step edit. This "
            "ACTION edit may wire them into the forward computation (read `setup` for what "
            "each computes and its output width)."
        )
    if factor == "OPERATOR":
        waiting = (
            f" The parent already defines {_names(unused)}, which nothing calls yet."
            if unused
            else ""
        )
        return (
            "A new submodule takes two steps: this OPERATOR edit may add a NAMED submodule to "
            "`setup` that nothing calls yet (e.g. a gate `self.gate = ...`); it is feasible "
            "and trains as the parent does (Flax creates its parameters only once it is "
            "called), and a later ACTION edit, whose prompt lists it, wires it in. Keep every "
            "`self.*` name the ACTION region uses, its call signature and output width." + waiting
        )
    return ""
