"""The offline editor's SAR catalogue: real, scoped code transforms on Flax processors.

`CATALOGUE` holds every CLRS processor transform (OPERATOR ones in `transforms_operator`,
ACTION ones in `transforms_action`); `family_catalogue` gives another task family's (its
plug-in's `offline_transforms()`); each is a `Transform` record that edits one region with
libcst and checks its own locality. Look-ups are by name; unknown names raise ValueError.
"""

from __future__ import annotations

from spark_jax import families
from spark_jax.operator.offline.base import MAGNITUDES, Transform, TransformNotApplicable
from spark_jax.operator.offline.transforms_action import ACTION_TRANSFORMS
from spark_jax.operator.offline.transforms_operator import OPERATOR_TRANSFORMS
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
_BY_NAME = {t.name: t for t in CATALOGUE}
assert len(_BY_NAME) == len(CATALOGUE), "duplicate transform names"


def family_catalogue(family: str) -> tuple[Transform, ...]:
    """The transforms for programs of task family `family` (its plug-in's; CLRS's is
    `CATALOGUE`); ValueError for an unknown family or one with no catalogue."""
    try:
        fam = families.get(family)
    except ValueError:
        fam = None
    if not hasattr(fam, "offline_transforms"):
        known = ", ".join(families.names())
        raise ValueError(f"no offline catalogue for task family {family!r}; known: {known}")
    return tuple(fam.offline_transforms())


def get_transform(name: str) -> Transform:
    """The transform called `name`, of CLRS or of any family; ValueError for an unknown name."""
    if name in _BY_NAME:
        return _BY_NAME[name]
    known = list(_BY_NAME)
    for family in families.names():
        try:
            catalogue = family_catalogue(family)
        except ValueError:
            continue
        for t in catalogue:
            if t.name not in _BY_NAME:
                if t.name == name:
                    return t
                known.append(t.name)
    raise ValueError(f"Unexpected transform {name!r}; known: {', '.join(known)}")


def transforms_for(factor: str) -> tuple[Transform, ...]:
    """The catalogue transforms that edit `factor`'s region."""
    if factor not in regions.FACTORS:
        raise ValueError(f"Unexpected factor {factor!r}; expected one of {regions.FACTORS}")
    return tuple(t for t in CATALOGUE if t.factor == factor)


def applicable_transforms(source: str, factor: str | None = None) -> tuple[Transform, ...]:
    """The transforms (of `factor`, or of both factors) that apply to `source`."""
    pool = CATALOGUE if factor is None else transforms_for(factor)
    return tuple(t for t in pool if t.applies(source))
