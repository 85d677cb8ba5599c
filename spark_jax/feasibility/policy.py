"""Static policy check on candidate source, run before any candidate code is imported.

This is a cheap first line of defense, not a sandbox: candidates still run in a separate
process with a timeout and a memory cap. The check parses the source with `ast` and
refuses, with the offending construct and line in the reason:

* imports outside an allowlist of top-level packages, star and relative imports, private
  submodules, and a few allowed-package members that do I/O or escape to the host;
* calls to / references of dangerous builtins (`open`, `eval`, `exec`, `__import__`, ...),
  and `getattr`-family calls whose attribute name is not a plain constant;
* dunder attributes and names outside a small allowlist (`__class__`, `__globals__`, ...),
  also inside string constants (e.g. `'{0.__class__}'.format`);
* attributes that do file I/O (`np.save`, `x.tofile`), host callbacks (`jax.pure_callback`),
  frame introspection (`gi_frame`, `f_globals`) or reach a module (`typing.sys`).
"""

from __future__ import annotations

import ast
import dataclasses
import re
from typing import Iterable

__all__ = ["DEFAULT_ALLOWED", "SafetyResult", "check_source_safety"]

DEFAULT_ALLOWED: frozenset[str] = frozenset(
    {
        "jax",
        "flax",
        "numpy",
        "math",
        "functools",
        "typing",
        "chex",
        "optax",
        "dataclasses",
        "einops",
        "itertools",
        "operator",
        "collections",
        "__future__",
        "abc",
        "enum",
        "numbers",
    }
)

# Builtins refused wherever they are referenced (called, aliased, passed, rebound).
_FORBIDDEN_BUILTINS = frozenset(
    {
        "open",
        "eval",
        "exec",
        "compile",
        "__import__",
        "globals",
        "locals",
        "vars",
        "breakpoint",
        "input",
        "exit",
        "quit",
        "memoryview",
        "help",
    }
)
# Builtins allowed only as a direct call with a constant, non-dunder attribute name.
_ATTR_BUILTINS = frozenset({"getattr", "setattr", "delattr", "hasattr"})

_ALLOWED_DUNDER_ATTRS = frozenset(
    {"__init__", "__call__", "__name__", "__qualname__", "__doc__", "__post_init__"}
)
_ALLOWED_DUNDER_NAMES = frozenset({"__name__", "__doc__", "__all__"})
_ALLOWED_DUNDER_STRINGS = _ALLOWED_DUNDER_ATTRS | _ALLOWED_DUNDER_NAMES | {"__main__"}
_DUNDER_RE = re.compile(r"__[A-Za-z0-9_]+?__")

# Attribute names refused on any receiver, by category.
_ATTR_CATEGORIES: dict[str, frozenset[str]] = {
    "host callback": frozenset(
        {
            "pure_callback",
            "io_callback",
            "host_callback",
            "callback",
            "ffi",
            "profiler",
            "distributed",
        }
    ),
    "file IO": frozenset(
        {
            "load",
            "loads",
            "save",
            "savez",
            "savez_compressed",
            "savetxt",
            "loadtxt",
            "genfromtxt",
            "fromfile",
            "fromregex",
            "tofile",
            "memmap",
            "dump",
            "dumps",
            "DataSource",
            "lib",
            "ctypeslib",
            "f2py",
            "distutils",
            "testing",
            "checkpoints",
        }
    ),
    "frame introspection": frozenset(
        {
            "gi_frame",
            "gi_code",
            "cr_frame",
            "cr_code",
            "ag_frame",
            "ag_code",
            "f_globals",
            "f_locals",
            "f_builtins",
            "f_back",
            "f_code",
            "tb_frame",
            "tb_next",
            "co_code",
            "func_globals",
        }
    ),
    "module escape": frozenset(
        {
            "os",
            "sys",
            "subprocess",
            "builtins",
            "importlib",
            "shutil",
            "pathlib",
            "socket",
            "ctypes",
            "pickle",
            "marshal",
            "shelve",
            "tempfile",
            "signal",
            "io",
            "threading",
            "multiprocessing",
            "urllib",
            "http",
            "requests",
            "httpx",
            "inspect",
            "gc",
            "code",
            "runpy",
            "types",
            "system",
            "popen",
            "_sys",
            "_os",
            "_src",
            "_imp",
            "_io",
            "_thread",
            "_bootstrap",
            "attrgetter",
            "methodcaller",
            "get_type_hints",
            "ForwardRef",
        }
    ),
}
# Dotted paths (after resolving import aliases) refused with everything below them.
_FORBIDDEN_PATHS: tuple[str, ...] = (
    "jax.config",
    "jax.extend",
    "jax.experimental.compilation_cache",
    "jax.experimental.serialize_executable",
    "jax.experimental.jax2tf",
    "flax.io",
    "flax.metrics",
    "flax.training.checkpoints",
)


@dataclasses.dataclass(frozen=True)
class SafetyResult:
    """Outcome of the static policy check.

    Attributes:
      ok: True iff no violation was found and the source parses.
      reason: '' when ok; else the first violation, naming the construct and line
        (e.g. "forbidden import 'os' at line 3"), or 'syntax error: ...'.
      lineno: 1-based line of that violation (None when ok or unknown).
      syntax_error: True iff the source does not parse (a syntax failure, not a safety
        one).
      violations: All violations found, in line order.
    """

    ok: bool
    reason: str = ""
    lineno: int | None = None
    syntax_error: bool = False
    violations: tuple[str, ...] = ()


def _attr_category(name: str) -> str | None:
    for category, names in _ATTR_CATEGORIES.items():
        if name in names:
            return category
    return None


def _member_problem(path: str) -> str | None:
    """Why the last member of a dotted path is refused, or None."""
    last = path.rsplit(".", 1)[-1]
    if "." in path and last.startswith("_") and not last.startswith("__"):
        return "private member"
    category = _attr_category(last)
    if category is not None:
        return category
    return "forbidden member" if path in _FORBIDDEN_PATHS else None


def _path_problem(path: str) -> str | None:
    """Why a dotted module path (or any of its prefixes) is refused, or None."""
    parts = path.split(".")
    for stop in range(2, len(parts) + 1):
        problem = _member_problem(".".join(parts[:stop]))
        if problem is not None:
            return problem
    return None


class _Checker(ast.NodeVisitor):
    """Collects (lineno, reason) violations; tracks import aliases for dotted paths."""

    def __init__(self, allowed_modules: Iterable[str]) -> None:
        self.allowed = frozenset(allowed_modules)
        self.aliases: dict[str, str] = {}
        self.violations: list[tuple[int, str]] = []

    def _refuse(self, node: ast.AST, what: str) -> None:
        line = getattr(node, "lineno", 0)
        self.violations.append((line, f"{what} at line {line}"))

    # Imports.
    def _check_module(self, node: ast.AST, path: str) -> bool:
        top = path.split(".")[0]
        if top not in self.allowed:
            self._refuse(node, f"forbidden import {top!r}")
            return False
        problem = _path_problem(path)
        if problem is not None:
            self._refuse(node, f"forbidden import {path!r} ({problem})")
            return False
        return True

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if self._check_module(node, alias.name):
                if alias.asname:
                    self.aliases[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    self.aliases[top] = top

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            self._refuse(node, f"forbidden relative import {'.' * node.level}{node.module or ''}")
            return
        module = node.module or ""
        if not self._check_module(node, module):
            return
        for alias in node.names:
            if alias.name == "*":
                self._refuse(node, f"forbidden star import 'from {module} import *'")
                continue
            if module == "__future__":
                continue
            if self._check_module(node, f"{module}.{alias.name}"):
                self._check_dunder(node, alias.name, "import")
                self.aliases[alias.asname or alias.name] = f"{module}.{alias.name}"

    # Names and attributes.
    def _check_dunder(self, node: ast.AST, name: str, kind: str) -> None:
        allowed = _ALLOWED_DUNDER_ATTRS if kind != "name" else _ALLOWED_DUNDER_NAMES
        if _DUNDER_RE.fullmatch(name) and name not in allowed:
            self._refuse(node, f"forbidden dunder {kind} {name!r}")

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in _FORBIDDEN_BUILTINS:
            self._refuse(node, f"forbidden builtin {node.id!r}")
        elif node.id in _ATTR_BUILTINS:
            # Direct calls are checked (and this Name skipped) in visit_Call.
            self._refuse(
                node,
                f"forbidden reference to {node.id!r} (call it directly "
                "with a constant attribute name)",
            )
        else:
            self._check_dunder(node, node.id, "name")

    def _dotted(self, node: ast.Attribute) -> str | None:
        parts = [node.attr]
        base: ast.expr = node.value
        while isinstance(base, ast.Attribute):
            parts.append(base.attr)
            base = base.value
        if isinstance(base, ast.Name) and base.id in self.aliases:
            return ".".join([self.aliases[base.id]] + parts[::-1])
        return None

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.generic_visit(node)  # Inner attributes first: report a chain at its root.
        self._check_dunder(node, node.attr, "attribute")
        path = self._dotted(node)
        problem = _member_problem(path) if path else _attr_category(node.attr)
        if problem is not None:
            self._refuse(node, f"forbidden attribute {path or node.attr!r} ({problem})")

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Name) and func.id in _ATTR_BUILTINS:
            name_arg = node.args[1] if len(node.args) > 1 else None
            if not (isinstance(name_arg, ast.Constant) and isinstance(name_arg.value, str)):
                self._refuse(node, f"forbidden {func.id} with non-constant attribute name")
            else:
                attr = name_arg.value
                self._check_dunder(node, attr, f"{func.id}")
                category = _attr_category(attr)
                if category is not None:
                    self._refuse(node, f"forbidden {func.id} of {attr!r} ({category})")
            for child in [*node.args, *node.keywords]:
                self.visit(child)
            return
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str):
            for match in _DUNDER_RE.finditer(node.value):
                if match.group(0) not in _ALLOWED_DUNDER_STRINGS:
                    self._refuse(node, f"forbidden dunder string {match.group(0)!r}")
                    break

    # Bindings of forbidden builtins (e.g. `def f(open=...)`) are refused too.
    def visit_arg(self, node: ast.arg) -> None:
        if node.arg in _FORBIDDEN_BUILTINS | _ATTR_BUILTINS:
            self._refuse(node, f"forbidden builtin {node.arg!r} rebound as argument")
        self.generic_visit(node)

    def _check_def(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        if node.name in _FORBIDDEN_BUILTINS | _ATTR_BUILTINS:
            self._refuse(node, f"forbidden builtin {node.name!r} redefined")
        self.generic_visit(node)

    visit_FunctionDef = _check_def
    visit_AsyncFunctionDef = _check_def
    visit_ClassDef = _check_def


def check_source_safety(
    source: str, allowed_modules: Iterable[str] = DEFAULT_ALLOWED
) -> SafetyResult:
    """Statically checks candidate `source` against the policy; imports nothing.

    Args:
      source: The candidate program text.
      allowed_modules: Top-level package names that may be imported.

    Returns:
      A SafetyResult; `syntax_error=True` when the source does not parse.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        return SafetyResult(
            False, f"syntax error: {e.msg} at line {e.lineno}", e.lineno, syntax_error=True
        )
    except ValueError as e:  # e.g. source with null bytes.
        return SafetyResult(False, f"syntax error: {e}", None, syntax_error=True)
    checker = _Checker(allowed_modules)
    checker.visit(tree)
    if not checker.violations:
        return SafetyResult(True)
    found = sorted(checker.violations, key=lambda v: v[0])
    lineno, reason = found[0]
    return SafetyResult(False, reason, lineno, violations=tuple(r for _, r in found))
