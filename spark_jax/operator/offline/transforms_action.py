"""ACTION transforms: how the existing modules are invoked, wired, masked and aggregated.

Every transform here edits statements of the `__call__` body only. It may call submodules
that already exist in `setup` and parameter-free operations (jnp / jax.nn), never create
parameters. Patterns are found structurally, not by variable names (see `action_patterns`).
Every transform keeps the adjacency mask in front of any sum or max over senders, so all
are `masking_safe`.
"""

from __future__ import annotations

import random

import libcst as cst

from spark_jax.operator.offline.action_patterns import (
    find_aggregation,
    find_max_aggregation,
    find_messages,
    find_return,
    find_triplet_readout,
    first_assign,
    mixes_hidden,
)
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
    replace_subexpr,
    squash,
    with_value,
)

__all__ = ["ACTION_TRANSFORMS"]

_ACTIVATIONS = ("relu", "gelu", "silu", "elu")


def _stmts(ctx: ProgramContext) -> Stmts:
    return list(ctx.action.stmts)


def _fresh(ctx: ProgramContext, base: str) -> str:
    return fresh_name(base, ctx.action.names() | ctx.module_names)


def _big(ctx: ProgramContext) -> str:
    return "BIG_NUMBER" if "BIG_NUMBER" in ctx.module_names else "1e6"


# The transforms.


def _adjacency_masking(ctx: ProgramContext, rng: random.Random) -> Stmts:
    stmts = _stmts(ctx)
    for i, stmt in enumerate(stmts):
        if assign_name(stmt) == "adj_mat" and squash(code(assign_value(stmt))) == (
            "jnp.ones_like(adj_mat)"
        ):
            if not any("adj_mat" in code(s) for s in stmts[i + 1 :]):
                raise TransformNotApplicable("adj_mat is not used after the override")
            return stmts[:i] + stmts[i + 1 :]
    raise TransformNotApplicable("no `adj_mat = jnp.ones_like(adj_mat)` override to remove")


def _max_mean_aggregation(ctx: ProgramContext, rng: random.Random) -> Stmts:
    stmts = _stmts(ctx)
    agg = find_max_aggregation(stmts)
    deg, mean = _fresh(ctx, "in_degree"), _fresh(ctx, "msgs_mean")
    before = parse_stmts(f"""
        {deg} = jnp.sum(jnp.where({agg.cond}, 1.0, 0.0), axis=1)  # [B, N, 1]
        {mean} = jnp.sum(jnp.where({agg.cond}, {agg.msgs}, 0.0), axis=1)  # [B, N, H]
        {mean} = {mean} / jnp.maximum({deg}, 1.0)
        """)
    after = parse_stmts(f"""
        # Max and masked mean side by side; the next projection learns how to mix them.
        {agg.agg} = jnp.concatenate([{agg.agg}, {mean}], axis=-1)  # [B, N, 2H]
        """)
    stmts[agg.max + 1 : agg.max + 1] = after
    return insert_before(stmts, agg.max, before)


def _softmax_aggregation(ctx: ProgramContext, rng: random.Random) -> Stmts:
    stmts = _stmts(ctx)
    agg = find_max_aggregation(stmts)
    att = _fresh(ctx, "attention")
    new = parse_stmts(f"""
        # Per-channel softmax attention over senders; non-edges get exactly zero weight.
        {att} = jax.nn.softmax({agg.masked}, axis=1)  # [B, N, N, H]
        {agg.agg} = jnp.sum(jnp.where({agg.cond}, {att} * {agg.msgs}, 0.0), axis=1)
        """)
    stmts[agg.max : agg.max + 1] = new
    return stmts


def _unmixed_output(ctx: ProgramContext) -> tuple[Stmts, str, int]:
    """(statements, node-output name, index of its first assignment) when the node output
    does not yet read the previous hidden state (a residual or gate would be added twice)."""
    stmts = _stmts(ctx)
    _, out, _ = find_return(stmts)
    if mixes_hidden(ctx, out):
        raise TransformNotApplicable(f"{out} already mixes in the previous hidden state")
    return stmts, out, first_assign(stmts, out)


def _residual_update(ctx: ProgramContext, rng: random.Random) -> Stmts:
    stmts, out, i = _unmixed_output(ctx)
    stmts[i + 1 : i + 1] = parse_stmts(f"""
        {out} = {out} + hidden  # Residual path from the previous hidden state.
        """)
    return stmts


def _gated_residual(ctx: ProgramContext, rng: random.Random) -> Stmts:
    stmts, out, i = _unmixed_output(ctx)
    value = assign_value(stmts[i])
    if not (
        isinstance(value, cst.Call)
        and len(value.args) == 1
        and squash(code(value.func)) in {f"jax.nn.{a}" for a in _ACTIVATIONS}
    ):
        raise TransformNotApplicable(f"{out} is not first computed as activation(pre)")
    pre, gate = _fresh(ctx, "update_pre"), _fresh(ctx, "update_gate")
    stmts[i] = with_value(stmts[i], f"{code(value.func)}({pre})")
    stmts = insert_before(
        stmts,
        i,
        parse_stmts(f"""
        {pre} = {code(value.args[0].value)}  # [B, N, H]
        """),
    )
    ret, _, _ = find_return(stmts)
    return insert_before(
        stmts,
        ret,
        parse_stmts(f"""
        # Gated residual (highway): the update's own pre-activation decides how much of
        # the previous hidden state to keep.
        {gate} = jax.nn.sigmoid({pre})
        {out} = {gate} * {out} + (1.0 - {gate}) * hidden
        """),
    )


def _swap_activation(stmt: cst.BaseStatement, rng: random.Random) -> cst.BaseStatement:
    choice = rng.choice([a for a in _ACTIVATIONS if a != "relu"])
    new, count = replace_subexpr(stmt, "jax.nn.relu", f"jax.nn.{choice}")
    assert count
    return new


def _message_activation(ctx: ProgramContext, rng: random.Random) -> Stmts:
    stmts = _stmts(ctx)
    for i, stmt in enumerate(stmts):
        if find_calls(stmt, "self.msg_mlp_2") and find_calls(stmt, "jax.nn.relu"):
            stmts[i] = _swap_activation(stmt, rng)
            return stmts
    raise TransformNotApplicable("no ReLU inside the message MLP call")


def _update_activation(ctx: ProgramContext, rng: random.Random) -> Stmts:
    stmts = _stmts(ctx)
    _, out, _ = find_return(stmts)
    i = first_assign(stmts, out)
    value = assign_value(stmts[i])
    if not (isinstance(value, cst.Call) and squash(code(value.func)) == "jax.nn.relu"):
        raise TransformNotApplicable(f"{out} is not first computed as jax.nn.relu(...)")
    stmts[i] = _swap_activation(stmts[i], rng)
    return stmts


def _insert_after_messages(ctx: ProgramContext, line: str) -> Stmts:
    stmts = _stmts(ctx)
    msgs = find_messages(stmts)
    new = parse_stmts(line.format(m=msgs))
    if squash(code(new[0].with_changes(leading_lines=())).split("#")[0]) in squash(ctx.action.text):
        raise TransformNotApplicable("this message term is already present")
    stmts[msgs.index + 1 : msgs.index + 1] = new
    return stmts


def _multiplicative_interaction(ctx: ProgramContext, rng: random.Random) -> Stmts:
    name = find_messages(_stmts(ctx)).name
    pad = " " * (2 * len(name) + 6)
    return _insert_after_messages(
        ctx,
        "# Receiver-sender interaction term.\n"
        "{m.name} = {m.name} + (jnp.expand_dims({m.receiver}, axis=1)\n"
        f"{pad}* jnp.expand_dims({{m.sender}}, axis=2))  # [B, N, N, H]\n",
    )


def _global_channel_gate(ctx: ProgramContext, rng: random.Random) -> Stmts:
    if find_messages(_stmts(ctx)).graph is None:
        raise TransformNotApplicable("messages have no graph-feature term")
    return _insert_after_messages(
        ctx,
        "{m.name} = {m.name} * jax.nn.sigmoid(jnp.expand_dims({m.graph}, axis=(1, 2)))"
        "  # global channel gate\n",
    )


def _receiver_channel_gate(ctx: ProgramContext, rng: random.Random) -> Stmts:
    return _insert_after_messages(
        ctx,
        "{m.name} = {m.name} * jax.nn.sigmoid(jnp.expand_dims({m.receiver}, axis=1))"
        "  # receiver channel gate\n",
    )


def _edge_channel_gate(ctx: ProgramContext, rng: random.Random) -> Stmts:
    if find_messages(_stmts(ctx)).edge is None:
        raise TransformNotApplicable("messages have no edge-feature term")
    return _insert_after_messages(
        ctx, "{m.name} = {m.name} * jax.nn.sigmoid({m.edge})  # edge channel gate\n"
    )


def _edge_output(ctx: ProgramContext, rng: random.Random) -> Stmts:
    stmts = _stmts(ctx)
    ret, _, value = find_return(stmts)
    if squash(code(value.elements[1].value)) != "None":
        raise TransformNotApplicable("the processor already returns edge embeddings")
    agg = find_aggregation(stmts)
    edge = _fresh(ctx, "edge_out")
    ret_stmt = stmts[ret]
    new_value = value.with_changes(
        elements=[value.elements[0], value.elements[1].with_changes(value=cst.Name(edge))]
    )
    stmts[ret] = ret_stmt.with_changes(body=[ret_stmt.body[0].with_changes(value=new_value)])
    return insert_before(
        stmts,
        agg.where,
        parse_stmts(f"""
        {edge} = jax.nn.relu({agg.msgs})  # [B, N, N, H] pair messages as edge embeddings
        """),
    )


def _triplet_max_mean(ctx: ProgramContext, rng: random.Random) -> Stmts:
    stmts = _stmts(ctx)
    i, old, tri = find_triplet_readout(stmts)
    stmts[i], _ = replace_subexpr(
        stmts[i],
        old,
        f"jnp.concatenate([jnp.max({tri}, axis=1), jnp.mean({tri}, axis=1)], axis=-1)",
    )
    return stmts


def _triplet_topology_mask(ctx: ProgramContext, rng: random.Random) -> Stmts:
    stmts = _stmts(ctx)
    i, old, tri = find_triplet_readout(stmts)
    adj = "adj_mat"
    mask, tmax = _fresh(ctx, "tri_mask"), _fresh(ctx, "tri_max")
    for k, stmt in enumerate(stmts[:i]):
        if assign_name(stmt) == "adj_mat":  # Keep the input adjacency before an override.
            adj = _fresh(ctx, "input_adj")
            stmts = insert_before(
                stmts,
                k,
                parse_stmts(f"""
                {adj} = adj_mat  # [B, N, N] the input graph, for the triplet mask
                """),
            )
            i += 1
            break
    stmts[i], _ = replace_subexpr(stmts[i], old, tmax)
    return insert_before(
        stmts,
        i,
        parse_stmts(f"""
        # Triplet max over first nodes i restricted to input edges (i, j).
        {mask} = jnp.expand_dims({adj} > 0, axis=(3, 4))  # [B, N, N, 1, 1]
        {tmax} = jnp.max(jnp.where({mask}, {tri}, -{_big(ctx)}), axis=1)  # [B, N, N, T]
        {tmax} = jnp.where(jnp.any({mask}, axis=1), {tmax}, 0.0)
        """),
    )


def _t(name: str, magnitude: str, tags: set[str], description: str, edit: EditFn) -> Transform:
    return make_transform(name, "ACTION", magnitude, tags, description, edit)


ACTION_TRANSFORMS: tuple[Transform, ...] = (
    _t(
        "act_adjacency_masking",
        "large",
        {"masking"},
        "Removes the fully-connected override so messages flow only along input edges, "
        "a topology-aware receptive field.",
        _adjacency_masking,
    ),
    _t(
        "act_max_mean_aggregation",
        "large",
        {"aggregation", "masking"},
        "Aggregates with both the masked max and the masked mean, concatenated so the node "
        "update projection learns the mix.",
        _max_mean_aggregation,
    ),
    _t(
        "act_softmax_aggregation",
        "large",
        {"aggregation", "masking"},
        "Replaces the max over senders by per-channel softmax attention with an adjacency "
        "bias, a smooth and fully differentiable max.",
        _softmax_aggregation,
    ),
    _t(
        "act_residual_update",
        "small",
        {"residual"},
        "Adds the previous hidden state to the node update, a residual path that eases "
        "propagation over many algorithm steps.",
        _residual_update,
    ),
    _t(
        "act_gated_residual",
        "large",
        {"residual", "gate"},
        "Blends the new node state with the previous one through a sigmoid gate of the "
        "update pre-activation (a highway connection).",
        _gated_residual,
    ),
    _t(
        "act_message_activation",
        "small",
        {"activation"},
        "Swaps the ReLUs around the message MLP for a smooth activation (GELU, SiLU or ELU) "
        "that keeps gradients for negative pre-activations.",
        _message_activation,
    ),
    _t(
        "act_update_activation",
        "small",
        {"activation"},
        "Swaps the ReLU of the node update for a smooth activation (GELU, SiLU or ELU).",
        _update_activation,
    ),
    _t(
        "act_multiplicative_interaction",
        "large",
        {"interaction"},
        "Adds a multiplicative receiver-sender term to each message, letting messages "
        "compare the two endpoints instead of only summing them.",
        _multiplicative_interaction,
    ),
    _t(
        "act_global_channel_gate",
        "small",
        {"gate"},
        "Gates message channels with a sigmoid of the graph-feature projection, a global "
        "per-channel gate.",
        _global_channel_gate,
    ),
    _t(
        "act_receiver_channel_gate",
        "small",
        {"gate"},
        "Gates each message channel-wise with a sigmoid of the receiver projection, so each "
        "node selects which features it listens to.",
        _receiver_channel_gate,
    ),
    _t(
        "act_edge_channel_gate",
        "small",
        {"gate", "edges"},
        "Gates each message channel-wise with a sigmoid of its edge projection, an edge "
        "channel gate.",
        _edge_channel_gate,
    ),
    _t(
        "act_edge_output_from_messages",
        "large",
        {"edges"},
        "Returns the pre-aggregation pair messages as edge embeddings, an edge-feature "
        "update from node pairs for the edge decoders.",
        _edge_output,
    ),
    _t(
        "act_triplet_max_mean",
        "large",
        {"aggregation", "triplet"},
        "Reads out triplets with both max and mean over the first node, concatenated so the "
        "triplet output projection learns the mix.",
        _triplet_max_mean,
    ),
    _t(
        "act_triplet_topology_mask",
        "small",
        {"masking", "triplet"},
        "Restricts the triplet max to first nodes that are input neighbours, "
        "topology-aware triplet reasoning.",
        _triplet_topology_mask,
    ),
)
