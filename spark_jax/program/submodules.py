"""Submodules a program's `setup` defines and nothing reads yet: the first half of a
two-step edit.

SPARK edits one region at a time, so a new submodule takes two steps: an OPERATOR edit adds
a named submodule to `setup` that nothing calls yet (the ACTION region is frozen in that
edit), and a later ACTION edit wires it into the forward computation. Between the two, the
program trains as its parent does (Flax creates a submodule's parameters only when it is
called). `unused_submodules` finds such names so that the ACTION prompt can list them.

Read statically with `ast`: an attribute counts as defined when the OPERATOR region assigns
`self.NAME = <not a constant>`, and as used when any code of the program reads `self.NAME`
(an attribute read anywhere: the ACTION region, another submodule's definition, a helper).
Pure Python; no candidate code is imported here.
"""

from __future__ import annotations

import ast

from spark_jax.program.regions import TemplateError, parse_regions

__all__ = ["defined_submodules", "unused_submodules"]


def _self_targets(node: ast.stmt) -> list[ast.Attribute]:
    """The `self.NAME` targets an assignment statement writes (tuples unpacked)."""
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        targets = [node.target]
    else:
        return []
    out: list[ast.Attribute] = []
    while targets:
        t = targets.pop(0)
        if isinstance(t, (ast.Tuple, ast.List)):
            targets.extend(t.elts)
        elif isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name):
            if t.value.id == "self":
                out.append(t)
    return out


def _parsed(source: str) -> tuple[ast.Module, range] | None:
    """The module's AST and the 1-based line range of the OPERATOR body; None when the
    program does not parse or has no valid tags."""
    try:
        span = parse_regions(source).span("OPERATOR")
        tree = ast.parse(source)
    except (TemplateError, SyntaxError, ValueError):
        return None
    return tree, range(span.begin + 2, span.end + 1)  # the lines strictly between the tags


def defined_submodules(source: str) -> tuple[str, ...]:
    """Names the OPERATOR region assigns as `self.NAME = ...` (constants left out), in order
    of first definition; () when the program does not parse."""
    parsed = _parsed(source)
    if parsed is None:
        return ()
    tree, lines = parsed
    found: list[tuple[int, int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.lineno not in lines:
            continue
        if not isinstance(node.value, ast.Constant):
            found += [(t.lineno, t.col_offset, t.attr) for t in _self_targets(node)]
    names: list[str] = []
    for *_, name in sorted(found):
        if name not in names:
            names.append(name)
    return tuple(names)


def unused_submodules(source: str) -> tuple[str, ...]:
    """The defined submodules (`defined_submodules`) that no code of the program reads
    (`self.NAME` in a load context, or `getattr(self, 'NAME')`), in order of definition."""
    defined = defined_submodules(source)
    if not defined:
        return ()
    tree = ast.parse(source)
    read: set[str] = set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Load)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
        ):
            read.add(node.attr)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
        ):
            read.add(str(node.args[1].value))
    return tuple(name for name in defined if name not in read)
