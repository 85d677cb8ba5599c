"""The paper's baselines as operators on SPARK's backbone (same seed program, feasibility,
training, archive and budget accounting), each with its own prompts in `prompts/` following
its original's (each template names the original file in a leading comment):

  openevolve        OpenEvolve 0.4.0, diff-based (SEARCH/REPLACE) holistic editing (its default)
  openevolve-full   OpenEvolve, full-rewrite holistic editing
  evoprompting      EvoPrompting's few-shot crossover/mutation generations (API variant)
  funsearch         FunSearch's best-shot `_vN` prompting over islands with resets
  eoh               EoH's thought + code with strategies E1, E2, M1, M2 (M3 available)
  sample            the IID-sampling control: every attempt from the seed and the task alone
  sequential        the sequential-sampling control: the seed and the last K attempts
                    (`sample-regions`, `sequential-regions`: their region-edit forms)

Every baseline is given the task description every method shares (`prompts/task.md`), never
SPARK's region contract, and its children are checked without a factor (tag lines only).
Each states its scale parameters against its original's defaults (`scale_note()`).

`make_operator` builds the operator an `operator.mode` names, from its entry in
`config.registry` (SPARK's own for 'spark' and 'rewrite'; an unknown mode is a ValueError
naming the known ones); a new method registers its operator there, not here. Without an LLM
editor each baseline runs its offline analogue: NOT an LLM.
"""

from __future__ import annotations

from spark_jax.config import registry
from spark_jax.operator.baselines.common import OFFLINE_ANALOGUE, OFFLINE_NOTE, BaselineOperator
from spark_jax.operator.baselines.controls import CONTROLS

__all__ = [
    "BASELINES",
    "CONTROLS",
    "OFFLINE_ANALOGUE",
    "OFFLINE_NOTE",
    "BaselineOperator",
    "baselines",
    "make_operator",
]


def baselines() -> tuple[str, ...]:
    """The operator modes that are baselines (holistic operators of their own, not SPARK's
    step, which runs 'spark' and 'rewrite'): the shipped ones and every plug-in's."""
    spark = registry.mode("spark").operator_class
    return tuple(m for m in registry.mode_names() if registry.mode(m).operator_class != spark)


BASELINES = registry.LiveNames(baselines)  # read when used: names the plug-ins' too


def make_operator(editor, checker, config, history=None):
    """The operator of `config.mode`: a baseline, or SPARK's step (its ablations included)."""
    known = registry.mode_names()
    if config.mode not in known:
        raise ValueError(f"unknown operator mode {config.mode!r}; known: {', '.join(known)}")
    spec = registry.mode(config.mode)
    return spec.load()(editor, checker, config, history, **spec.options)
