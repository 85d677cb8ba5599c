"""Search methods a comparison can run, named as in the paper's tables.

Most methods here are settings of our own SPARK operator on the same backbone (its factor
choice, whether RC writes a directive, factor-scoped or holistic editing, how many attempts):
the paper's DFS ablation and scope-control baselines, and Ours-1it. The baselines (OpenEvolve,
EvoPrompting, FunSearch, EoH) and the sampling controls (`sample`, `sequential`: Gideoni, Risi,
Gal 2026) are operators of their own (`operator.mode`) on that backbone;
with the offline editor they run offline analogues (catalogue transforms, not an LLM). What each method means
does not depend on the editor: with the offline editor (rules, not an LLM) every method runs
the same rule-based roles, so a comparison under it tests the harness and the scoping, not an
LLM's ability; reports say so.

Every method is one entry of `config.registry` (`MethodSpec`, registered once in
`config.shipped_methods`; a plug-in on `$SPARK_JAX_METHODS` adds more): this module reads it.
"""

from __future__ import annotations

from typing import Iterator, Mapping, Sequence

from spark_jax.config import registry
from spark_jax.config.registry import MethodSpec

__all__ = [
    "ALIASES",
    "CONTROL_METHODS",
    "DEFAULT_METHODS",
    "METHODS",
    "Method",
    "MethodError",
    "is_control",
    "resolve_methods",
]

Method = MethodSpec  # One search method: its registry entry (name, paper name, operator keys).


class MethodError(ValueError):
    """An unknown method name; the message lists the known ones."""


class _Live(Mapping[str, str]):
    """A read-only view of the registry, read when asked (so that it names plug-ins too)."""

    def __init__(self, items):
        self._items = items

    def __getitem__(self, key):
        return self._items()[key]

    def __iter__(self) -> Iterator:
        return iter(self._items())

    def __len__(self) -> int:
        return len(self._items())

    def __repr__(self) -> str:
        return repr(dict(self._items()))


def _aliases() -> dict[str, str]:
    return {a: m.name for m in registry.methods().values() for a in m.aliases}


METHODS: Mapping[str, Method] = _Live(registry.methods)
# The paper's other names for the same settings.
ALIASES: Mapping[str, str] = _Live(_aliases)
# What `spark-jax compare` runs without --methods: SPARK, holistic rewriting and the controls.
DEFAULT_METHODS = ("spark", "global-rewrite", "sample", "sequential")


# The controls (Gideoni, Risi, Gal 2026): sampling the same model from the seed, with no
# search machinery; every comparison needs them to say what the machinery adds.
CONTROL_METHODS: Sequence[str] = registry.LiveNames(
    lambda: tuple(m.name for m in registry.methods().values() if m.control)
)


def is_control(method: Method) -> bool:
    """Whether `method` is one of the sampling controls."""
    return method.control


def resolve_methods(names: str | list[str]) -> tuple[Method, ...]:
    """Methods from a comma-separated string or a list, in order, without repeats."""
    words = names.split(",") if isinstance(names, str) else list(names)
    try:
        methods, aliases = registry.methods(), _aliases()
    except registry.RegistryError as e:  # a broken plug-in
        raise MethodError(str(e)) from e
    out: list[Method] = []
    for word in (w.strip() for w in words):
        if not word:
            continue
        key = aliases.get(word, word)
        if key not in methods:
            known = ", ".join([*methods, *aliases])
            raise MethodError(f"unknown method {word!r}; known methods: {known}")
        if methods[key] not in out:
            out.append(methods[key])
    if not out:
        raise MethodError("no methods given")
    for m in out:  # a bad class path is a one-line error before any search starts
        try:
            m.runs.load()
        except registry.RegistryError as e:
            raise MethodError(f"method {m.name!r}: {e}") from e
    return tuple(out)
