"""Small pure libcst helpers for the offline editor's transforms (they return new nodes)."""

from __future__ import annotations

import re
import textwrap
from typing import Iterable, Sequence

import libcst as cst

__all__ = [
    "Stmts",
    "code",
    "squash",
    "parse_stmts",
    "assign_name",
    "assign_value",
    "self_assign",
    "with_value",
    "replace_stmt",
    "replace_subexpr",
    "find_calls",
    "self_calls",
    "insert_before",
    "fresh_name",
]

_EMPTY = cst.Module(body=[])
Stmts = list[cst.BaseStatement]


def code(node: cst.CSTNode) -> str:
    """The source text of a libcst node."""
    return _EMPTY.code_for_node(node)


def squash(text: str) -> str:
    """`text` without any whitespace (a formatting-insensitive pattern key)."""
    return re.sub(r"\s+", "", text)


def parse_stmts(text: str) -> Stmts:
    """Parses (dedented) statement text into libcst statements; leading comments stay on
    the first statement."""
    module = cst.parse_module(textwrap.dedent(text))
    body = list(module.body)
    if module.header and body:
        lead = [line for line in module.header if line.comment is not None]
        body[0] = body[0].with_changes(leading_lines=[*lead, *body[0].leading_lines])
    return body


def _single_assign(stmt: cst.BaseStatement) -> cst.Assign | None:
    if (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Assign)
        and len(stmt.body[0].targets) == 1
    ):
        return stmt.body[0]
    return None


def assign_name(stmt: cst.BaseStatement) -> str | None:
    """NAME for a one-target `NAME = ...` statement line, else None."""
    assign = _single_assign(stmt)
    if assign is not None and isinstance(assign.targets[0].target, cst.Name):
        return assign.targets[0].target.value
    return None


def assign_value(stmt: cst.BaseStatement) -> cst.BaseExpression | None:
    """The value of a one-target assignment statement line, else None."""
    assign = _single_assign(stmt)
    return assign.value if assign is not None else None


def self_assign(stmt: cst.BaseStatement) -> tuple[str, cst.BaseExpression] | None:
    """(NAME, EXPR) for a `self.NAME = EXPR` statement line, else None."""
    assign = _single_assign(stmt)
    if assign is None:
        return None
    target = assign.targets[0].target
    if (
        isinstance(target, cst.Attribute)
        and isinstance(target.value, cst.Name)
        and target.value.value == "self"
    ):
        return target.attr.value, assign.value
    return None


def with_value(stmt: cst.BaseStatement, value: cst.BaseExpression | str) -> cst.SimpleStatementLine:
    """`stmt` (a one-target assignment) with a new value; comments are kept."""
    assign = _single_assign(stmt)
    assert assign is not None and isinstance(stmt, cst.SimpleStatementLine)
    if isinstance(value, str):
        value = cst.parse_expression(value)
    return stmt.with_changes(body=[assign.with_changes(value=value)])


def replace_stmt(stmts: Sequence[cst.BaseStatement], index: int, text: str) -> Stmts:
    """`stmts` with statement `index` replaced by the first statement parsed from `text`
    (the replaced one's leading blank lines and comments kept)."""
    out = list(stmts)
    new = parse_stmts(text)
    out[index : index + 1] = [new[0].with_changes(leading_lines=out[index].leading_lines)]
    return out


def insert_before(
    stmts: Sequence[cst.BaseStatement], index: int, new: Sequence[cst.BaseStatement]
) -> Stmts:
    """Inserts `new` before `stmts[index]`, moving that statement's leading comments and
    blank lines onto the first inserted statement (so a section comment stays on top)."""
    out = list(stmts)
    if not new:
        return out
    anchor = out[index]
    lead = getattr(anchor, "leading_lines", ())
    first = new[0]
    if lead and hasattr(first, "leading_lines"):
        first = first.with_changes(leading_lines=lead)
        anchor = anchor.with_changes(leading_lines=())
    out[index : index + 1] = [first, *new[1:], anchor]
    return out


class _Replace(cst.CSTTransformer):
    def __init__(self, old: str, new: cst.BaseExpression) -> None:
        super().__init__()
        self.old, self.new, self.count = old, new, 0

    def on_leave(self, original_node, updated_node):
        if (
            isinstance(original_node, cst.BaseExpression)
            and squash(code(original_node)) == self.old
        ):
            self.count += 1
            return self.new
        return updated_node


def replace_subexpr(
    stmt: cst.BaseStatement, old: str, new: cst.BaseExpression | str
) -> tuple[cst.BaseStatement, int]:
    """Replaces every sub-expression whose code equals `old` (whitespace-insensitive).

    Returns (new statement, number of replacements).
    """
    if isinstance(new, str):
        new = cst.parse_expression(new)
    replacer = _Replace(squash(old), new)
    out = stmt.visit(replacer)
    assert isinstance(out, cst.BaseStatement)
    return out, replacer.count


class _Calls(cst.CSTVisitor):
    def __init__(self, func: str) -> None:
        super().__init__()
        self.func, self.found = squash(func), []

    def visit_Call(self, node: cst.Call) -> None:
        if squash(code(node.func)) == self.func:
            self.found.append(node)


def find_calls(node: cst.CSTNode, func: str) -> list[cst.Call]:
    """Every call of `func` (e.g. 'self.o3', 'jnp.max') inside `node`, outer first."""
    visitor = _Calls(func)
    node.visit(visitor)
    return visitor.found


def self_calls(stmts: Sequence[cst.BaseStatement]) -> set[str]:
    """Names X of every `self.X(...)` call in `stmts`."""
    visitor = _SelfCalls()
    for stmt in stmts:
        stmt.visit(visitor)
    return visitor.names


class _SelfCalls(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.value.value == "self"
        ):
            self.names.add(func.attr.value)


def fresh_name(base: str, used: Iterable[str]) -> str:
    """`base`, or `base_2`, `base_3`... whichever is not in `used`."""
    taken = set(used)
    if base not in taken:
        return base
    i = 2
    while f"{base}_{i}" in taken:
        i += 1
    return f"{base}_{i}"
