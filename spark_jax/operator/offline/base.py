"""Scoped libcst editing of candidate programs: the `Transform` record and its machinery.

A transform edits exactly one region of a program (OPERATOR = the `setup` body, ACTION =
the `__call__` body of the `Processor` class). `load_context` parses the whole module with
libcst, finds `Processor.setup` / `Processor.__call__` and checks that each tagged region
sits inside its method; each region body is then dedented and parsed on its own, so an edit
is a rewrite of that region's statement list. `Transform.apply` re-indents the new body,
splices it back with `regions.replace_region` and verifies `locality.check_locality`, so an
edit can never touch the other region or the scaffolding.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import random
import re
import textwrap
from typing import Callable, Sequence

import libcst as cst
from libcst import metadata

from spark_jax.operator.offline.cst_util import code, self_assign, self_calls
from spark_jax.program import locality, regions

__all__ = [
    "MAGNITUDES",
    "EditFn",
    "make_transform",
    "TransformNotApplicable",
    "Region",
    "ProgramContext",
    "Transform",
    "load_context",
]

MAGNITUDES: tuple[str, ...] = ("small", "large")
PROCESSOR_CLASS = "Processor"
_METHOD_OF = {"OPERATOR": "setup", "ACTION": "__call__"}


class TransformNotApplicable(ValueError):
    """A transform cannot edit this program.

    Attributes:
      reason: Why (names the missing pattern or the conflicting earlier edit).
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclasses.dataclass(frozen=True)
class Region:
    """One region body, dedented and parsed.

    Attributes:
      factor: 'OPERATOR' or 'ACTION'.
      indent: The indentation removed from every body line (re-added on render).
      module: The dedented body as a libcst module (its statements are the region's).
    """

    factor: str
    indent: str
    module: cst.Module

    @property
    def stmts(self) -> tuple[cst.BaseStatement, ...]:
        """The region's top-level statements."""
        return tuple(self.module.body)

    @functools.cached_property
    def text(self) -> str:
        """The dedented body text."""
        return self.module.code

    def names(self) -> frozenset[str]:
        """Every identifier used in the region (for fresh names)."""
        return frozenset(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", self.text))

    def render(self, stmts: Sequence[cst.BaseStatement]) -> str:
        """The body text (re-indented) of this region with `stmts` as its statements."""
        text = self.module.with_changes(body=list(stmts)).code
        return textwrap.indent(text, self.indent, lambda line: bool(line.strip()))


def _split_region(factor: str, body: str) -> Region:
    dedented = textwrap.dedent(body)
    first = next((line for line in body.split("\n") if line.strip()), "")
    first_dedented = next((line for line in dedented.split("\n") if line.strip()), "")
    indent = first[: len(first) - len(first_dedented)]
    try:
        module = cst.parse_module(dedented)
    except cst.ParserSyntaxError as e:
        raise TransformNotApplicable(f"{factor} body does not parse: {e.message}") from None
    region = Region(factor, indent, module)
    if regions.normalize(region.render(module.body)) != regions.normalize(body):
        raise TransformNotApplicable(f"{factor} body is not uniformly indented")
    return region


@dataclasses.dataclass(frozen=True)
class ProgramContext:
    """What transforms read about a program.

    Attributes:
      source: The normalized source.
      masks_non_edges: The module's `MASKS_NON_EDGES` claim.
      module_names: Module-level names (imports, helpers, constants, classes).
      operator: The OPERATOR region (body of `Processor.setup`).
      action: The ACTION region (body of `Processor.__call__`).
    """

    source: str
    masks_non_edges: bool
    module_names: frozenset[str]
    operator: Region
    action: Region

    def region(self, factor: str) -> Region:
        """The region of `factor`."""
        if factor == "OPERATOR":
            return self.operator
        if factor == "ACTION":
            return self.action
        raise ValueError(f"Unexpected factor {factor!r}; expected one of {regions.FACTORS}")

    def submodules(self) -> dict[str, cst.BaseExpression]:
        """`self.NAME = EXPR` assignments at the top of the OPERATOR region."""
        found = {}
        for stmt in self.operator.stmts:
            hit = self_assign(stmt)
            if hit is not None:
                found[hit[0]] = hit[1]
        return found


def _module_names(module: cst.Module) -> tuple[frozenset[str], bool]:
    names: set[str] = set()
    masks = False
    for stmt in module.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            names.add(stmt.name.value)
            continue
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(
                small.names, cst.ImportStar
            ):
                for alias in small.names:
                    target = alias.asname.name if alias.asname else alias.name
                    names.add(code(target).split(".")[0])
            elif isinstance(small, cst.Assign):
                for target in small.targets:
                    if isinstance(target.target, cst.Name):
                        names.add(target.target.value)
                        if target.target.value == "MASKS_NON_EDGES":
                            masks = code(small.value).strip() == "True"
    return frozenset(names), masks


def _check_methods(module: cst.Module, program: regions.ProgramRegions) -> None:
    """Checks each region starts inside its `Processor` method."""
    wrapper = metadata.MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(metadata.PositionProvider)
    cls = next(
        (s for s in module.body if isinstance(s, cst.ClassDef) and s.name.value == PROCESSOR_CLASS),
        None,
    )
    if cls is None:
        raise TransformNotApplicable(f"no class {PROCESSOR_CLASS!r} in the program")
    methods = {s.name.value: s for s in cls.body.body if isinstance(s, cst.FunctionDef)}
    for factor, method in _METHOD_OF.items():
        func = methods.get(method)
        if func is None:
            raise TransformNotApplicable(f"{PROCESSOR_CLASS} has no {method}()")
        pos = positions[func]
        tag_line = program.span(factor).begin + 1
        if not pos.start.line < tag_line <= pos.end.line + 1:
            raise TransformNotApplicable(
                f"{factor} region is not inside {PROCESSOR_CLASS}.{method}()"
            )


@functools.lru_cache(maxsize=512)
def load_context(source: str) -> ProgramContext:
    """Parses a program for transforms; raises TransformNotApplicable when it can't."""
    text = regions.normalize(source)
    try:
        program = regions.parse_regions(text)
    except regions.TemplateError as e:
        raise TransformNotApplicable(f"bad region tags: {e.reason}") from None
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as e:
        raise TransformNotApplicable(f"program does not parse: {e.message}") from None
    _check_methods(module, program)
    names, masks = _module_names(module)
    return ProgramContext(
        source=text,
        masks_non_edges=masks,
        module_names=names,
        operator=_split_region("OPERATOR", program.body("OPERATOR")),
        action=_split_region("ACTION", program.body("ACTION")),
    )


# The record.

EditFn = Callable[[ProgramContext, random.Random], Sequence[cst.BaseStatement]]


@dataclasses.dataclass(frozen=True)
class Transform:
    """One scoped code transform of the offline editor's catalogue.

    Attributes:
      name: Unique catalogue key (`op_...` / `act_...`).
      factor: The region it edits: 'OPERATOR' or 'ACTION'.
      description: The architectural rationale, one sentence.
      magnitude: 'small' (a local tweak) or 'large' (a structural change).
      edit: (context, rng) -> the new statements of the `factor` region; raises
        TransformNotApplicable when the pattern it needs is missing.
      tags: Coarse kinds ('width', 'depth', 'norm', 'gate', 'aggregation', 'masking',
        'residual', 'activation', 'triplet', 'interaction', 'edges'); the rule director
        prefers or avoids kinds after failures.
      masking_safe: Whether the edit keeps features on adjacency-defined non-edges out of
        the node output; if False the transform never applies to a program that claims
        `MASKS_NON_EDGES = True`.
    """

    name: str
    factor: str
    description: str
    magnitude: str
    edit: EditFn = dataclasses.field(compare=False, repr=False)
    tags: frozenset[str] = frozenset()
    masking_safe: bool = True

    def __post_init__(self) -> None:
        if self.factor not in regions.FACTORS:
            raise ValueError(f"Unexpected factor {self.factor!r} for transform {self.name}")
        if self.magnitude not in MAGNITUDES:
            raise ValueError(f"Unexpected magnitude {self.magnitude!r} for {self.name}")
        if not callable(self.edit):
            raise ValueError(f"transform {self.name} has no edit function")

    def apply(self, source: str, rng: random.Random) -> str:
        """The edited program (normalized); deterministic given `rng`'s state.

        Raises:
          TransformNotApplicable: the program lacks the pattern this transform edits, it
            was already applied, or (if not `masking_safe`) the program claims masking.
        """
        ctx = load_context(source)
        if ctx.masks_non_edges and not self.masking_safe:
            raise TransformNotApplicable(
                f"{self.name} would let non-edge features reach the node output of a "
                "program that claims MASKS_NON_EDGES"
            )
        region = ctx.region(self.factor)
        stmts = list(self.edit(ctx, rng))
        if self.factor == "ACTION":  # ACTION may only call modules that setup defines.
            new_calls = self_calls(stmts) - self_calls(region.stmts)
            unknown = new_calls - set(ctx.submodules())
            if unknown:
                raise TransformNotApplicable(
                    f"{self.name} would call undefined submodule(s) {sorted(unknown)}"
                )
        body = region.render(stmts)
        child = regions.replace_region(ctx.source, self.factor, body)
        try:
            ast.parse(child)
        except SyntaxError as e:  # A catalogue bug; never hand out a broken program.
            raise TransformNotApplicable(f"{self.name} produced a syntax error: {e}") from None
        verdict = locality.check_locality(ctx.source, child, self.factor)
        if not verdict.ok:
            raise TransformNotApplicable(f"{self.name}: {verdict.reason}")
        return child

    def applies(self, source: str) -> bool:
        """Whether `apply` succeeds on `source` (a dry run with a fixed rng; cached)."""
        return _applies(self, self.edit, regions.normalize(source))


def make_transform(
    name: str, factor: str, magnitude: str, tags: set[str], description: str, edit: EditFn
) -> Transform:
    """A catalogue `Transform` from plain arguments (tags as a set)."""
    return Transform(
        name=name,
        factor=factor,
        description=description,
        magnitude=magnitude,
        edit=edit,
        tags=frozenset(tags),
    )


@functools.lru_cache(maxsize=8192)
def _applies(transform: Transform, edit: EditFn, source: str) -> bool:
    del edit  # Part of the cache key only: records compare without their edit function.
    try:
        transform.apply(source, random.Random(0))
    except TransformNotApplicable:
        return False
    return True
