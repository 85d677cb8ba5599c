"""The offline editor's SAR catalogue: real, scoped code transforms on Flax processors.

`CATALOGUE` holds every transform (OPERATOR ones in `transforms_operator`, ACTION ones in
`transforms_action`); `family_catalogue` gives another task family's (classifiers:
`transforms_classifier`, policies: `transforms_policy`); each is a `Transform` record that edits one region with libcst and
checks its own locality. Look-ups are by name; unknown names raise ValueError.
"""

from __future__ import annotations

from spark_jax.operator.offline.base import MAGNITUDES, Transform, TransformNotApplicable
from spark_jax.operator.offline.transforms_action import ACTION_TRANSFORMS
from spark_jax.operator.offline.transforms_classifier import CLASSIFIER_TRANSFORMS
from spark_jax.operator.offline.transforms_operator import OPERATOR_TRANSFORMS
from spark_jax.operator.offline.transforms_policy import POLICY_TRANSFORMS
from spark_jax.program import regions

__all__ = [
    "CATALOGUE",
    "MAGNITUDES",
    "Transform",
    "TransformNotApplicable",
    "get_transform",
    "transforms_for",
    "applicable_transforms",
    "family_catalogue",
]

CATALOGUE: tuple[Transform, ...] = OPERATOR_TRANSFORMS + ACTION_TRANSFORMS
# Each task family's catalogue: graph processors, classifiers, policies.
_FAMILY_CATALOGUES = {
    "clrs": CATALOGUE,
    "classify": CLASSIFIER_TRANSFORMS,
    "cartpole": POLICY_TRANSFORMS,
}
# Every family's transforms by name (names are unique across the catalogues).
_BY_NAME = {t.name: t for catalogue in _FAMILY_CATALOGUES.values() for t in catalogue}
assert len(_BY_NAME) == sum(map(len, _FAMILY_CATALOGUES.values())), "duplicate transform names"


def family_catalogue(family: str) -> tuple[Transform, ...]:
    """The transforms for programs of task family `family`; ValueError for an unknown one."""
    if family not in _FAMILY_CATALOGUES:
        raise ValueError(
            f"no offline catalogue for task family {family!r}; known: "
            f"{', '.join(_FAMILY_CATALOGUES)}"
        )
    return _FAMILY_CATALOGUES[family]


def get_transform(name: str) -> Transform:
    """The catalogue transform called `name`; raises ValueError for an unknown name."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(f"Unexpected transform {name!r}; known: {', '.join(_BY_NAME)}") from None


def transforms_for(factor: str) -> tuple[Transform, ...]:
    """The catalogue transforms that edit `factor`'s region."""
    if factor not in regions.FACTORS:
        raise ValueError(f"Unexpected factor {factor!r}; expected one of {regions.FACTORS}")
    return tuple(t for t in CATALOGUE if t.factor == factor)


def applicable_transforms(source: str, factor: str | None = None) -> tuple[Transform, ...]:
    """The transforms (of `factor`, or of both factors) that apply to `source`."""
    pool = CATALOGUE if factor is None else transforms_for(factor)
    return tuple(t for t in pool if t.applies(source))
