"""Region diffs: a child program against its parent, each change mapped onto OPERATOR /
ACTION / SCAFFOLD; the `locality` feasibility stage and the entanglement metric.

Diffs are on normalized lines (`regions.normalize`) and anchored on the tag lines, so a
change is attributed to the region it lies in. Parse each program once with
`regions.parse_regions` and call `diff_parsed`, `locality_of` and `entanglement_of` on the
result; `diff_regions`, `check_locality` and `classify_entanglement` parse for you.
"""

from __future__ import annotations

import dataclasses
import difflib
from typing import Literal, Mapping

from spark_jax.program.regions import FACTORS, REGION_NAMES, SCAFFOLD, ProgramRegions, parse_regions

__all__ = [
    "RegionDiff",
    "LocalityResult",
    "Entanglement",
    "diff_regions",
    "diff_parsed",
    "check_locality",
    "locality_of",
    "classify_entanglement",
    "entanglement_of",
]

EntanglementKind = Literal["none", "operator", "action", "entangled", "scaffold"]


@dataclasses.dataclass(frozen=True)
class RegionDiff:
    """A parent -> child line diff mapped onto regions.

    Attributes:
      changed: Region names (among 'OPERATOR', 'ACTION', 'SCAFFOLD') with any change.
      parent_lines: Region name -> sorted 1-based parent lines replaced or removed.
      child_lines: Region name -> sorted 1-based child lines replaced or inserted.
      unified: Unified diff text ('' when there is no change).
    """

    changed: frozenset[str]
    parent_lines: Mapping[str, tuple[int, ...]] = dataclasses.field(hash=False)
    child_lines: Mapping[str, tuple[int, ...]] = dataclasses.field(hash=False)
    unified: str = ""

    @property
    def empty(self) -> bool:
        """True when the normalized programs are identical."""
        return not self.changed


def _segments(program: ProgramRegions) -> list[tuple[str, int, int]]:
    """Splits a program into (region, start, stop) line ranges anchored on the tag lines."""
    segments: list[tuple[str, int, int]] = []
    cursor = 0
    for span in program.spans:
        segments.append((SCAFFOLD, cursor, span.begin + 1))
        segments.append((span.factor, span.begin + 1, span.end))
        cursor = span.end
    segments.append((SCAFFOLD, cursor, len(program.lines)))
    return segments


def _opcodes(
    parent: ProgramRegions, child: ProgramRegions
) -> list[tuple[str, str, int, int, int, int]]:
    """(region, tag, i1, i2, j1, j2) opcodes over whole files, matched per segment.

    Segments are delimited by the tag lines, which both programs have exactly once, so
    matching never pairs a line of one region with a line of another: an insertion
    between a BEGIN and END tag is in that region, one just outside a tag is scaffolding,
    and a moved or changed tag line shows up as a scaffolding change.
    """
    ops = []
    for (region, p0, p1), (_, c0, c1) in zip(_segments(parent), _segments(child)):
        matcher = difflib.SequenceMatcher(
            None, parent.lines[p0:p1], child.lines[c0:c1], autojunk=False
        )
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            ops.append((region, tag, p0 + i1, p0 + i2, c0 + j1, c0 + j2))
    return ops


def _range(start: int, stop: int) -> str:
    """A unified-diff range (1-based start, length), as difflib formats it."""
    length = stop - start
    first = start + 1 if length else start
    return str(first) if length == 1 else f"{first},{length}"


def _unified(
    parent: ProgramRegions,
    child: ProgramRegions,
    ops: list[tuple[str, str, int, int, int, int]],
    context: int = 3,
) -> str:
    plain: list[tuple[str, int, int, int, int]] = []
    for _, tag, i1, i2, j1, j2 in ops:  # Merge equal runs split at segment borders.
        if plain and tag == "equal" and plain[-1][0] == "equal":
            plain[-1] = ("equal", plain[-1][1], i2, plain[-1][3], j2)
        else:
            plain.append((tag, i1, i2, j1, j2))
    matcher = difflib.SequenceMatcher(None, parent.lines, child.lines, autojunk=False)
    # get_grouped_opcodes() reads (and edits) get_opcodes(): feed it our anchored ops.
    matcher.get_opcodes = lambda: list(plain)  # type: ignore[method-assign]
    out = []
    for group in matcher.get_grouped_opcodes(context):
        if all(tag == "equal" for tag, *_ in group):
            continue
        if not out:
            out += ["--- parent\n", "+++ child\n"]
        first, last = group[0], group[-1]
        out.append(f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [f" {line}\n" for line in parent.lines[i1:i2]]
                continue
            out += [f"-{line}\n" for line in parent.lines[i1:i2]]
            out += [f"+{line}\n" for line in child.lines[j1:j2]]
    return "".join(out)


def diff_regions(parent: str, child: str) -> RegionDiff:
    """Diffs normalized `parent` -> `child` and maps changed lines onto regions.

    Replaced/removed parent lines are mapped through the parent's regions, replaced/
    inserted child lines through the child's. Both programs must parse (TemplateError
    otherwise; callers report a template failure before locality).
    """
    return diff_parsed(parse_regions(parent), parse_regions(child))


def diff_parsed(p: ProgramRegions, c: ProgramRegions) -> RegionDiff:
    """`diff_regions` on programs parsed already (parse once, diff once)."""
    ops = _opcodes(p, c)
    plines: dict[str, set[int]] = {name: set() for name in REGION_NAMES}
    clines: dict[str, set[int]] = {name: set() for name in REGION_NAMES}
    for region, tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            continue
        plines[region].update(range(i1 + 1, i2 + 1))
        clines[region].update(range(j1 + 1, j2 + 1))
    changed = frozenset(r for r in REGION_NAMES if plines[r] or clines[r])
    return RegionDiff(
        changed=changed,
        parent_lines={r: tuple(sorted(v)) for r, v in plines.items()},
        child_lines={r: tuple(sorted(v)) for r, v in clines.items()},
        unified=_unified(p, c, ops) if changed else "",
    )


def _ranges(numbers: tuple[int, ...]) -> str:
    """(3, 4, 5, 9) -> '3-5, 9'."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)


@dataclasses.dataclass(frozen=True)
class LocalityResult:
    """Outcome of the `locality` feasibility stage.

    Attributes:
      ok: True iff something changed and every change lies in the selected factor.
      reason: '' when ok; else what was violated, naming the region and lines.
      diff: The region diff it was judged on.
    """

    ok: bool
    reason: str
    diff: RegionDiff


def _where(
    diff: RegionDiff, region: str, child: ProgramRegions, parent: ProgramRegions
) -> tuple[int, str, str]:
    """(count, description, first line text) of the changed lines of `region`, child side preferred."""
    if diff.child_lines[region]:
        nums = diff.child_lines[region]
        side, text = "child", child.lines[nums[0] - 1]
    else:
        nums = diff.parent_lines[region]
        side, text = "parent", parent.lines[nums[0] - 1]
    return len(nums), f"{side} line{'s' if len(nums) > 1 else ''} {_ranges(nums)}", text


def check_locality(parent: str, child: str, factor: str) -> LocalityResult:
    """Checks that `child` differs from `parent` only inside the region of `factor`.

    Raises ValueError for an unknown factor and TemplateError if either does not parse.
    """
    p, c = parse_regions(parent), parse_regions(child)
    return locality_of(diff_parsed(p, c), factor, p, c)


def locality_of(
    diff: RegionDiff, factor: str, p: ProgramRegions, c: ProgramRegions
) -> LocalityResult:
    """`check_locality` from a diff computed already (`p`, `c`: its parent and child)."""
    if factor not in FACTORS:
        raise ValueError(f"Unexpected factor {factor!r}; expected one of {FACTORS}")
    if diff.empty:
        return LocalityResult(False, "no change", diff)
    if SCAFFOLD in diff.changed:
        _, where, text = _where(diff, SCAFFOLD, c, p)
        return LocalityResult(
            False, f"{factor} edit changed scaffolding at {where} ({text.strip()!r})", diff
        )
    other = next(f for f in FACTORS if f != factor)
    if other in diff.changed:
        count, where, _ = _where(diff, other, c, p)
        return LocalityResult(
            False, f"{factor} edit changed {count} line(s) in {other} ({where})", diff
        )
    return LocalityResult(True, "", diff)


@dataclasses.dataclass(frozen=True)
class Entanglement:
    """Which parts of the program an edit touched (for metrics of any editor).

    Attributes:
      kind: 'none' (no change), 'operator' / 'action' (exactly that one region),
        'entangled' (both regions, scaffolding untouched), 'scaffold' (scaffolding
        touched, with or without regions).
      entangled: True for 'entangled' and 'scaffold'.
      changed: The changed region names.
    """

    kind: EntanglementKind
    entangled: bool
    changed: frozenset[str]


def classify_entanglement(parent: str, child: str) -> Entanglement:
    """Classifies the parent -> child edit; both must parse (TemplateError otherwise)."""
    return entanglement_of(diff_regions(parent, child))


def entanglement_of(diff: RegionDiff) -> Entanglement:
    """`classify_entanglement` from a diff computed already."""
    changed = diff.changed
    kind: EntanglementKind
    if not changed:
        kind = "none"
    elif SCAFFOLD in changed:
        kind = "scaffold"
    elif len(changed) == 2:
        kind = "entangled"
    else:
        kind = "operator" if "OPERATOR" in changed else "action"
    return Entanglement(kind, kind in ("entangled", "scaffold"), changed)
