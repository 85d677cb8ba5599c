"""Worker-side check helpers: the classified failure, and the semantic stage.

Run inside the sandbox child (`sandbox_child`); jax, numpy and the program library are
imported where used, so importing this module stays cheap.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterable

from spark_jax import workers

__all__ = [
    "MASK_ATOL",
    "MASK_RTOL",
    "REASON_CAP",
    "CheckFailure",
    "abstract_params_only",
    "check_concrete_batch",
    "check_finite",
    "check_output_spec",
    "check_semantic",
    "exc_text",
    "failure_from_exception",
    "guarded",
    "macs_lib",
    "output_pair",
    "semantic_failure",
]

REASON_CAP = 2000  # Characters of an exception text kept in a reason.
MASK_RTOL = 1e-5
MASK_ATOL = 1e-5


class CheckFailure(Exception):
    """A classified failure of the check in progress."""

    def __init__(self, stage: str, failure_type: str, reason: str, recycle: bool = False):
        super().__init__(reason)
        self.stage, self.failure_type, self.reason, self.recycle = (
            stage,
            failure_type,
            reason[:REASON_CAP],
            recycle,
        )


def exc_text(e: BaseException) -> str:
    """'Type: message' of an exception, bounded."""
    text = str(e) or (
        "allocation refused by the memory cap" if isinstance(e, MemoryError) else "no message"
    )
    return f"{type(e).__name__}: {text}"[:REASON_CAP]


def failure_from_exception(stage: str, e: BaseException, default: str) -> CheckFailure:
    """Classifies an exception raised by candidate code ('memory' by the supervisor's
    markers, else `default`); the worker is then recycled."""
    cause = e.__cause__ if e.__cause__ is not None else e
    failure_type = "memory" if workers.is_memory_error(e) else default
    return CheckFailure(stage, failure_type, exc_text(cause), recycle=True)


@contextlib.contextmanager
def guarded(stage: str, default: str = "runtime_error"):
    """Turns an exception escaping candidate code into a classified CheckFailure."""
    try:
        yield
    except CheckFailure:
        raise
    except BaseException as e:  # noqa: BLE001 - candidate code (SystemExit included).
        raise failure_from_exception(stage, e, default) from None


def abstract_params_only(init: Any, abstract_args: Any, carrier: str, info: dict[str, Any]) -> Any:
    """`jax.eval_shape(init, abstract_args)` (candidate code, guarded) for the semantic stage:
    raises 'mutable_collections' when init creates collections besides 'params' (`carrier`
    names what cannot carry them); fills info['params']; returns the abstract variables."""
    import jax
    import numpy as np

    with guarded("semantic"):
        var_shapes = jax.eval_shape(init, abstract_args)
    extra = sorted(set(var_shapes) - {"params"})
    if extra:
        raise CheckFailure(
            "semantic",
            "mutable_collections",
            f"init creates variable collection(s) {extra} besides 'params' (e.g. BatchNorm "
            f"state); {carrier}",
        )
    info["params"] = int(
        sum(int(np.prod(leaf.shape)) for leaf in jax.tree_util.tree_leaves(var_shapes))
    )
    return var_shapes


def check_semantic(
    module: Any, proc: Any, opts: dict[str, Any], info: dict[str, Any], claim: bool | None = None
) -> None:
    """The semantic stage on a built processor; raises CheckFailure.

    Abstract init/apply (`jax.eval_shape`) for the variable collections and the output spec,
    then one concrete random batch, run eagerly, for finite outputs and, when the masking
    claim holds, for node outputs unchanged by edge features on non-edges; the concrete
    batch runs again at a second, larger graph size (`large_nodes`, default 2N + 3), with the
    same parameters. `claim` is the parent's (or the seed's) MASKS_NON_EDGES: a child cannot
    drop the claim to skip the check; None: the module's own. Fills info['params'] and
    info['masks_non_edges'] (the claim checked) as they are measured.
    """
    import jax

    from spark_jax import program as program_lib

    b, n, h = opts["batch"], opts["nodes"], opts["hidden_size"]
    abstract = macs_lib().reference_inputs(n, h, batch=b)
    key = jax.random.PRNGKey(0)
    var_shapes = abstract_params_only(
        lambda kw: proc.init(key, **kw), abstract, "CLRS's Haiku transform cannot carry them", info
    )
    with guarded("semantic"):
        out = jax.eval_shape(lambda v, kw: proc.apply(v, **kw), var_shapes, abstract)
    check_output_spec(out, b, n, h)

    masks = program_lib.masks_non_edges(module) if claim is None else bool(claim)
    info["masks_non_edges"] = masks
    variables = None
    for nodes in (n, int(opts.get("large_nodes") or 2 * n + 3)):
        variables = check_concrete_batch(proc, b, nodes, h, masks, key, variables)


def check_concrete_batch(
    proc: Any, b: int, n: int, h: int, masks: bool, key: Any, variables: Any
) -> Any:
    """One random concrete batch at N = n: finite outputs and, with `masks`, the masking
    invariant. Initializes parameters when `variables` is None; returns them."""
    import numpy as np

    rng = np.random.RandomState(0 if variables is None else n)  # First batch: seed 0.
    adj = (rng.rand(b, n, n) < 0.5).astype(np.float32)  # [B, N, N]
    adj[:, np.arange(n), np.arange(n)] = 1.0  # Self-loops, as CLRS adds them.
    if n > 1:
        adj[:, 0, n - 1] = 0.0  # At least one non-edge per graph.
    inputs = dict(
        node_fts=rng.randn(b, n, h).astype(np.float32),  # [B, N, H]
        edge_fts=rng.randn(b, n, n, h).astype(np.float32),  # [B, N, N, H]
        graph_fts=rng.randn(b, h).astype(np.float32),  # [B, H]
        adj_mat=adj,
        hidden=rng.randn(b, n, h).astype(np.float32),  # [B, N, H]
    )
    with guarded("semantic"):
        if variables is None:
            variables = proc.init(key, **inputs)
        node, edge = proc.apply(variables, **inputs)
        node, edge = np.asarray(node), None if edge is None else np.asarray(edge)
    check_finite((("node", node), ("edge", edge)), f"with N={n}")
    if node.shape[:2] != (b, n):
        raise CheckFailure(
            "semantic",
            "shape_mismatch",
            f"node output has shape {node.shape} on a batch with N={n}; expected ({b}, {n}, ...)",
        )
    if not masks:
        return variables
    noise = 3.0 * rng.randn(b, n, n, h).astype(np.float32) + 1.0  # [B, N, N, H]
    perturbed = dict(inputs, edge_fts=inputs["edge_fts"] + noise * (1.0 - adj)[..., None])
    with guarded("semantic"):
        node2 = np.asarray(proc.apply(variables, **perturbed)[0])
    if not np.allclose(node, node2, rtol=MASK_RTOL, atol=MASK_ATOL):
        diff = float(np.max(np.abs(node - node2)))
        raise CheckFailure(
            "semantic",
            "mask_leak",
            f"MASKS_NON_EDGES is True but perturbing edge features on "
            f"adjacency non-edges changed the node output at N={n} "
            f"(max abs diff {diff:.3g})",
        )
    return variables


def check_finite(outputs: Iterable[tuple[str, Any]], batch: str) -> None:
    """Raises a semantic 'non_finite' CheckFailure for the first (name, array) output with a
    NaN or Inf (None: no such output); `batch` says which random batch ('with N=5')."""
    import numpy as np

    for name, value in outputs:
        if value is not None and not np.isfinite(value).all():
            bad = int((~np.isfinite(value)).sum())
            raise CheckFailure(
                "semantic",
                "non_finite",
                f"{name} output has {bad} non-finite value(s) (NaN/Inf) on a random batch {batch}",
            )


def macs_lib():
    """`spark_jax.program.macs`, imported on first use (it imports jax)."""
    from spark_jax.program import macs

    return macs


def semantic_failure(failure_type: str, reason: str) -> CheckFailure:
    """A failure of the semantic stage."""
    return CheckFailure("semantic", failure_type, reason)


def output_pair(out: Any, described: str) -> tuple[Any, Any]:
    """`out` as the pair `__call__` must return (`described` names its two parts)."""
    if not isinstance(out, tuple) or len(out) != 2:
        size = f" of length {len(out)}" if isinstance(out, (tuple, list)) else ""
        raise semantic_failure(
            "shape_mismatch",
            f"__call__ must return a tuple ({described}), got a {type(out).__name__}{size}",
        )
    return out


def check_output_spec(out: Any, b: int, n: int, h: int) -> None:
    """Checks the abstract output against (float32[B,N,H], float[B,N,N,H'] | None)."""
    import numpy as np

    fail = semantic_failure
    node, edge = output_pair(out, "nxt_hidden, nxt_edge | None")
    for name, value in (("node", node), ("edge", edge)):
        if value is not None and not (hasattr(value, "shape") and hasattr(value, "dtype")):
            raise fail("shape_mismatch", f"{name} output is a {type(value).__name__}, not an array")
    if tuple(node.shape) != (b, n, h):
        raise fail(
            "shape_mismatch",
            f"node output has shape {tuple(node.shape)}, expected {(b, n, h)} [B, N, H]",
        )
    if np.dtype(node.dtype) != np.float32:
        raise fail("dtype_mismatch", f"node output has dtype {node.dtype}, expected float32")
    if edge is not None and (len(edge.shape) != 4 or tuple(edge.shape[:3]) != (b, n, n)):
        raise fail(
            "shape_mismatch",
            f"edge output has shape {tuple(edge.shape)}, expected "
            f"[B, N, N, H'] with B, N = {b}, {n}, or None",
        )
    if edge is not None and not np.issubdtype(np.dtype(edge.dtype), np.floating):
        raise fail("dtype_mismatch", f"edge output has dtype {edge.dtype}, expected float")


def install_bucketed_truncated_normal() -> None:
    """Makes `jax.random.truncated_normal` (what Flax's default initializers draw from) draw
    a flat vector of the next power-of-two length and cut it to the asked shape, in this
    process only (the sandbox worker: checks never train).

    Why: in the concrete init of the semantic stage, every new parameter shape compiled its
    own truncated normal (about 0.7 s of XLA compile on a CPU), most of a new program's check;
    with power-of-two lengths the compiled draws are reused across shapes and programs. The
    values are still truncated normal draws from the same key and bounds, not the ones the
    same key would give at that shape: the check tests shapes, finiteness and masking, none
    of which depends on which draw it got. Scalar bounds and a known shape only; anything
    else goes to the original unchanged.
    """
    import math

    import jax
    import jax._src.random as jax_random
    import numpy as np

    original = jax.random.truncated_normal
    if getattr(original, "_spark_bucketed", False):
        return

    def truncated_normal(key, lower, upper, shape=None, dtype=None, **kwargs):
        if shape is None or kwargs or np.ndim(lower) or np.ndim(upper):
            return original(key, lower, upper, shape, dtype, **kwargs)
        shape = tuple(shape)
        size = math.prod(shape)
        if size < 2:
            return original(key, lower, upper, shape, dtype)
        flat = original(key, lower, upper, (1 << (size - 1).bit_length(),), dtype)
        return flat[:size].reshape(shape)

    truncated_normal._spark_bucketed = True  # type: ignore[attr-defined]
    truncated_normal.__wrapped__ = original  # type: ignore[attr-defined]
    jax.random.truncated_normal = truncated_normal
    jax_random.truncated_normal = truncated_normal
