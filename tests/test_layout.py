"""The package's floor plan, checked on the source: one subpackage per stage, lower floors
never import higher ones (not even lazily inside a function), no private name crosses a
subpackage boundary, and no module grows past ~400 non-blank lines. The task families' plug-in
folders (`spark_jax/plugins/<name>/`) stand above evaluation: the registry
(`spark_jax/families`, near the bottom) imports them by name on first use. scripts/ holds entry
points only: the same size and function-length rules, no script reaching into another, no
private name of spark_jax."""

from __future__ import annotations

import ast
import pathlib
import re

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "spark_jax"
# Bottom to top: a subpackage may import itself and the floors before it.
FLOORS = (
    "util",
    "stats",
    "families",
    "config",
    "program",
    "workers",
    "llm",
    "feasibility",
    "operator",
    "evaluation",
    "jobs",
    "plugins",
    "search",
    "report",
    "benchmark",
    "compare",
    "serve",
    "perf",
    "results",
    "cli",
)
MAX_LINES = 400
# Seed programs (a plug-in's seeds/ folder) are candidate programs, not the package's modules.
MODULES = sorted(
    p for p in PACKAGE.rglob("*.py") if "assets" not in p.parts and "seeds" not in p.parts
)


def _floor(module: pathlib.Path) -> str | None:
    rel = module.relative_to(PACKAGE).parts
    return rel[0] if len(rel) > 1 else None  # None: spark_jax/__init__.py (lazy public API)


def _imports(module: pathlib.Path):
    """(line, imported module, imported names) of every import in the file, nested too."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, ()
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module, tuple(a.name for a in node.names)


def _target_floor(name: str, names: tuple[str, ...]) -> list[tuple[str, str]]:
    """[(floor, what)] of a spark_jax import (`from spark_jax import x` names the floor x)."""
    parts = name.split(".")
    if parts[0] != "spark_jax":
        return []
    if len(parts) > 1:
        return [(parts[1], name)]
    return [(n, f"spark_jax.{n}") for n in names if n in FLOORS]


def test_every_subpackage_is_a_known_floor():
    found = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert found == set(FLOORS), found ^ set(FLOORS)
    loose = sorted(p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py")
    assert loose == [], f"modules outside a stage subpackage: {loose}"


@pytest.mark.parametrize("module", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_lower_floors_never_import_higher_ones(module):
    floor = _floor(module)
    if floor is None:
        return
    allowed = set(FLOORS[: FLOORS.index(floor) + 1])
    bad = [
        f"line {line}: {what}"
        for line, name, names in _imports(module)
        for target, what in _target_floor(name, names)
        if target not in allowed
    ]
    assert not bad, f"{floor} may import only {sorted(allowed)}: {bad}"


@pytest.mark.parametrize("module", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_private_name_crosses_a_subpackage(module):
    floor = _floor(module)
    bad = []
    for line, name, names in _imports(module):
        targets = _target_floor(name, names)
        if not targets or targets[0][0] == floor:
            continue
        private = [n for n in names if n.startswith("_")]
        private += [p for p in name.split(".") if p.startswith("_")]
        if private:
            bad.append(f"line {line}: {name} {private}")
    assert not bad, bad


@pytest.mark.parametrize("module", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_modules_stay_small(module):
    text = module.read_text(encoding="utf-8")
    lines = sum(1 for line in text.splitlines() if line.strip())  # the formatter's blank lines
    assert lines <= MAX_LINES, f"{lines} non-blank lines: split it by responsibility"


def test_docstrings_name_no_outside_document():
    bad = [
        str(p.relative_to(PACKAGE))
        for p in MODULES
        if any(word in p.read_text(encoding="utf-8") for word in ("DESIGN", "issue "))
    ]
    assert not bad, bad


def test_public_api_is_lazy_and_complete():
    import subprocess
    import sys

    code = (
        "import sys, spark_jax; heavy = [m for m in ('jax', 'httpx', 'clrs') "
        "if m in sys.modules]; assert not heavy, heavy; "
        "missing = [n for n in spark_jax.__all__ if not callable(getattr(spark_jax, n))]; "
        "assert not missing, missing; print(sorted(spark_jax.__all__))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=PACKAGE.parent,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "run_search" in out.stdout and "check_program" in out.stdout


# -- the import graph between files (lazy imports included) -------------------------------------
MAX_FLOORS = 8
SCRIPTS = PACKAGE.parent / "scripts"


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _file_graph() -> dict[str, set[str]]:
    """module -> the spark_jax/scripts modules it imports (`from a import b` names a.b when
    b is a module, else a)."""
    files = MODULES + sorted(SCRIPTS.rglob("*.py"))
    known = {_module_name(p): p for p in files}

    def resolve(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for name, path in known.items():
        targets = set()
        for _, imported, names in _imports(path):
            candidates = [f"{imported}.{n}" for n in names if f"{imported}.{n}" in known]
            targets.update(resolve(c) for c in candidates or [imported])
        graph[name] = {t for t in targets if t and t != name}
    return graph


def _group(module: str) -> str:
    """The floor a module stands on: its spark_jax subpackage, or 'scripts'."""
    parts = module.split(".")
    return parts[1] if parts[0] == "spark_jax" and len(parts) > 1 else parts[0]


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan, iterative)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def _floors(graph: dict[str, set[str]]) -> dict[str, int]:
    """Each group's floor: 1 + the highest floor among the groups it imports."""
    edges: dict[str, set[str]] = {}
    for module, targets in graph.items():
        edges.setdefault(_group(module), set()).update(
            _group(t) for t in targets if _group(t) != _group(module)
        )
    floors: dict[str, int] = {}

    def floor(group: str, seen: tuple[str, ...] = ()) -> int:
        assert group not in seen, f"subpackages import each other: {seen + (group,)}"
        if group not in floors:
            below = [floor(t, seen + (group,)) for t in edges.get(group, ())]
            floors[group] = 1 + max(below, default=0)
        return floors[group]

    for group in edges:
        floor(group)
    return floors


def test_no_file_level_import_circle():
    assert _circles(_file_graph()) == []


def test_the_import_graph_has_at_most_eight_floors():
    floors = _floors(_file_graph())
    assert max(floors.values()) <= MAX_FLOORS, sorted(floors.items(), key=lambda kv: kv[1])


def test_the_graph_checks_can_fail():
    graph = {"spark_jax.a.x": {"spark_jax.b.y"}, "spark_jax.b.y": {"spark_jax.a.x"}}
    assert _circles(graph) == [["spark_jax.a.x", "spark_jax.b.y"]]
    chain = {f"spark_jax.p{i}.m": {f"spark_jax.p{i - 1}.m"} for i in range(1, 10)}
    chain["spark_jax.p0.m"] = set()
    assert max(_floors(chain).values()) == 10


MAX_FUNCTION_LINES = 60  # Issue 26: no function over ~60 lines (docstring included).


def _long_functions() -> set[str]:
    found = set()
    for module in MODULES:
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES:
                    found.add(f"{module.relative_to(PACKAGE).as_posix()}:{node.name}")
    return found


def test_no_function_over_sixty_lines():
    found = _long_functions()
    assert not found, f"split these (or keep them under 60 lines): {sorted(found)}"


def test_no_branch_on_a_family_name_outside_the_family_plugins():
    """Behaviour that depends on the task family asks the family (`spark_jax.families`): no
    module outside the registry (spark_jax/families/) and the plug-ins (spark_jax/plugins/)
    compares a family with a name."""
    branch = re.compile(r"family[\w\"'\]\)]*\s*[=!]=\s*[\"']|[\"']\s*[=!]=\s*\w*family\b")
    bad = [
        f"{module.relative_to(PACKAGE).as_posix()}:{n}: {line.strip()}"
        for module in MODULES
        if module.relative_to(PACKAGE).parts[0] not in ("families", "plugins")
        for n, line in enumerate(module.read_text(encoding="utf-8").splitlines(), 1)
        if branch.search(line)
    ]
    assert not bad, bad
    assert branch.search('if cfg.family == "clrs":') and branch.search("x['family'] != 'a'")


def test_markdown_tables_are_built_by_the_reporting_kernel_only():
    """Every report's tables come from `spark_jax/util/markdown.py` (header, separator and rows
    checked against each other there): no other module writes a table's separator row."""
    separator = re.compile(r"[\"']\|\s*-{3}|-{3}:?\|")
    bad = [
        f"{module.relative_to(PACKAGE).as_posix()}:{n}: {line.strip()}"
        for module in MODULES
        if module.relative_to(PACKAGE).as_posix() != "util/markdown.py"
        for n, line in enumerate(module.read_text(encoding="utf-8").splitlines(), 1)
        if separator.search(line)
    ]
    assert not bad, bad
    assert (
        separator.search('"|---|---|"')
        and separator.search('"| --- |')
        and separator.search('rows = [head, "|" + "---|" * 3]')
    )


# -- scripts/: entry points that turn arguments into one library call ---------------------------
# Stand-in packages put on PYTHONPATH on a device machine (not scripts; see their docstring).
STAND_INS = SCRIPTS / "device" / "tf_stub"
SCRIPT_FILES = sorted(p for p in SCRIPTS.rglob("*.py") if STAND_INS not in p.parents)


def _script_id(path: pathlib.Path) -> str:
    return path.relative_to(SCRIPTS).as_posix()


def _script_names() -> set[str]:
    """Every name under which one script could import another: each file's and folder's."""
    names = {p.stem for p in SCRIPT_FILES}
    return names | {p.name for p in SCRIPTS.rglob("*") if p.is_dir()}


def _script_breaches(path: pathlib.Path, names: set[str]) -> list[str]:
    """How `path` reaches into another script: an import of one, `sys.path` or a file loader
    (`importlib.util.spec_from_file_location`, `runpy`), or a private name of spark_jax."""
    bad = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for line, name, imported in _imports(path):
        if name.split(".")[0] in names or name.split(".")[0] == "runpy":
            bad.append(f"line {line}: imports {name}")
        private = [n for n in (*name.split("."), *imported) if n.startswith("_")]
        if name.split(".")[0] == "spark_jax" and [p for p in private if p != "__future__"]:
            bad.append(f"line {line}: private {name} {private}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("path", "spec_from_file_location"):
            if node.attr == "spec_from_file_location" or (
                isinstance(node.value, ast.Name) and node.value.id == "sys"
            ):
                bad.append(f"line {node.lineno}: {ast.unparse(node)}")
    return bad


@pytest.mark.parametrize("script", SCRIPT_FILES, ids=_script_id)
def test_scripts_stay_small(script):
    text = script.read_text(encoding="utf-8")
    lines = sum(1 for line in text.splitlines() if line.strip())
    assert lines <= MAX_LINES, f"{lines} non-blank lines: move the logic into the package"
    long = [
        f"{node.name}: {node.end_lineno - node.lineno + 1} lines"
        for node in ast.walk(ast.parse(text))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert not long, long


@pytest.mark.parametrize("script", SCRIPT_FILES, ids=_script_id)
def test_no_script_imports_another_or_a_private_name(script):
    assert not _script_breaches(script, _script_names())


def test_the_script_rules_can_fail(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import sys\nsys.path.insert(0, 'x')\nfrom smoke_identity import figures\n"
        "import importlib.util\nimportlib.util.spec_from_file_location('m', 'm.py')\n"
        "from spark_jax.perf.candidate import _official_candidate\n"
        "from spark_jax import _lazy\nimport runpy\n"
    )
    found = _script_breaches(bad, {"smoke_identity"})
    assert len(found) == 6, found
    good = tmp_path / "good.py"
    good.write_text("from __future__ import annotations\nimport sys\nsys.exit(0)\n")
    assert _script_breaches(good, {"good"}) == []


# -- docs/layout.md's floor plan is the code's ---------------------------------------------------
LAYOUT_DOC = PACKAGE.parent / "docs" / "layout.md"
_DOC_ROW = re.compile(r"^\| (\d+) \| `([\w/]+)`")


def _documented_floors(text: str) -> dict[str, int]:
    """subpackage (or 'scripts') -> the floor docs/layout.md's table gives it."""
    rows = (_DOC_ROW.match(line) for line in text.splitlines())
    return {m.group(2).rstrip("/"): int(m.group(1)) for m in rows if m}


def test_the_layout_doc_names_every_subpackage_on_its_floor():
    documented = _documented_floors(LAYOUT_DOC.read_text(encoding="utf-8"))
    measured = {g: f for g, f in _floors(_file_graph()).items() if g != "spark_jax"}
    assert set(documented) == set(FLOORS) | {"scripts"}, set(documented) ^ (
        set(FLOORS) | {"scripts"}
    )
    wrong = {
        g: (documented[g], measured.get(g, 1))
        for g in documented
        if documented[g] != measured.get(g, 1)
    }
    assert not wrong, f"docs/layout.md floor vs the code's (documented, measured): {wrong}"


def test_the_layout_doc_check_can_fail():
    text = "| 1 | `util` | x | y |\n| 3 | `scripts/` (outside) | x | y |\n| floor | sub |"
    assert _documented_floors(text) == {"util": 1, "scripts": 3}
