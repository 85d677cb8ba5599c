"""Real MACs of one processor step, counted from its traced computation (jaxpr).

We trace `init + apply` abstractly (`jax.eval_shape` / `jax.make_jaxpr`, nothing allocated)
on a stated reference input — batch 1, N nodes, width H: node_fts [1,N,H], edge_fts [1,N,N,H],
graph_fts [1,H], adj_mat [1,N,N], hidden [1,N,H] — and sum the multiply-accumulates of every
contraction: `dot_general` (dense layers, einsums, matmuls) and `conv_general_dilated`.
Sub-computations are followed (pjit, custom_jvp/vjp, remat; `scan` bodies times their length;
`cond` takes its most expensive branch; `while` bodies count once, their trip count being
unknown). Elementwise ops, reductions and softmax are not MACs and are not counted.
This is a property of the computation, unlike SPARK's original parameter-count proxy.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import jax
import jax.numpy as jnp
from jax.extend import core as jax_core


def reference_inputs(nodes: int, hidden: int, batch: int = 1) -> dict[str, jax.ShapeDtypeStruct]:
    """Abstract processor inputs of the MACs reference (float32)."""
    f32 = jnp.float32
    return dict(
        node_fts=jax.ShapeDtypeStruct((batch, nodes, hidden), f32),
        edge_fts=jax.ShapeDtypeStruct((batch, nodes, nodes, hidden), f32),
        graph_fts=jax.ShapeDtypeStruct((batch, hidden), f32),
        adj_mat=jax.ShapeDtypeStruct((batch, nodes, nodes), f32),
        hidden=jax.ShapeDtypeStruct((batch, nodes, hidden), f32),
    )


def _prod(xs) -> int:
    return int(math.prod(int(x) for x in xs))


def _eqn_macs(eqn) -> int:
    name = eqn.primitive.name
    if name == "dot_general":
        (lhs_contract, _), _ = eqn.params["dimension_numbers"]
        lhs_shape = eqn.invars[0].aval.shape
        return _prod(eqn.outvars[0].aval.shape) * _prod(lhs_shape[d] for d in lhs_contract)
    if name == "conv_general_dilated":
        rhs_shape = eqn.invars[1].aval.shape
        out_feature_dim = eqn.params["dimension_numbers"].rhs_spec[0]
        per_output = _prod(rhs_shape) // int(rhs_shape[out_feature_dim])
        return _prod(eqn.outvars[0].aval.shape) * per_output
    return 0


def _sub_jaxprs(value) -> list:
    if isinstance(value, jax_core.ClosedJaxpr):
        return [value.jaxpr]
    if isinstance(value, jax_core.Jaxpr):
        return [value]
    if isinstance(value, (tuple, list)):
        return [j for v in value for j in _sub_jaxprs(v)]
    return []


def jaxpr_macs(jaxpr) -> int:
    """Sum of contraction MACs in a (closed) jaxpr, following sub-computations."""
    if isinstance(jaxpr, jax_core.ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    total = 0
    for eqn in jaxpr.eqns:
        total += _eqn_macs(eqn)
        name = eqn.primitive.name
        if name == "cond":
            total += max((jaxpr_macs(b) for b in eqn.params["branches"]), default=0)
            continue
        inner = sum(jaxpr_macs(j) for v in eqn.params.values() for j in _sub_jaxprs(v))
        if name == "scan":
            inner *= int(eqn.params["length"])
        total += inner
    return total


def count_macs(fn: Callable, *args: Any, **kwargs: Any) -> int:
    """MACs of `fn(*args, **kwargs)`; arguments may be abstract (ShapeDtypeStruct)."""
    return jaxpr_macs(jax.make_jaxpr(lambda a, k: fn(*a, **k))(args, kwargs))


def flax_processor_macs(flax_module, nodes: int, hidden: int) -> int:
    """MACs of one step of a Flax processor on the reference input (batch 1)."""
    x = reference_inputs(nodes, hidden)
    variables = jax.eval_shape(lambda kw: flax_module.init(jax.random.PRNGKey(0), **kw), x)
    return count_macs(lambda v, **kw: flax_module.apply(v, **kw), variables, **x)


def haiku_processor_macs(processor_factory: Callable, nodes: int, hidden: int) -> int:
    """MACs of one step of a CLRS (Haiku) processor factory's processor on the reference input."""
    import haiku as hk

    x = reference_inputs(nodes, hidden)
    fn = hk.transform(lambda **kw: processor_factory(hidden)(**kw))
    params = jax.eval_shape(lambda kw: fn.init(jax.random.PRNGKey(0), **kw), x)
    return count_macs(lambda p, **kw: fn.apply(p, None, **kw), params, **x)
