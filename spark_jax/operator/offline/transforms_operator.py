"""OPERATOR transforms: which modules exist in `setup` and how they are parameterized.

Every transform here rewrites the value of one or more `self.NAME = ...` assignments (or the
triplet width) in the OPERATOR region and nothing else, so the ACTION region keeps calling
the same attributes. To stay self-contained, a rewritten module keeps its call signature
(one array in, one array out) and its output width; only width-agnostic consumers (a Dense
or a norm as first layer) may see a wider input (`op_widen_message_mlp`, `op_widen_triplets`).
New modules are built from the program's own helpers (`linear`, `layer_norm`), `nn.Sequential`
and parameter-free callables; every one acts on the feature axis only, so edge-wise masking
downstream is preserved (all are `masking_safe`).
"""

from __future__ import annotations

import random
import re

import libcst as cst

from spark_jax.operator.offline.base import (
    EditFn,
    ProgramContext,
    Transform,
    TransformNotApplicable,
    make_transform,
)
from spark_jax.operator.offline.cst_util import (
    Stmts,
    assign_name,
    assign_value,
    code,
    find_calls,
    fresh_name,
    insert_before,
    parse_stmts,
    self_assign,
    squash,
    with_value,
)

__all__ = ["OPERATOR_TRANSFORMS"]

_ACTIVATIONS = frozenset(
    {
        "jax.nn.relu",
        "jax.nn.gelu",
        "jax.nn.silu",
        "jax.nn.elu",
        "nn.relu",
        "nn.gelu",
        "nn.silu",
        "nn.elu",
    }
)
_SIMPLE = re.compile(r"[A-Za-z_][\w.]*|\d+")


def _need(ctx: ProgramContext, *names: str) -> None:
    missing = [n for n in names if n not in ctx.module_names]
    if missing:
        raise TransformNotApplicable(f"module-level name(s) missing: {', '.join(missing)}")


def _width(ctx: ProgramContext, kind: str) -> str:
    """The expression for the node width ('h') or the triplet width ('t') in setup."""
    attr = "self.out_size" if kind == "h" else "self.nb_triplet_fts"
    for stmt in ctx.operator.stmts:
        if assign_name(stmt) == kind:
            value = assign_value(stmt)
            if kind == "t" or squash(code(value)) == attr:
                return kind
    return attr


def _locate(ctx: ProgramContext, attr: str) -> tuple[int, cst.BaseExpression]:
    for i, stmt in enumerate(ctx.operator.stmts):
        hit = self_assign(stmt)
        if hit is not None and hit[0] == attr:
            return i, hit[1]
    raise TransformNotApplicable(f"no `self.{attr} = ...` in the OPERATOR region")


def _layers(expr: cst.BaseExpression) -> list[str]:
    """The layer codes of `nn.Sequential([...])`, else [the expression's code]."""
    if (
        isinstance(expr, cst.Call)
        and squash(code(expr.func)) == "nn.Sequential"
        and len(expr.args) == 1
        and isinstance(expr.args[0].value, cst.List)
    ):
        return [code(el.value) for el in expr.args[0].value.elements]
    return [code(expr)]


def _seq(layers: list[str]) -> str:
    return layers[0] if len(layers) == 1 else "nn.Sequential([" + ", ".join(layers) + "])"


def _linear(layer: str) -> tuple[str, list[str]] | None:
    """(width code, other argument codes) for `linear(W, ...)`, else None."""
    try:
        expr = cst.parse_expression(layer)
    except cst.ParserSyntaxError:
        return None
    if (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Name)
        and expr.func.value == "linear"
        and expr.args
        and expr.args[0].keyword is None
    ):
        return code(expr.args[0].value), [code(a).rstrip(", ") for a in expr.args[1:]]
    return None


def _scaled(k: int, width: str) -> str:
    return f"{k} * {width}" if _SIMPLE.fullmatch(width) else f"{k} * ({width})"


def _is_norm(layer: str) -> bool:
    return "norm" in layer.lower()


def _set(ctx: ProgramContext, changes: dict[int, str]) -> Stmts:
    stmts = list(ctx.operator.stmts)
    for i, value in changes.items():
        stmts[i] = with_value(stmts[i], value)
    return stmts


def _append_mlp(ctx: ProgramContext, attr: str) -> Stmts:
    """`self.attr`'s module followed by ReLU and a new `linear(h)` layer."""
    _need(ctx, "linear", "nn", "jax")
    i, expr = _locate(ctx, attr)
    layers = _layers(expr)
    if any(squash(layer) in _ACTIVATIONS for layer in layers):
        raise TransformNotApplicable(f"self.{attr} is already a multi-layer MLP")
    return _set(ctx, {i: _seq(layers + ["jax.nn.relu", f"linear({_width(ctx, 'h')})"])})


def _norm_layer(ctx: ProgramContext) -> str:
    return "layer_norm()" if "layer_norm" in ctx.module_names else "nn.LayerNorm(epsilon=1e-5)"


# The transforms.


def _deeper_message_mlp(ctx: ProgramContext, rng: random.Random) -> Stmts:
    return _append_mlp(ctx, "msg_mlp_2")


def _deeper_self_projection(ctx: ProgramContext, rng: random.Random) -> Stmts:
    return _append_mlp(ctx, "o1")


def _triplet_output_mlp(ctx: ProgramContext, rng: random.Random) -> Stmts:
    return _append_mlp(ctx, "o3")


def _widen_message_mlp(ctx: ProgramContext, rng: random.Random) -> Stmts:
    i, expr = _locate(ctx, "msg_mlp_1")
    lin = _linear(code(expr))
    if lin is None or lin[1] or not _SIMPLE.fullmatch(lin[0]):
        raise TransformNotApplicable("self.msg_mlp_1 is not a plain `linear(width)`")
    _, consumer = _locate(ctx, "msg_mlp_2")
    first = _layers(consumer)[0]
    if not (first.startswith("linear(") or _is_norm(first)):
        raise TransformNotApplicable("self.msg_mlp_2 does not start with a width-agnostic layer")
    # Every use of msg_mlp_1 must feed msg_mlp_2 through one activation call.
    uses = find_calls(ctx.action.module, "self.msg_mlp_1")
    fed = [
        c
        for c in find_calls(ctx.action.module, "self.msg_mlp_2")
        if len(c.args) == 1
        and isinstance(c.args[0].value, cst.Call)
        and len(c.args[0].value.args) == 1
        and isinstance(c.args[0].value.args[0].value, cst.Call)
        and squash(code(c.args[0].value.args[0].value.func)) == "self.msg_mlp_1"
    ]
    if not uses or len(uses) != len(fed):
        raise TransformNotApplicable("msg_mlp_1 output is used outside msg_mlp_2")
    return _set(ctx, {i: f"linear({_scaled(2, lin[0])})"})


def _message_layernorm(ctx: ProgramContext, rng: random.Random) -> Stmts:
    _need(ctx, "nn")
    i, expr = _locate(ctx, "msg_mlp_2")
    layers = _layers(expr)
    if any(_is_norm(layer) for layer in layers):
        raise TransformNotApplicable("messages are already normalized")
    return _set(ctx, {i: _seq(layers + [_norm_layer(ctx)])})


def _rmsnorm(ctx: ProgramContext, rng: random.Random) -> Stmts:
    _need(ctx, "nn")
    i, expr = _locate(ctx, "ln")
    if squash(code(expr)) != "layer_norm()" and not squash(code(expr)).startswith("nn.LayerNorm("):
        raise TransformNotApplicable("self.ln is not a LayerNorm")
    return _set(ctx, {i: "nn.RMSNorm(epsilon=1e-5)"})


def _glu(ctx: ProgramContext, attrs: tuple[str, ...]) -> Stmts:
    _need(ctx, "linear", "nn")
    changes = {}
    for attr in attrs:
        i, expr = _locate(ctx, attr)
        layers = _layers(expr)
        if any(squash(layer) == "nn.glu" for layer in layers):
            raise TransformNotApplicable(f"self.{attr} is already gated")
        lin = _linear(layers[-1])
        if lin is None:
            raise TransformNotApplicable(f"self.{attr} does not end with `linear(width)`")
        width, rest = lin
        changes[i] = _seq(
            layers[:-1] + [f"linear({', '.join([_scaled(2, width)] + rest)})", "nn.glu"]
        )
    return _set(ctx, changes)


def _glu_edge_projection(ctx: ProgramContext, rng: random.Random) -> Stmts:
    return _glu(ctx, ("m_e",))


def _glu_node_projections(ctx: ProgramContext, rng: random.Random) -> Stmts:
    return _glu(ctx, ("m_1", "m_2"))


def _edge_input_norm(ctx: ProgramContext, rng: random.Random) -> Stmts:
    _need(ctx, "nn")
    i, expr = _locate(ctx, "m_e")
    layers = _layers(expr)
    if _is_norm(layers[0]):
        raise TransformNotApplicable("edge features are already normalized")
    return _set(ctx, {i: _seq([_norm_layer(ctx)] + layers)})


def _widen_triplets(ctx: ProgramContext, rng: random.Random) -> Stmts:
    first = _layers(_locate(ctx, "o3")[1])[0]
    if not (first.startswith("linear(") or _is_norm(first)):
        raise TransformNotApplicable("self.o3 does not start with a width-agnostic layer")
    for i, stmt in enumerate(ctx.operator.stmts):
        if assign_name(stmt) == "t" and squash(code(assign_value(stmt))) == ("self.nb_triplet_fts"):
            return _set(ctx, {i: "2 * self.nb_triplet_fts"})
    raise TransformNotApplicable("no `t = self.nb_triplet_fts` (or already widened)")


def _plain_linears(ctx: ProgramContext, attrs: tuple[str, ...]) -> dict[int, str]:
    found = {}
    for attr in attrs:
        i, expr = _locate(ctx, attr)
        lin = _linear(code(expr))
        if lin is None or lin[1]:
            raise TransformNotApplicable(f"self.{attr} is not a plain `linear(width)`")
        found[i] = lin[0]
    return found


def _maxout_triplet_heads(ctx: ProgramContext, rng: random.Random) -> Stmts:
    _need(ctx, "linear", "nn", "jnp")
    widths = _plain_linears(ctx, ("t_1", "t_2", "t_3"))
    heads = 4
    fn = fresh_name("maxout_heads", ctx.operator.names())
    stmts = _set(
        ctx, {i: f"nn.Sequential([linear({_scaled(heads, w)}), {fn}])" for i, w in widths.items()}
    )
    helper = parse_stmts(f"""
        def {fn}(y):  # [..., {heads} * T] -> [..., T]: per-feature max over {heads} heads.
            return jnp.max(y.reshape(y.shape[:-1] + ({heads}, -1)), axis=-2)
        """)
    return insert_before(stmts, min(widths), helper)


def _head_mixing_edge_triplets(ctx: ProgramContext, rng: random.Random) -> Stmts:
    _need(ctx, "linear", "nn", "jax")
    widths = _plain_linears(ctx, ("t_e_1", "t_e_2", "t_e_3"))
    return _set(
        ctx,
        {
            i: f"nn.Sequential([linear({_scaled(4, w)}), jax.nn.relu, linear({w})])"
            for i, w in widths.items()
        },
    )


def _open_update_gate(ctx: ProgramContext, rng: random.Random) -> Stmts:
    i, expr = _locate(ctx, "gate3")
    text = code(expr)
    match = re.search(r"constant\(\s*(-?[0-9.]+)\s*\)", text)
    if match is None or float(match.group(1)) > -1.5:
        raise TransformNotApplicable("self.gate3 has no strongly negative constant bias")
    return _set(ctx, {i: text[: match.start(1)] + "-1.0" + text[match.end(1) :]})


def _t(name: str, magnitude: str, tags: set[str], description: str, edit: EditFn) -> Transform:
    return make_transform(name, "OPERATOR", magnitude, tags, description, edit)


OPERATOR_TRANSFORMS: tuple[Transform, ...] = (
    _t(
        "op_deeper_message_mlp",
        "large",
        {"depth", "width"},
        "Appends a ReLU and a second linear layer to the message MLP output, a deeper "
        "message function with the same width.",
        _deeper_message_mlp,
    ),
    _t(
        "op_widen_message_mlp",
        "large",
        {"width"},
        "Doubles the hidden width of the message MLP (h -> 2h) while its output stays h, "
        "more capacity per edge message.",
        _widen_message_mlp,
    ),
    _t(
        "op_message_layernorm",
        "small",
        {"norm"},
        "Layer-normalizes each edge message before aggregation, so the max is taken over "
        "messages on a common scale.",
        _message_layernorm,
    ),
    _t(
        "op_rmsnorm",
        "small",
        {"norm"},
        "Swaps the node-update LayerNorm for RMSNorm (same epsilon): rescaling without "
        "re-centering keeps the sign pattern the max aggregation produced.",
        _rmsnorm,
    ),
    _t(
        "op_glu_edge_projection",
        "small",
        {"gate", "edges"},
        "Makes the edge-feature projection a gated linear unit, a learned per-channel edge "
        "gate on what edges contribute to messages.",
        _glu_edge_projection,
    ),
    _t(
        "op_glu_node_projections",
        "small",
        {"gate"},
        "Makes the sender and receiver projections gated linear units, node channel gates "
        "that select which features enter each message.",
        _glu_node_projections,
    ),
    _t(
        "op_deeper_self_projection",
        "large",
        {"depth", "width"},
        "Turns the node self-projection of the update into a two-layer ReLU MLP, a richer "
        "function of the node state before it meets the aggregate.",
        _deeper_self_projection,
    ),
    _t(
        "op_edge_input_norm",
        "small",
        {"norm", "edges"},
        "Layer-normalizes edge features before their projection, stabilizing message "
        "scale across tasks with very different edge encodings.",
        _edge_input_norm,
    ),
    _t(
        "op_widen_triplets",
        "large",
        {"width", "triplet"},
        "Doubles the triplet feature width (t -> 2t); the triplet output projection maps it "
        "back, so edge embeddings keep their width.",
        _widen_triplets,
    ),
    _t(
        "op_maxout_triplet_heads",
        "large",
        {"width", "triplet"},
        "Gives the node triplet projections four heads and keeps the per-feature maximum "
        "(maxout), a multi-head piecewise-linear triplet encoder.",
        _maxout_triplet_heads,
    ),
    _t(
        "op_head_mixing_edge_triplets",
        "large",
        {"width", "depth", "triplet"},
        "Projects edges into four triplet heads and mixes them with a ReLU head-mixing "
        "layer, a multi-head nonlinear edge triplet encoder.",
        _head_mixing_edge_triplets,
    ),
    _t(
        "op_triplet_output_mlp",
        "large",
        {"depth", "triplet"},
        "Turns the triplet output projection into a two-layer ReLU MLP, a more expressive "
        "readout of the max-reduced triplet features.",
        _triplet_output_mlp,
    ),
    _t(
        "op_open_update_gate",
        "small",
        {"gate"},
        "Raises the update-gate bias from strongly negative to -1, so hidden states are "
        "overwritten more readily early in training.",
        _open_update_gate,
    ),
)
