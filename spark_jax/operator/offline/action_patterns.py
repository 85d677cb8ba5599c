"""Structural finders for the ACTION region (the `__call__` body), used by ACTION transforms.

Patterns are found by structure, not by variable names:
- the message construction: an assignment whose value sums `jnp.expand_dims(R, axis=1)`
  (receiver), `jnp.expand_dims(S, axis=2)` (sender), a bare name (edge) and
  `jnp.expand_dims(G, axis=(1, 2))` (graph) terms;
- the aggregation: `M = jnp.where(COND, MSGS, -BIG)`, then `AGG = jnp.max(M, axis=1)`;
- the node output: the first element of the top-level `return OUT, EDGE`;
- the triplet readout: `self.o3(jnp.max(TRIPLETS, axis=1))`.
Each finder raises TransformNotApplicable naming what is missing.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Callable, TypeVar

import libcst as cst

from spark_jax.operator.offline.base import ProgramContext, TransformNotApplicable
from spark_jax.operator.offline.cst_util import (
    Stmts,
    assign_name,
    assign_value,
    code,
    find_calls,
    squash,
)

__all__ = [
    "Messages",
    "Aggregation",
    "find_return",
    "first_assign",
    "mixes_hidden",
    "find_messages",
    "find_aggregation",
    "find_max_aggregation",
    "find_triplet_readout",
]


T = TypeVar("T")


def _first(stmts: Stmts, match: Callable[[Stmts, int], T | None], missing: str) -> T:
    """What `match(stmts, i)` finds at the first statement where it finds something; raises
    TransformNotApplicable(`missing`) when it finds nothing anywhere."""
    for i in range(len(stmts)):
        found = match(stmts, i)
        if found is not None:
            return found
    raise TransformNotApplicable(missing)


def _return_at(stmts: Stmts, i: int) -> tuple[int, str, cst.Tuple] | None:
    stmt = stmts[i]
    if (
        isinstance(stmt, cst.SimpleStatementLine)
        and isinstance(stmt.body[0], cst.Return)
        and isinstance(stmt.body[0].value, cst.Tuple)
        and len(stmt.body[0].value.elements) == 2
        and isinstance(stmt.body[0].value.elements[0].value, cst.Name)
    ):
        value = stmt.body[0].value
        return i, value.elements[0].value.value, value
    return None


def find_return(stmts: Stmts) -> tuple[int, str, cst.Tuple]:
    """(index, node-output name, returned tuple) of the top-level `return OUT, EDGE`."""
    return _first(stmts, _return_at, "no top-level `return OUT, EDGE` with a named node output")


def first_assign(stmts: Stmts, name: str) -> int:
    for i, stmt in enumerate(stmts):
        if assign_name(stmt) == name:
            return i
    raise TransformNotApplicable(f"no top-level assignment to {name!r}")


class _Assigns(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, cst.BaseExpression]] = []

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                self.found.append((target.target.value, node.value))


def mixes_hidden(ctx: ProgramContext, name: str) -> bool:
    """Whether some assignment to `name` already reads `hidden` (a residual or gate)."""
    visitor = _Assigns()
    ctx.action.module.visit(visitor)
    return any(n == name and re.search(r"\bhidden\b", code(v)) for n, v in visitor.found)


def _terms(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        return _terms(expr.left) + _terms(expr.right)
    return [expr]


@dataclasses.dataclass(frozen=True)
class Messages:
    """The message construction `NAME = expand(R, 1) + expand(S, 2) + E + expand(G, (1, 2))`."""

    index: int
    name: str
    receiver: str
    sender: str
    edge: str | None
    graph: str | None


def _messages_at(stmts: Stmts, i: int) -> Messages | None:
    name, value = assign_name(stmts[i]), assign_value(stmts[i])
    if name is None or value is None:
        return None
    roles: dict[str, str] = {}
    for term in _terms(value):
        if isinstance(term, cst.Name):
            roles.setdefault("edge", term.value)
        elif (
            isinstance(term, cst.Call)
            and squash(code(term.func)) == "jnp.expand_dims"
            and len(term.args) == 2
            and isinstance(term.args[0].value, cst.Name)
        ):
            axis = squash(code(term.args[1].value))
            role = {"1": "receiver", "2": "sender", "(1,2)": "graph"}.get(axis)
            if role:
                roles.setdefault(role, term.args[0].value.value)
    if "receiver" not in roles or "sender" not in roles:
        return None
    return Messages(
        i, name, roles["receiver"], roles["sender"], roles.get("edge"), roles.get("graph")
    )


def find_messages(stmts: Stmts) -> Messages:
    return _first(stmts, _messages_at, "no message construction from receiver and sender terms")


@dataclasses.dataclass(frozen=True)
class Aggregation:
    """`MASKED = jnp.where(COND, MSGS, -BIG)` (at `where`), then `AGG = jnp.max(MASKED, axis=1)`
    (at `max`, the next statement, or None when something else follows)."""

    where: int
    masked: str
    cond: str
    msgs: str
    max: int | None
    agg: str | None


def _aggregation_at(stmts: Stmts, i: int) -> Aggregation | None:
    value = assign_value(stmts[i])
    if not (
        isinstance(value, cst.Call)
        and squash(code(value.func)) == "jnp.where"
        and len(value.args) == 3
        and isinstance(value.args[1].value, cst.Name)
        and squash(code(value.args[2].value)).startswith("-")
        and assign_name(stmts[i]) is not None
    ):
        return None
    masked = assign_name(stmts[i])
    nxt = assign_value(stmts[i + 1]) if i + 1 < len(stmts) else None
    is_max = (
        isinstance(nxt, cst.Call)
        and squash(code(nxt.func)) == "jnp.max"
        and len(nxt.args) == 2
        and squash(code(nxt.args[0].value)) == masked
        and squash(code(nxt.args[1])).rstrip(",") in ("axis=1", "1")
    )
    return Aggregation(
        i,
        masked,
        code(value.args[0].value),
        value.args[1].value.value,
        i + 1 if is_max else None,
        assign_name(stmts[i + 1]) if is_max else None,
    )


def find_aggregation(stmts: Stmts) -> Aggregation:
    return _first(stmts, _aggregation_at, "no masked aggregation `jnp.where(mask, msgs, -BIG)`")


def find_max_aggregation(stmts: Stmts) -> Aggregation:
    agg = find_aggregation(stmts)
    if agg.max is None:
        raise TransformNotApplicable("the masked messages are not reduced by a plain max")
    return agg


def _triplet_readout_at(stmts: Stmts, i: int) -> tuple[int, str, str] | None:
    for call in find_calls(stmts[i], "self.o3"):
        arg = call.args[0].value if len(call.args) == 1 else None
        if (
            isinstance(arg, cst.Call)
            and squash(code(arg.func)) == "jnp.max"
            and len(arg.args) == 2
            and isinstance(arg.args[0].value, cst.Name)
            and squash(code(arg.args[1])).rstrip(",") in ("axis=1", "1")
        ):
            return i, code(arg), arg.args[0].value.value
    return None


def find_triplet_readout(stmts: Stmts) -> tuple[int, str, str]:
    """(index, `jnp.max(X, axis=1)` code, X) of the statement reading out triplets by o3."""
    return _first(stmts, _triplet_readout_at, "no `self.o3(jnp.max(triplets, axis=1))` readout")
