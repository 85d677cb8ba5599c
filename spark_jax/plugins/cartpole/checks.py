"""The semantic stage for CartPole-v1 policies: output spec, dtypes and finiteness.

A policy maps observations [B, 4] (float32) to (logits [B, 2] float32, value [B] float). The
spec is checked abstractly (`jax.eval_shape`), then on concrete random batches at two batch
sizes with the same parameters (so a hard-coded batch size fails) for finite outputs. Run inside
the sandbox child; jax and numpy are imported where used.
"""

from __future__ import annotations

from typing import Any

from spark_jax.feasibility.stage_checks import (
    CheckFailure,
    abstract_params_only,
    check_finite,
    guarded,
    output_pair,
    semantic_failure,
)

__all__ = [
    "OBS_SIZE",
    "NUM_ACTIONS",
    "build_and_check",
    "check_policy_semantic",
    "check_policy_output",
]

OBS_SIZE = 4
NUM_ACTIONS = 2


def build_and_check(module: Any, hidden: int, batch: int, info: dict[str, Any]) -> Any:
    """Builds the program's policy with its frozen `make_policy(hidden)` and runs the semantic
    stage on it; returns the policy. Raises CheckFailure ('interface' when the factory fails
    or returns something else than a Flax module)."""
    import flax.linen as nn

    factory = getattr(module, "make_policy", None)
    if not callable(factory):
        raise CheckFailure("interface", "missing_name", "no callable 'make_policy' factory")
    with guarded("interface", "bad_factory"):
        policy = factory(hidden)
    if not isinstance(policy, nn.Module):
        raise CheckFailure(
            "interface",
            "bad_factory",
            f"make_policy returned {type(policy).__name__}, not a flax.linen.Module",
        )
    check_policy_semantic(policy, batch, info)
    return policy


def check_policy_semantic(policy: Any, batch: int, info: dict[str, Any]) -> None:
    """The semantic stage on a built policy; raises CheckFailure. Fills info['params']."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    key = jax.random.PRNGKey(0)
    obs = jax.ShapeDtypeStruct((batch, OBS_SIZE), jnp.float32)  # [B, 4]
    var_shapes = abstract_params_only(
        lambda o: policy.init(key, o), obs, "the PPO trainer carries only parameters", info
    )
    with guarded("semantic"):
        out = jax.eval_shape(lambda v, o: policy.apply(v, o), var_shapes, obs)
    check_policy_output(out, batch)

    variables = None
    for b in (batch, 2 * batch + 1):
        rng = np.random.RandomState(b)
        x = (rng.randn(b, OBS_SIZE) * np.array([1.0, 2.0, 0.1, 2.0])).astype(np.float32)
        with guarded("semantic"):
            if variables is None:
                variables = policy.init(key, x)
            logits, value = policy.apply(variables, x)
            logits, value = np.asarray(logits), np.asarray(value)
        check_policy_output((logits, value), b)
        check_finite((("logits", logits), ("value", value)), f"of {b} observations")


def check_policy_output(out: Any, batch: int) -> None:
    """Checks an (abstract or concrete) output against (float32[B, 2], float[B])."""
    import numpy as np

    fail = semantic_failure
    out = output_pair(out, "logits, value")
    for name, arr in zip(("logits", "value"), out):
        if not (hasattr(arr, "shape") and hasattr(arr, "dtype")):
            raise fail("shape_mismatch", f"{name} output is a {type(arr).__name__}, not an array")
    logits, value = out
    if tuple(logits.shape) != (batch, NUM_ACTIONS):
        raise fail(
            "shape_mismatch",
            f"logits output has shape {tuple(logits.shape)}, expected {(batch, NUM_ACTIONS)} "
            f"[B, 2]",
        )
    if tuple(value.shape) != (batch,):
        raise fail(
            "shape_mismatch",
            f"value output has shape {tuple(value.shape)}, expected {(batch,)} [B]",
        )
    if np.dtype(logits.dtype) != np.float32:
        raise fail("dtype_mismatch", f"logits output has dtype {logits.dtype}, expected float32")
    if not np.issubdtype(np.dtype(value.dtype), np.floating):
        raise fail("dtype_mismatch", f"value output has dtype {value.dtype}, expected float")
