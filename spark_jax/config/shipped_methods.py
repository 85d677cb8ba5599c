"""The shipped search methods, operator modes, editor kinds and seed modes: one entry each,
registered once (`config.registry` imports this module the first time a name is looked up).

The operator modes come first, in the order the config's docs list them; then the methods in
the order `spark-jax compare --help` lists them. Most methods are settings of SPARK's own
operator (its factor choice, whether RC writes a directive, how many attempts): the paper's
DFS ablation and scope-control baselines, and Ours-1it. The baselines (OpenEvolve,
EvoPrompting, FunSearch, EoH) and the sampling controls are operators of their own.
"""

from __future__ import annotations

from spark_jax.config.registry import (
    EditorKindSpec,
    MethodSpec,
    OperatorSpec,
    SeedModeSpec,
    register,
    register_editor_kind,
    register_mode,
    register_seed_mode,
)

__all__ = ["CONTROLS", "EDITOR_KINDS", "METHODS", "OPERATORS", "REWRITE", "SEED_MODES", "SPARK"]

_SPARK_CLASS = "spark_jax.operator.step:SparkOperator"
_SPARK_OFFLINE = "the offline editor's rule-based roles: route, directive and a catalogue edit"
_CONTROL_OFFLINE = (
    "one or two catalogue transforms of the seed (sample) or of the best of the last K "
    "attempts (sequential)"
)


def _control(mode: str, templates: tuple[str, ...], scale: str) -> OperatorSpec:
    """A sampling control (Gideoni, Risi, Gal 2026): IID or sequential, full or regions."""
    return OperatorSpec(
        mode,
        "spark_jax.operator.baselines.controls:ControlOperator",
        {"mode": mode},
        templates,
        _CONTROL_OFFLINE,
        scale,
    )


_SAMPLE_SCALE = "one sample per attempt, up to the comparison's attempt cap"
_SEQUENTIAL_SCALE = "the last K attempts shown (operator key sequential_window)"
_OE_PROMPTS = ("openevolve_system", "openevolve_diff", "openevolve_full")
_OE_SCALE = "OpenEvolve's prompt defaults: 3 top and 2 diverse programs per prompt"
SPARK = OperatorSpec(
    "spark",
    _SPARK_CLASS,
    prompts=("route", "directive", "edit", "contract"),
    offline_analogue=_SPARK_OFFLINE,
    scale_note="the paper's own method: no original to scale from",
)
REWRITE = OperatorSpec(
    "rewrite",
    _SPARK_CLASS,
    prompts=("rewrite",),
    offline_analogue="the offline editor rewrites both regions (one catalogue edit each)",
    scale_note="SPARK's unscoped-rewrite ablation: no original to scale from",
)
CONTROLS = (
    _control("sample", ("sample",), _SAMPLE_SCALE),
    _control("sample-regions", ("sample_regions",), _SAMPLE_SCALE),
    _control("sequential", ("sequential",), _SEQUENTIAL_SCALE),
    _control("sequential-regions", ("sequential_regions",), _SEQUENTIAL_SCALE),
)
OPERATORS = (
    SPARK,
    REWRITE,
    OperatorSpec(
        "openevolve",
        "spark_jax.operator.baselines.openevolve:OpenEvolveOperator",
        prompts=_OE_PROMPTS,
        offline_analogue="one catalogue transform of either region (diff mode)",
        scale_note=_OE_SCALE,
    ),
    OperatorSpec(
        "openevolve-full",
        "spark_jax.operator.baselines.openevolve:OpenEvolveOperator",
        {"full": True},
        _OE_PROMPTS,
        "both regions rewritten, one catalogue transform each (full mode)",
        _OE_SCALE,
    ),
    OperatorSpec(
        "evoprompting",
        "spark_jax.operator.baselines.evoprompting:EvoPromptingOperator",
        prompts=("evoprompting",),
        offline_analogue="crossover of two parents' regions plus one small transform; "
        "mutation: one transform",
        scale_note="children, parents and shots per generation (operator keys evoprompting_*)",
    ),
    OperatorSpec(
        "funsearch",
        "spark_jax.operator.baselines.funsearch:FunSearchOperator",
        prompts=("funsearch",),
        offline_analogue="one catalogue transform of the best shown version",
        scale_note="islands, functions per prompt and reset interval scaled to the budget "
        "(operator keys funsearch_*; FunSearch: 10 islands, resets every 4 hours)",
    ),
    OperatorSpec(
        "eoh",
        "spark_jax.operator.baselines.eoh:EoHOperator",
        prompts=("eoh_e1", "eoh_e2", "eoh_m1", "eoh_m2", "eoh_m3"),
        offline_analogue="E1 a large transform, E2 two parents' regions plus a transform, "
        "M1-M3 one transform; the idea is the transform's description",
        scale_note="population size and parents (operator keys eoh_pop_size, eoh_parents; "
        "EoH: 5, paper 20 for large budgets)",
    ),
    *CONTROLS,
)
_BY_MODE = {spec.mode: spec for spec in OPERATORS}


def _scoped(name, paper_name, description, factor_choice, use_rc, **more) -> MethodSpec:
    """One setting of SPARK's operator."""
    settings = {"factor_choice": factor_choice, "use_rc": use_rc}
    return MethodSpec(name, paper_name, description, SPARK, settings, **more)


def _own(name: str, paper_name: str, description: str, **more) -> MethodSpec:
    """A method that is an operator mode of its own (a baseline or a control)."""
    return MethodSpec(name, paper_name, description, _BY_MODE[name], **more)


METHODS = (
    _scoped(
        "spark",
        "Full SPARK",
        "ASR routes the scope, RC writes a directive, SAR edits that region only",
        "asr",
        True,
        aliases=("full-spark",),
        paper_rows=("Ours", "SPARK", "Full SPARK"),
    ),
    MethodSpec(
        "global-rewrite",
        "Global Rewrite",
        "unconstrained rewriting of both regions at once (holistic editing)",
        REWRITE,
        {"use_rc": False},
        paper_rows=("Global Rewrite",),
    ),
    _scoped(
        "random-scope-sar",
        "Random-Scope SAR",
        "the region mechanism with a random scope, no directive",
        "random",
        False,
        paper_rows=("Random-Scope SAR",),
    ),
    _scoped(
        "fixed-op-sar",
        "Fixed-OP SAR",
        "always edits the OPERATOR region, no directive",
        "OPERATOR",
        False,
        paper_rows=("Fixed-OP SAR",),
    ),
    _scoped(
        "fixed-act-sar",
        "Fixed-ACT SAR",
        "always edits the ACTION region, no directive",
        "ACTION",
        False,
        paper_rows=("Fixed-ACT SAR",),
    ),
    _scoped(
        "random-rc-sar",
        "Random RC+SAR (RC+SAR only)",
        "directive and scoped edit, random scope: no learned routing",
        "random",
        True,
        aliases=("rc-sar-only",),
        paper_rows=("RC+SAR only", "Random RC+SAR"),
    ),
    _scoped(
        "asr-sar",
        "ASR+SAR (ASR only)",
        "learned routing and scoped edit, no RC directive",
        "asr",
        False,
        aliases=("asr-only",),
        paper_rows=("ASR only", "ASR+SAR"),
    ),
    _scoped(
        "ours-1it",
        "Ours-1it",
        "a single SPARK step from the seed",
        "asr",
        True,
        max_attempts=1,
        paper_rows=("Ours-1it",),
    ),
    _own(
        "openevolve",
        "OpenEvolve",
        "holistic SEARCH/REPLACE diffs with OpenEvolve's inspirations (its default)",
        paper_rows=("OE",),
    ),
    _own(
        "openevolve-full",
        "OpenEvolve (full rewrite)",
        "holistic full rewrites with OpenEvolve's inspirations",
    ),
    _own(
        "evoprompting",
        "EvoPrompting",
        "few-shot crossover/mutation prompts in generations (API variant: no soft prompt)",
        paper_rows=("EP",),
        quoted_from="Chen et al. 2023 (EvoPrompting)",  # the SPARK paper quotes its EP rows
    ),
    _own(
        "funsearch",
        "FunSearch",
        "best-shot prompting with sorted `_vN` versions, islands with resets",
        paper_rows=("FS",),
    ),
    _own(
        "eoh",
        "EoH",
        "thought + code with strategies E1, E2, M1, M2, M3 over a small population",
        paper_rows=("EoH",),
    ),
    _own(
        "sample",
        "IID sampling control (full rewrite)",
        "every attempt from the task description and the seed alone; best evaluated kept",
        control=True,
    ),
    _own(
        "sequential",
        "Sequential sampling control (full rewrite)",
        "every attempt sees the seed and the last K attempts (diff, score or failure)",
        control=True,
    ),
    _own(
        "sample-regions",
        "IID sampling control (region edit)",
        "as `sample`, the answer being the code between the seed's marker lines",
        control=True,
    ),
    _own(
        "sequential-regions",
        "Sequential sampling control (region edit)",
        "as `sequential`, the answer being the code between the seed's marker lines",
        control=True,
    ),
)
EDITOR_KINDS = (
    EditorKindSpec(
        "offline",
        "rules, not an LLM: the offline editor with the task family's catalogue",
        "spark_jax.operator.editor_kinds:offline_editor",
    ),
    EditorKindSpec(
        "llm",
        "an LLM backend, optionally recorded to or replayed from a cassette",
        "spark_jax.operator.editor_kinds:llm_editor",
    ),
)
SEED_MODES = (
    SeedModeSpec(
        "map",
        "each seed's arithmetic a one-seed run's, one seed after another (the default)",
        "spark_jax.evaluation.seeds:map_over_seeds",
    ),
    SeedModeSpec("vmap", "the K seeds batched into one computation", "jax:vmap"),
)

for _spec in OPERATORS:
    register_mode(_spec)
for _method in METHODS:
    register(_method)
for _kind in EDITOR_KINDS:
    register_editor_kind(_kind)
for _seed_mode in SEED_MODES:
    register_seed_mode(_seed_mode)
