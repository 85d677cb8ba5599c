"""The offline editor: SPARK's three roles done by rules, with no LLM.

This package is NOT an LLM. It is the embedded default editor when no LLM endpoint is
configured and an honest non-LLM baseline:
- a catalogue of real, scoped libcst code transforms on Flax processor programs
  (`CATALOGUE`; OPERATOR edits rewrite `setup`, ACTION edits rewrite `__call__`);
- `BanditRouter` (ASR: Thompson sampling over factor outcomes), `RuleDirector` (RC: a rule
  table over stagnation and failure signals) and `CatalogueEditor` (SAR: one untried
  transform per proposal), wired into the `editors.Editor` contract by `OfflineEditor`.
Records it produces carry `is_llm=False` and the editor name 'offline-rules'.
"""

from __future__ import annotations

from spark_jax.operator.offline.base import MAGNITUDES, Transform, TransformNotApplicable
from spark_jax.operator.offline.roles import (
    EDITOR_NAME,
    BanditRouter,
    CatalogueEditor,
    Directive,
    NoApplicableTransform,
    OfflineEdit,
    OfflineEditor,
    RuleDirector,
    StepSignals,
)
from spark_jax.operator.offline.transforms import (
    CATALOGUE,
    applicable_transforms,
    family_catalogue,
    get_transform,
    transforms_for,
)

__all__ = [
    "CATALOGUE",
    "EDITOR_NAME",
    "MAGNITUDES",
    "BanditRouter",
    "CatalogueEditor",
    "Directive",
    "NoApplicableTransform",
    "OfflineEdit",
    "OfflineEditor",
    "RuleDirector",
    "StepSignals",
    "Transform",
    "TransformNotApplicable",
    "applicable_transforms",
    "family_catalogue",
    "get_transform",
    "transforms_for",
]
