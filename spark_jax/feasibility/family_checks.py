"""Worker-side interface, semantic and budget stages for task families other than CLRS.

Runs inside the sandbox child (`sandbox_child`), on a module already imported there. What a
family's candidate must satisfy is given by plain data in the check options:

  family       'classify' or 'cartpole' (CLRS programs take the processor path instead)
  family_spec  JSON: classify {"features": F, "num_classes": C, "hidden": H};
               cartpole {"hidden": H}

interface: the family's frozen factory (`make_classifier(num_classes, hidden)`,
`make_policy(hidden)`) exists, keeps the parent's signature and returns a Flax module.
semantic: classify: logits float32 [B, C], finite, at two batch sizes with the same
parameters, no mutable collections; cartpole: `cartpole_check.check_policy_semantic`.
budget: parameter count and MACs of one call on one example (the parent compares the caps).
"""

from __future__ import annotations

import inspect
import json
from typing import Any, Callable

from spark_jax.feasibility import cartpole_check
from spark_jax.feasibility.stage_checks import (
    CheckFailure,
    abstract_params_only,
    guarded,
    macs_lib,
    semantic_failure,
)

__all__ = ["FACTORIES", "build", "check_interface", "check_semantic", "measure_macs", "spec_of"]

FACTORIES = {"classify": "make_classifier", "cartpole": "make_policy"}


def spec_of(opts: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(family, spec) from the check options; raises CheckFailure on an unknown family."""
    family = opts.get("family", "clrs")
    if family not in FACTORIES:
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

    name = FACTORIES[family]
    factory = vars(module).get(name)
    if not callable(factory):
        raise CheckFailure("interface", "missing_name", f"no callable {name!r} factory")
    args = (spec["num_classes"], spec["hidden"]) if family == "classify" else (spec["hidden"],)
    with guarded("interface", "bad_factory"):
        model = factory(*args)
    if not isinstance(model, nn.Module):
        raise CheckFailure(
            "interface",
            "bad_factory",
            f"{name} returned {type(model).__name__}, not a flax.linen.Module",
        )
    return model


def check_interface(
    module: Any, family: str, spec: dict[str, Any], load_parent: Callable[[], Any] | None
) -> Any:
    """The interface stage: the factory keeps the parent's signature; returns the model."""
    name = FACTORIES[family]
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


def _check_logits(logits: Any, batch: int, classes: int) -> None:
    import numpy as np

    if not (hasattr(logits, "shape") and hasattr(logits, "dtype")):
        raise semantic_failure("shape_mismatch", f"output is a {type(logits).__name__}, not logits")
    if tuple(logits.shape) != (batch, classes):
        raise semantic_failure(
            "shape_mismatch",
            f"logits output has shape {tuple(logits.shape)}, expected {(batch, classes)} [B, C]",
        )
    if np.dtype(logits.dtype) != np.float32:
        raise semantic_failure(
            "dtype_mismatch", f"logits output has dtype {logits.dtype}, expected float32"
        )


def _classifier_semantic(model: Any, spec: dict[str, Any], batch: int, info: dict) -> None:
    import jax
    import jax.numpy as jnp
    import numpy as np

    features, classes = int(spec["features"]), int(spec["num_classes"])
    key = jax.random.PRNGKey(0)
    x_spec = jax.ShapeDtypeStruct((batch, features), jnp.float32)  # [B, F]
    var_shapes = abstract_params_only(
        lambda x: model.init(key, x), x_spec, "the trainer carries only parameters", info
    )
    with guarded("semantic"):
        out = jax.eval_shape(lambda v, x: model.apply(v, x), var_shapes, x_spec)
    _check_logits(out, batch, classes)
    variables = None
    for b in (batch, 2 * batch + 1):  # Same parameters at two sizes: no hard-coded batch.
        x = np.random.RandomState(b).randn(b, features).astype(np.float32)  # [b, F]
        with guarded("semantic"):
            if variables is None:
                variables = model.init(key, x)
            logits = np.asarray(model.apply(variables, x))  # [b, C]
        _check_logits(logits, b, classes)
        if not np.isfinite(logits).all():
            bad = int((~np.isfinite(logits)).sum())
            raise semantic_failure(
                "non_finite",
                f"logits output has {bad} non-finite value(s) (NaN/Inf) on a random batch of {b}",
            )


def check_semantic(model: Any, family: str, spec: dict[str, Any], batch: int, info: dict) -> None:
    """The semantic stage of `family` on a built model; raises CheckFailure."""
    if family == "classify":
        _classifier_semantic(model, spec, batch, info)
    else:
        cartpole_check.check_policy_semantic(model, batch, info)


def measure_macs(model: Any, family: str, spec: dict[str, Any]) -> int:
    """MACs of one call on one example (the MACs descriptor of the archive)."""
    import jax
    import jax.numpy as jnp

    width = spec["features"] if family == "classify" else cartpole_check.OBS_SIZE
    x = jax.ShapeDtypeStruct((1, int(width)), jnp.float32)  # [1, F]
    with guarded("budget"):
        variables = jax.eval_shape(lambda o: model.init(jax.random.PRNGKey(0), o), x)
        return int(macs_lib().count_macs(lambda v, o: model.apply(v, o), variables, x))
