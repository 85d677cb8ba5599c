"""Offline transforms for dense policy programs (CartPole-v1 actor-critic networks).

The graph catalogue looks for messages, adjacency and aggregations, which a policy has none
of; these transforms edit what a policy does have. OPERATOR: `self.NAME = dense(...)` layer
definitions and the width line `h = ...`. ACTION: trunk statements of the form
`X = ACT(self.NAME(Y))` and the observation input. Patterns are matched on each statement's
code, so programs that were already edited still match where the shape survives.
"""

from __future__ import annotations

import random
import re

from spark_jax.operator.offline import dense_edits
from spark_jax.operator.offline.base import ProgramContext, Transform, make_transform
from spark_jax.operator.offline.base import TransformNotApplicable as NotApplicable
from spark_jax.operator.offline.cst_util import Stmts, parse_stmts, replace_stmt

__all__ = ["POLICY_TRANSFORMS"]

_ACTS = ("jnp.tanh", "jax.nn.relu", "jax.nn.gelu", "jax.nn.silu", "jax.nn.elu")
_WIDTH_RE = re.compile(r"^h = (.+?)\s*(#.*)?$")
_HIDDEN_RE = re.compile(r"dense\(h\)\Z")  # A hidden layer (an output head is dense(N)).
_TRUNK_RE = dense_edits.trunk_pattern(r"(?:jnp|jax\.nn)\.\w+")
# Observation scale per component (cart x, x_dot, pole theta, theta_dot): the termination
# thresholds for x and theta and typical speeds, so every input is O(1).
_OBS_SCALE = "(2.4, 2.0, 0.21, 2.0)"


def _hidden_layers(ctx: ProgramContext) -> list[tuple[int, str, str]]:
    """(index, name, call text) of `self.NAME = dense(h)` lines (hidden, not output heads)."""
    return dense_edits.self_assigns_matching(ctx.operator.stmts, _HIDDEN_RE)


def _widen(ctx: ProgramContext, rng: random.Random) -> Stmts:
    for i, stmt in enumerate(ctx.operator.stmts):
        m = _WIDTH_RE.match(dense_edits.stmt_line(stmt))
        if m:
            factor = rng.choice((2, 4))
            return replace_stmt(ctx.operator.stmts, i, f"h = {factor} * ({m.group(1)})")
    raise NotApplicable("no width line 'h = ...' in setup")


def _deeper(ctx: ProgramContext, rng: random.Random) -> Stmts:
    layers = _hidden_layers(ctx)
    if not layers:
        raise NotApplicable("no hidden 'self.NAME = dense(h)' layer to deepen")
    i, name, _ = rng.choice(layers)
    return replace_stmt(
        ctx.operator.stmts, i, f"self.{name} = nn.Sequential([dense(h), jnp.tanh, dense(h)])"
    )


def _norm(ctx: ProgramContext, rng: random.Random) -> Stmts:
    layers = _hidden_layers(ctx)
    if not layers:
        raise NotApplicable("no hidden 'self.NAME = dense(h)' layer to normalize")
    return dense_edits.layernorm_after(ctx.operator.stmts, layers)


def _trunk(ctx: ProgramContext) -> list[tuple[int, re.Match]]:
    out = []
    for i, stmt in enumerate(ctx.action.stmts):
        m = _TRUNK_RE.match(dense_edits.stmt_line(stmt))
        if m and m.group(2) in _ACTS:
            out.append((i, m))
    return out


def _activation(ctx: ProgramContext, rng: random.Random) -> Stmts:
    trunk = _trunk(ctx)
    if not trunk:
        raise NotApplicable("no trunk statement 'X = ACT(self.NAME(Y))' in __call__")
    current = trunk[0][1].group(2)
    new = rng.choice([a for a in _ACTS if a != current])
    stmts = list(ctx.action.stmts)
    for i, m in trunk:
        x, _, layer, y, comment = m.groups()
        stmts = replace_stmt(stmts, i, f"{x} = {new}(self.{layer}({y}))  {comment or ''}".rstrip())
    return stmts


def _residual(ctx: ProgramContext, rng: random.Random) -> Stmts:
    same = [(i, m) for i, m in _trunk(ctx) if m.group(1) == m.group(4)]
    if not same:
        raise NotApplicable("no width-preserving trunk statement 'X = ACT(self.NAME(X))'")
    stmts = list(ctx.action.stmts)
    for i, m in same:
        stmts = replace_stmt(stmts, i, dense_edits.residual(m))
    return stmts


def _input_scale(ctx: ProgramContext, rng: random.Random) -> Stmts:
    if "obs_scale" in ctx.action.text:
        raise NotApplicable("observations are already scaled")
    stmts = list(ctx.action.stmts)
    at = next(
        (i for i, s in enumerate(stmts) if not dense_edits.stmt_line(s).startswith("assert")), None
    )
    if at is None or "obs" not in ctx.action.text:
        raise NotApplicable("no 'obs' input used in __call__")
    new = parse_stmts(
        f"obs_scale = jnp.asarray({_OBS_SCALE}, obs.dtype)  # [4]\nobs = obs / obs_scale  # [B, 4]\n"
    )
    return stmts[:at] + new + stmts[at:]


_t = make_transform


POLICY_TRANSFORMS: tuple[Transform, ...] = (
    _t(
        "op_policy_widen",
        "OPERATOR",
        "small",
        {"width"},
        "Widens every hidden layer (2x or 4x) for more capacity per trunk.",
        _widen,
    ),
    _t(
        "op_policy_deeper_layer",
        "OPERATOR",
        "large",
        {"depth"},
        "Replaces one hidden layer by a two-layer tanh MLP, a deeper trunk.",
        _deeper,
    ),
    _t(
        "op_policy_layernorm",
        "OPERATOR",
        "small",
        {"norm"},
        "Adds LayerNorm after each hidden layer to keep trunk activations well scaled.",
        _norm,
    ),
    _t(
        "act_policy_activation",
        "ACTION",
        "small",
        {"activation"},
        "Swaps the trunk nonlinearity (tanh, relu, gelu, silu, elu).",
        _activation,
    ),
    _t(
        "act_policy_residual",
        "ACTION",
        "small",
        {"residual"},
        "Adds a residual connection around each width-preserving trunk layer.",
        _residual,
    ),
    _t(
        "act_policy_input_scale",
        "ACTION",
        "small",
        {"interaction"},
        "Scales observations by the termination thresholds and typical speeds, so every "
        "input is of order one.",
        _input_scale,
    ),
)
