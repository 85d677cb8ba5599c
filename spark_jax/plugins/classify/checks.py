"""The sandbox's semantic stage for classifiers: logits spec, dtype and finiteness.

A classifier maps x [B, F] (float32) to logits [B, C] (float32). The spec is checked
abstractly (`jax.eval_shape`, parameters only: the trainer carries no other collection), then
on concrete random batches at two batch sizes with the same parameters (so a hard-coded batch
size fails) for finite logits. Runs inside the sandbox child; jax and numpy are imported where
used.
"""

from __future__ import annotations

from typing import Any

from spark_jax.feasibility.stage_checks import (
    abstract_params_only,
    check_finite,
    guarded,
    semantic_failure,
)

__all__ = ["check_classifier"]


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


def check_classifier(model: Any, spec: dict[str, Any], batch: int, info: dict) -> None:
    """The semantic stage of a built classifier; raises CheckFailure."""
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
        check_finite((("logits", logits),), f"of {b}")
