"""Edits of dense (non-graph) programs shared by the families' catalogues: the classifiers'
(`plugins/classify/transforms.py`) and the CartPole policies' (`plugins/cartpole/transforms.py`).

Both define their hidden layers as `self.NAME = EXPR` lines in `setup` and call them in trunk
statements `X = ACT(self.NAME(Y))  # comment` in `__call__`; what differs is which EXPR is a
hidden layer and how an activation is spelled (`nn.relu` in a classifier, `jnp.tanh` or
`jax.nn.relu` in a policy), so both are the caller's patterns. Patterns are matched on a
statement's code (`stmt_line`), so edited programs still match where the shape survives.
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

import libcst as cst

from spark_jax.operator.offline.cst_util import Stmts, code, replace_stmt, self_assign

__all__ = ["layernorm_after", "residual", "self_assigns_matching", "stmt_line", "trunk_pattern"]


def stmt_line(stmt: cst.BaseStatement) -> str:
    """A statement's code without its surrounding white space (comments kept)."""
    return code(stmt).strip()


def self_assigns_matching(
    stmts: Sequence[cst.BaseStatement], pattern: re.Pattern[str]
) -> list[tuple[int, str, str]]:
    """(index, NAME, EXPR code stripped) of each `self.NAME = EXPR` line of `stmts` whose
    EXPR code `pattern` matches from its start (a layer definition a transform edits)."""
    found = []
    for i, stmt in enumerate(stmts):
        hit = self_assign(stmt)
        if hit is not None and pattern.match(code(hit[1]).strip()):
            found.append((i, hit[0], code(hit[1]).strip()))
    return found


def layernorm_after(
    stmts: Sequence[cst.BaseStatement], layers: Iterable[tuple[int, str, str]]
) -> Stmts:
    """`stmts` with a LayerNorm after each of `layers` ((index, NAME, EXPR) of `self.NAME =
    EXPR` lines, as from `self_assigns_matching`): `self.NAME = nn.Sequential([EXPR,
    nn.LayerNorm()])`."""
    out = list(stmts)
    for i, name, expr in layers:
        out = replace_stmt(out, i, f"self.{name} = nn.Sequential([{expr}, nn.LayerNorm()])")
    return out


def trunk_pattern(activation: str) -> re.Pattern[str]:
    """The pattern of a trunk statement `X = ACT(self.NAME(Y))  # comment` whose ACT matches
    the regular expression `activation`; groups: X, ACT, NAME, Y, the comment (or None)."""
    return re.compile(rf"^(\w+) = ({activation})\(self\.(\w+)\((\w+)\)\)\s*(#.*)?$")


def residual(trunk: re.Match[str]) -> str:
    """The trunk statement `trunk` (a `trunk_pattern` match with X == Y) with a residual
    connection around its layer, `X = X + ACT(self.NAME(X))`, its comment kept."""
    x, act, layer, _, comment = trunk.groups()
    return f"{x} = {x} + {act}(self.{layer}({x}))  {comment or ''}".rstrip()
