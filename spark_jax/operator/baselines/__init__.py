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

`make_operator` picks the operator an `operator.mode` names (SPARK's own for 'spark' and
'rewrite'; an unknown mode is a ValueError naming the known ones). Without an LLM editor each runs its offline analogue: NOT an LLM.
"""

from __future__ import annotations

from spark_jax.config.sections import MODES
from spark_jax.operator.baselines.common import OFFLINE_ANALOGUE, OFFLINE_NOTE, BaselineOperator
from spark_jax.operator.baselines.controls import CONTROLS, ControlOperator
from spark_jax.operator.baselines.eoh import EoHOperator
from spark_jax.operator.baselines.evoprompting import EvoPromptingOperator
from spark_jax.operator.baselines.funsearch import FunSearchOperator
from spark_jax.operator.baselines.openevolve import OpenEvolveOperator
from spark_jax.operator.step import SparkOperator

__all__ = [
    "BASELINES",
    "CONTROLS",
    "OFFLINE_ANALOGUE",
    "OFFLINE_NOTE",
    "BaselineOperator",
    "make_operator",
]

# The registry of operator modes: mode -> its operator class and fixed keyword arguments. Its
# names are `config.sections.MODES` (what config validation and the CLI accept), checked below.
_OPERATORS = {
    "spark": (SparkOperator, {}),
    "rewrite": (SparkOperator, {}),  # SPARK's unscoped-rewrite ablation
    "openevolve": (OpenEvolveOperator, {}),
    "openevolve-full": (OpenEvolveOperator, {"full": True}),
    "evoprompting": (EvoPromptingOperator, {}),
    "funsearch": (FunSearchOperator, {}),
    "eoh": (EoHOperator, {}),
    **{mode: (ControlOperator, {"mode": mode}) for mode in CONTROLS},
}
assert tuple(_OPERATORS) == MODES, "operator registry and config.sections.MODES differ"
BASELINES = tuple(mode for mode, (cls, _) in _OPERATORS.items() if cls is not SparkOperator)


def make_operator(editor, checker, config, history=None):
    """The operator of `config.mode`: a baseline, or SPARK's step (its ablations included)."""
    if config.mode not in _OPERATORS:
        raise ValueError(f"unknown operator mode {config.mode!r}; known: {', '.join(MODES)}")
    cls, fixed = _OPERATORS[config.mode]
    return cls(editor, checker, config, history, **fixed)
