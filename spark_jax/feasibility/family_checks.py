"""Worker-side interface, semantic and budget stages for task families other than CLRS.

Runs inside the sandbox child (`sandbox_child`), on a module already imported there. What a
family's candidate must satisfy comes from the family itself (`spark_jax.families`), given
plain data in the check options:

  family       the family's name
  family_spec  JSON: the family's `sandbox_spec` (e.g. classify {"features": F,
               "num_classes": C, "hidden": H}; cartpole {"hidden": H}); empty when the
               family has none (CLRS: its processors take the processor stages at the
               protocol's sizes)

interface: the family's frozen factory exists, keeps the parent's signature and returns a Flax
module when called with `family.model_args(spec)`.
semantic: `family.check_semantic(model, spec, batch, info)`.
budget: parameter count and MACs of one call on one example [1, `family.example_width(spec)`]
(the parent compares the caps).
"""

from __future__ import annotations

import inspect
import json
from typing import Any, Callable

from spark_jax import families
from spark_jax.families import DEFAULT_FAMILY
from spark_jax.feasibility.stage_checks import CheckFailure, guarded, macs_lib

__all__ = [
    "build",
    "check_interface",
    "check_semantic",
    "factory_of",
    "measure_macs",
    "spec_of",
    "takes_family_stages",
]


def _family(name: str) -> Any:
    try:
        return families.get(name)
    except ValueError as e:
        raise CheckFailure("interface", "missing_name", f"no feasibility checks: {e}") from None


def takes_family_stages(opts: dict[str, Any]) -> bool:
    """Whether the check options carry a family's sandbox spec, so its programs take these
    stages (no spec: the processor stages at the protocol's sizes, CLRS's answer)."""
    return bool(opts.get("family_spec"))


def factory_of(family: str) -> str:
    """The frozen factory name of `family`'s programs."""
    return _family(family).factory


def spec_of(opts: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(family, spec) from the check options; raises CheckFailure on an unknown family."""
    family = opts.get("family", DEFAULT_FAMILY)
    if not takes_family_stages(opts):
        raise CheckFailure("interface", "missing_name", f"no feasibility checks for {family!r}")
    return family, json.loads(opts.get("family_spec") or "{}")


def _signature(fn: Any) -> str | None:
    try:
        return str(inspect.signature(fn))
    except (TypeError, ValueError):
        return None


def build(module: Any, family: str, spec: dict[str, Any]) -> Any:
    """The family model from the program's factory; CheckFailure('interface', ...) if not."""
    import flax.linen as nn

    fam = _family(family)
    factory = vars(module).get(fam.factory)
    if not callable(factory):
        raise CheckFailure("interface", "missing_name", f"no callable {fam.factory!r} factory")
    with guarded("interface", "bad_factory"):
        model = factory(*fam.model_args(spec))
    if not isinstance(model, nn.Module):
        raise CheckFailure(
            "interface",
            "bad_factory",
            f"{fam.factory} returned {type(model).__name__}, not a flax.linen.Module",
        )
    return model


def check_interface(
    module: Any, family: str, spec: dict[str, Any], load_parent: Callable[[], Any] | None
) -> Any:
    """The interface stage: the factory keeps the parent's signature; returns the model."""
    name = factory_of(family)
    if load_parent is not None and callable(vars(module).get(name)):
        parent = load_parent()
        mine = _signature(vars(module)[name])
        theirs = _signature(vars(parent).get(name))
        if mine != theirs:
            raise CheckFailure(
                "interface",
                "signature_mismatch",
                f"{name}{mine} differs from the parent's {name}{theirs}",
            )
    return build(module, family, spec)


def check_semantic(model: Any, family: str, spec: dict[str, Any], batch: int, info: dict) -> None:
    """The semantic stage of `family` on a built model; raises CheckFailure."""
    _family(family).check_semantic(model, spec, batch, info)


def measure_macs(model: Any, family: str, spec: dict[str, Any]) -> int:
    """MACs of one call on one example (the MACs descriptor of the archive)."""
    import jax
    import jax.numpy as jnp

    width = _family(family).example_width(spec)
    x = jax.ShapeDtypeStruct((1, int(width)), jnp.float32)  # [1, F]
    with guarded("budget"):
        variables = jax.eval_shape(lambda o: model.init(jax.random.PRNGKey(0), o), x)
        return int(macs_lib().count_macs(lambda v, o: model.apply(v, o), variables, x))
