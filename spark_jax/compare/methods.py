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
"""

from __future__ import annotations

import dataclasses
import types
from typing import Any, Mapping

__all__ = [
    "CONTROL_METHODS",
    "DEFAULT_METHODS",
    "METHODS",
    "Method",
    "MethodError",
    "is_control",
    "resolve_methods",
]


class MethodError(ValueError):
    """An unknown method name; the message lists the known ones."""


@dataclasses.dataclass(frozen=True)
class Method:
    """One search method.

    Attributes:
      name: the command-line name ('spark', 'random-scope-sar', ...).
      paper_name: the name in the paper's tables ('Full SPARK', 'Random-Scope SAR', ...).
      operator: `operator` config keys this method sets (mode, factor_choice, use_rc).
      max_attempts: a fixed attempt count (Ours-1it: one step from the seed), else None (the
        comparison's cap applies).
      description: one line on what it isolates.
    """

    name: str
    paper_name: str
    operator: Mapping[str, Any]
    description: str
    max_attempts: int | None = None


def _method(name, paper_name, description, max_attempts=None, **operator) -> Method:
    return Method(name, paper_name, types.MappingProxyType(operator), description, max_attempts)


METHODS: Mapping[str, Method] = types.MappingProxyType(
    {
        m.name: m
        for m in (
            _method(
                "spark",
                "Full SPARK",
                "ASR routes the scope, RC writes a directive, SAR edits that region only",
                mode="spark",
                factor_choice="asr",
                use_rc=True,
            ),
            _method(
                "global-rewrite",
                "Global Rewrite",
                "unconstrained rewriting of both regions at once (holistic editing)",
                mode="rewrite",
                use_rc=False,
            ),
            _method(
                "random-scope-sar",
                "Random-Scope SAR",
                "the region mechanism with a random scope, no directive",
                mode="spark",
                factor_choice="random",
                use_rc=False,
            ),
            _method(
                "fixed-op-sar",
                "Fixed-OP SAR",
                "always edits the OPERATOR region, no directive",
                mode="spark",
                factor_choice="OPERATOR",
                use_rc=False,
            ),
            _method(
                "fixed-act-sar",
                "Fixed-ACT SAR",
                "always edits the ACTION region, no directive",
                mode="spark",
                factor_choice="ACTION",
                use_rc=False,
            ),
            _method(
                "random-rc-sar",
                "Random RC+SAR (RC+SAR only)",
                "directive and scoped edit, random scope: no learned routing",
                mode="spark",
                factor_choice="random",
                use_rc=True,
            ),
            _method(
                "asr-sar",
                "ASR+SAR (ASR only)",
                "learned routing and scoped edit, no RC directive",
                mode="spark",
                factor_choice="asr",
                use_rc=False,
            ),
            _method(
                "ours-1it",
                "Ours-1it",
                "a single SPARK step from the seed",
                max_attempts=1,
                mode="spark",
                factor_choice="asr",
                use_rc=True,
            ),
            _method(
                "openevolve",
                "OpenEvolve",
                "holistic SEARCH/REPLACE diffs with OpenEvolve's inspirations (its default)",
                mode="openevolve",
            ),
            _method(
                "openevolve-full",
                "OpenEvolve (full rewrite)",
                "holistic full rewrites with OpenEvolve's inspirations",
                mode="openevolve-full",
            ),
            _method(
                "evoprompting",
                "EvoPrompting",
                "few-shot crossover/mutation prompts in generations (API variant: no soft prompt)",
                mode="evoprompting",
            ),
            _method(
                "funsearch",
                "FunSearch",
                "best-shot prompting with sorted `_vN` versions, islands with resets",
                mode="funsearch",
            ),
            _method(
                "eoh",
                "EoH",
                "thought + code with strategies E1, E2, M1, M2, M3 over a small population",
                mode="eoh",
            ),
            _method(
                "sample",
                "IID sampling control (full rewrite)",
                "every attempt from the task description and the seed alone; best evaluated kept",
                mode="sample",
            ),
            _method(
                "sequential",
                "Sequential sampling control (full rewrite)",
                "every attempt sees the seed and the last K attempts (diff, score or failure)",
                mode="sequential",
            ),
            _method(
                "sample-regions",
                "IID sampling control (region edit)",
                "as `sample`, the answer being the code between the seed's marker lines",
                mode="sample-regions",
            ),
            _method(
                "sequential-regions",
                "Sequential sampling control (region edit)",
                "as `sequential`, the answer being the code between the seed's marker lines",
                mode="sequential-regions",
            ),
        )
    }
)
# The controls (Gideoni, Risi, Gal 2026): sampling the same model from the seed, with no
# search machinery; every comparison needs them to say what the machinery adds.
CONTROL_METHODS = ("sample", "sequential", "sample-regions", "sequential-regions")
# What `spark-jax compare` runs without --methods: SPARK, holistic rewriting and the controls.
DEFAULT_METHODS = ("spark", "global-rewrite", "sample", "sequential")


def is_control(method: Method) -> bool:
    """Whether `method` is one of the sampling controls."""
    return method.name in CONTROL_METHODS


# The paper's other names for the same settings.
ALIASES = types.MappingProxyType(
    {"rc-sar-only": "random-rc-sar", "asr-only": "asr-sar", "full-spark": "spark"}
)


def resolve_methods(names: str | list[str]) -> tuple[Method, ...]:
    """Methods from a comma-separated string or a list, in order, without repeats."""
    words = names.split(",") if isinstance(names, str) else list(names)
    out: list[Method] = []
    for word in (w.strip() for w in words):
        if not word:
            continue
        key = ALIASES.get(word, word)
        if key not in METHODS:
            known = ", ".join([*METHODS, *ALIASES])
            raise MethodError(f"unknown method {word!r}; known methods: {known}")
        if METHODS[key] not in out:
            out.append(METHODS[key])
    if not out:
        raise MethodError("no methods given")
    return tuple(out)
