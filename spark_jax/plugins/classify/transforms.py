"""Offline transforms for classifier programs (the classification families' LR/MLP/CNN/GRU).

A classifier maps features x [B, F] to logits [B, C] (see the family contract); the graph
catalogue finds nothing to edit in it. These transforms edit what a classifier has, each in
one region. OPERATOR (the `setup` body): the widths `self.hidden` of hidden layers, a hidden
layer in the output head, LayerNorm after hidden Dense/Conv layers. ACTION (the `__call__`
body): the hidden nonlinearity, residual connections around width-preserving Dense layers,
squared-feature inputs, and richer pooling of a sequence (mean+max, last+mean). Patterns are
matched on each statement's code, so edited programs still match where the shape survives.
"""

from __future__ import annotations

import random
import re

from spark_jax.operator.offline import dense_edits
from spark_jax.operator.offline.base import ProgramContext, Transform, make_transform
from spark_jax.operator.offline.base import TransformNotApplicable as NotApplicable
from spark_jax.operator.offline.cst_util import Stmts, code, parse_stmts, replace_stmt, self_assign

__all__ = ["CLASSIFIER_TRANSFORMS"]

_ACTS = ("nn.relu", "nn.gelu", "nn.silu", "nn.tanh", "nn.elu")
_ACT_RE = re.compile(r"\bnn\.(relu|gelu|silu|tanh|elu)\b")
# `X = ACT(self.NAME(X))`: a width-preserving candidate for a residual connection.
_TRUNK_RE = dense_edits.trunk_pattern(r"nn\.\w+")
_HEAD = "nn.Dense(self.num_classes)"
_LAYER_RE = re.compile(r"^nn\.(Dense|Conv)\(self\.hidden\b")


def _hidden_layers(ctx: ProgramContext) -> list[tuple[int, str, str]]:
    """(index, name, expression) of `self.NAME = nn.Dense/Conv(self.hidden...)` lines."""
    return dense_edits.self_assigns_matching(ctx.operator.stmts, _LAYER_RE)


def _widen(ctx: ProgramContext, rng: random.Random) -> Stmts:
    stmts, changed = list(ctx.operator.stmts), False
    for i, stmt in enumerate(stmts):
        text = dense_edits.stmt_line(stmt)
        if "self.hidden" not in text or text.startswith("self.out"):
            continue
        if "self.hidden // 2" in text:
            new = text.replace("self.hidden // 2", "self.hidden")
        else:
            new = re.sub(r"(?<![\w*] )\bself\.hidden\b(?! //)", "2 * self.hidden", text)
        if new != text:
            stmts, changed = replace_stmt(stmts, i, new), True
    if not changed:
        raise NotApplicable("no hidden layer sized by self.hidden in setup")
    return stmts


def _deeper_head(ctx: ProgramContext, rng: random.Random) -> Stmts:
    for i, stmt in enumerate(ctx.operator.stmts):
        hit = self_assign(stmt)
        if hit is not None and hit[0] == "out" and code(hit[1]).strip() == _HEAD:
            act = rng.choice(("nn.relu", "nn.gelu"))
            return replace_stmt(
                ctx.operator.stmts,
                i,
                f"self.out = nn.Sequential([nn.Dense(self.hidden), {act}, {_HEAD}])",
            )
    raise NotApplicable(f"no plain output head 'self.out = {_HEAD}' in setup")


def _norm(ctx: ProgramContext, rng: random.Random) -> Stmts:
    layers = _hidden_layers(ctx)
    if not layers:
        raise NotApplicable("no hidden 'self.NAME = nn.Dense/Conv(self.hidden...)' layer")
    return dense_edits.layernorm_after(ctx.operator.stmts, layers)


def _activation(ctx: ProgramContext, rng: random.Random) -> Stmts:
    found = [(i, _ACT_RE.findall(dense_edits.stmt_line(s))) for i, s in enumerate(ctx.action.stmts)]
    found = [(i, names) for i, names in found if names]
    if not found:
        raise NotApplicable("no nonlinearity nn.relu/gelu/silu/tanh/elu in __call__")
    current = f"nn.{found[0][1][0]}"
    new = rng.choice([a for a in _ACTS if a != current])
    stmts = list(ctx.action.stmts)
    for i, _ in found:
        stmts = replace_stmt(stmts, i, _ACT_RE.sub(new, dense_edits.stmt_line(stmts[i])))
    return stmts


def _residual(ctx: ProgramContext, rng: random.Random) -> Stmts:
    dense = {
        name
        for name, expr in ctx.submodules().items()
        if re.fullmatch(r"nn\.Dense\(self\.hidden\)", code(expr).strip())
    }
    stmts, changed = list(ctx.action.stmts), False
    for i, stmt in enumerate(stmts):
        m = _TRUNK_RE.match(dense_edits.stmt_line(stmt))
        if m and m.group(1) == m.group(4) and m.group(3) in dense:
            stmts, changed = replace_stmt(stmts, i, dense_edits.residual(m)), True
    if not changed:
        raise NotApplicable("no width-preserving 'X = ACT(self.NAME(X))' over an H->H Dense")
    return stmts


def _square_features(ctx: ProgramContext, rng: random.Random) -> Stmts:
    if "jnp.square(x)" in ctx.action.text or not re.search(r"\bx\b", ctx.action.text):
        raise NotApplicable("no raw input x in __call__, or squares already added")
    stmts = list(ctx.action.stmts)
    at = next((i for i, s in enumerate(stmts) if re.search(r"\bx\b", dense_edits.stmt_line(s))), 0)
    if dense_edits.stmt_line(stmts[at]).startswith("x = jnp.asarray"):
        at += 1
    new = parse_stmts("x = jnp.concatenate([x, jnp.square(x)], axis=-1)  # [B, 2F]\n")
    return stmts[:at] + new + stmts[at:]


def _pooling(ctx: ProgramContext, rng: random.Random) -> Stmts:
    stmts = list(ctx.action.stmts)
    for i, stmt in enumerate(stmts):
        text = dense_edits.stmt_line(stmt)
        if "jnp.mean(h, axis=1)" in text and "jnp.max(h, axis=1)" not in text:
            pooled = "jnp.concatenate([jnp.mean(h, axis=1), jnp.max(h, axis=1)], -1)"
            return replace_stmt(stmts, i, text.replace("jnp.mean(h, axis=1)", pooled, 1))
        if "h[:, -1]" in text and "jnp.mean(h, axis=1)" not in text:
            pooled = "jnp.concatenate([h[:, -1], jnp.mean(h, axis=1)], -1)"
            return replace_stmt(stmts, i, text.replace("h[:, -1]", pooled, 1))
    raise NotApplicable("no sequence pooling 'jnp.mean(h, axis=1)' or 'h[:, -1]' in __call__")


_t = make_transform


CLASSIFIER_TRANSFORMS: tuple[Transform, ...] = (
    _t(
        "op_clf_widen",
        "OPERATOR",
        "small",
        {"width"},
        "Doubles the width of every hidden layer (Dense units, Conv channels, GRU state).",
        _widen,
    ),
    _t(
        "op_clf_deeper_head",
        "OPERATOR",
        "large",
        {"depth"},
        "Replaces the linear output head by a one-hidden-layer MLP head.",
        _deeper_head,
    ),
    _t(
        "op_clf_layernorm",
        "OPERATOR",
        "small",
        {"norm"},
        "Adds LayerNorm after each hidden Dense/Conv layer to keep activations well scaled.",
        _norm,
    ),
    _t(
        "act_clf_activation",
        "ACTION",
        "small",
        {"activation"},
        "Swaps the hidden nonlinearity (relu, gelu, silu, tanh, elu).",
        _activation,
    ),
    _t(
        "act_clf_residual",
        "ACTION",
        "small",
        {"residual"},
        "Adds a residual connection around each width-preserving hidden Dense layer.",
        _residual,
    ),
    _t(
        "act_clf_square_features",
        "ACTION",
        "small",
        {"interaction"},
        "Appends squared features to the input, a quadratic feature interaction.",
        _square_features,
    ),
    _t(
        "act_clf_pooling",
        "ACTION",
        "small",
        {"aggregation"},
        "Pools the sequence with two statistics (mean and max, or last state and mean).",
        _pooling,
    ),
)
