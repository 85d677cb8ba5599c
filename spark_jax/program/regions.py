"""The candidate-program model: tagged regions, normalization and region diffs.

A candidate program is one Python file with two disjoint editable regions, each delimited
by exact tag lines (leading whitespace allowed, nothing else on the line):

    # SPARK:BEGIN OPERATOR
    ...setup body...
    # SPARK:END OPERATOR
    ...
    # SPARK:BEGIN ACTION
    ...__call__ body...
    # SPARK:END ACTION

Everything outside the bodies, the tag lines included, is frozen scaffolding. This module
parses that template (feasibility stage `template`), diffs a child against its parent on
normalized lines and maps each change onto OPERATOR / ACTION / SCAFFOLD (stage `locality`
and the entanglement metric). Pure Python; no candidate code is imported here.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from typing import Literal, Mapping

__all__ = [
    'FACTORS', 'SCAFFOLD', 'REGION_NAMES', 'TemplateError', 'RegionSpan', 'ProgramRegions',
    'RegionDiff', 'LocalityResult', 'Entanglement', 'normalize', 'parse_regions',
    'replace_region', 'diff_regions', 'diff_parsed', 'check_locality', 'locality_of',
    'classify_entanglement', 'entanglement_of',
]

FACTORS: tuple[str, ...] = ('OPERATOR', 'ACTION')
SCAFFOLD = 'SCAFFOLD'
REGION_NAMES: tuple[str, ...] = FACTORS + (SCAFFOLD,)

Region = Literal['OPERATOR', 'ACTION', 'SCAFFOLD']
EntanglementKind = Literal['none', 'operator', 'action', 'entangled', 'scaffold']

# An exact tag line (after trailing-whitespace stripping).
_TAG_RE = re.compile(r'[ \t]*# SPARK:(BEGIN|END) (OPERATOR|ACTION)')
# Anything that looks like an attempt at a tag; must then be an exact tag line.
_TAG_LIKE_RE = re.compile(r'#\s*SPARK\s*:\s*(BEGIN|END)\b', re.IGNORECASE)


class TemplateError(ValueError):
    """The program does not follow the tag template.

    Attributes:
      reason: What is wrong, naming the tag and 1-based line(s).
      lineno: The first offending 1-based line, or None (e.g. for a missing tag).
    """

    def __init__(self, reason: str, lineno: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.lineno = lineno


def normalize(source: str) -> str:
    """CRLF/CR -> LF and trailing whitespace stripped per line; nothing else.

    A non-empty result always ends with exactly one newline (so a missing final newline
    is not a change); trailing blank lines are kept.
    """
    text = source.replace('\r\n', '\n').replace('\r', '\n')
    lines = text.split('\n')
    if lines and lines[-1] == '':
        lines.pop()
    if not lines:
        return ''
    return '\n'.join(line.rstrip() for line in lines) + '\n'


def _lines(source: str) -> list[str]:
    text = normalize(source)
    return text.split('\n')[:-1] if text else []


def _join(lines: list[str] | tuple[str, ...]) -> str:
    return ''.join(line + '\n' for line in lines)


@dataclasses.dataclass(frozen=True)
class RegionSpan:
    """One editable region.

    Attributes:
      factor: 'OPERATOR' or 'ACTION'.
      begin: 0-based line index of the BEGIN tag line.
      end: 0-based line index of the END tag line.
      body: The text strictly between the tag lines ('' if empty; else newline-terminated).
      indent: Leading whitespace of the BEGIN tag line.
    """

    factor: str
    begin: int
    end: int
    body: str
    indent: str


@dataclasses.dataclass(frozen=True)
class ProgramRegions:
    """A parsed program.

    Attributes:
      lines: Normalized lines (no newline characters).
      spans: One RegionSpan per factor, in FACTORS order.
      scaffolding: The normalized text with each region body replaced by one placeholder
        comment line `<indent># <SPARK FACTOR body>`; tag lines are kept.
    """

    lines: tuple[str, ...]
    spans: tuple[RegionSpan, ...]
    scaffolding: str

    @property
    def source(self) -> str:
        """The normalized source text."""
        return _join(self.lines)

    def span(self, factor: str) -> RegionSpan:
        """The span of `factor`; raises ValueError for an unknown factor."""
        for span in self.spans:
            if span.factor == factor:
                return span
        raise ValueError(f'Unexpected factor {factor!r}; expected one of {FACTORS}')

    def body(self, factor: str) -> str:
        """The body text of `factor`."""
        return self.span(factor).body

    def region_of(self, line_index: int) -> Region:
        """'OPERATOR', 'ACTION' or 'SCAFFOLD' for a 0-based line index (tags: SCAFFOLD)."""
        for span in self.spans:
            if span.begin < line_index < span.end:
                return span.factor  # type: ignore[return-value]
        return SCAFFOLD


def _tag(kind: str, factor: str) -> str:
    return f'# SPARK:{kind} {factor}'


def parse_regions(source: str) -> ProgramRegions:
    """Parses the tag template of `source` (normalized first).

    Raises:
      TemplateError: a malformed tag line (text on a tag line, unknown factor), a missing
        or duplicated tag, END before BEGIN, ACTION before OPERATOR, nested or
        overlapping regions.
    """
    lines = _lines(source)
    found: dict[tuple[str, str], list[int]] = {
        (kind, factor): [] for factor in FACTORS for kind in ('BEGIN', 'END')}
    for i, line in enumerate(lines):
        if not _TAG_LIKE_RE.search(line):
            continue
        match = _TAG_RE.fullmatch(line)
        if match is None:
            raise TemplateError(
                f'text on tag line {i + 1}: {line.strip()!r} (a tag line must be exactly '
                f"'# SPARK:BEGIN|END OPERATOR|ACTION' plus indentation)", i + 1)
        found[(match.group(1), match.group(2))].append(i)

    for (kind, factor), where in found.items():
        if not where:
            raise TemplateError(f'missing tag {_tag(kind, factor)!r}')
        if len(where) > 1:
            at = ','.join(str(i + 1) for i in where)
            raise TemplateError(
                f'duplicated tag {_tag(kind, factor)!r} at lines {at}', where[1] + 1)

    bounds = {f: (found[('BEGIN', f)][0], found[('END', f)][0]) for f in FACTORS}
    for factor, (begin, end) in bounds.items():
        if end < begin:
            raise TemplateError(
                f'END before BEGIN for {factor} (END at line {end + 1}, '
                f'BEGIN at line {begin + 1})', end + 1)
    (op_begin, op_end), (act_begin, act_end) = bounds['OPERATOR'], bounds['ACTION']
    if act_begin < op_begin and act_end < op_begin:
        raise TemplateError(
            f'ACTION before OPERATOR (ACTION at lines {act_begin + 1}-{act_end + 1}, '
            f'OPERATOR at lines {op_begin + 1}-{op_end + 1})', act_begin + 1)
    if not op_end < act_begin:
        raise TemplateError(
            f'nested/overlapping regions: OPERATOR at lines {op_begin + 1}-{op_end + 1}, '
            f'ACTION at lines {act_begin + 1}-{act_end + 1}', max(op_begin, act_begin) + 1)

    spans = []
    for factor in FACTORS:
        begin, end = bounds[factor]
        indent = lines[begin][:len(lines[begin]) - len(lines[begin].lstrip())]
        spans.append(RegionSpan(factor, begin, end, _join(lines[begin + 1:end]), indent))

    scaffold: list[str] = []
    cursor = 0
    for span in spans:
        scaffold.extend(lines[cursor:span.begin + 1])
        scaffold.append(f'{span.indent}# <SPARK {span.factor} body>')
        cursor = span.end
    scaffold.extend(lines[cursor:])
    return ProgramRegions(tuple(lines), tuple(spans), _join(scaffold))


def replace_region(source: str, factor: str, new_body: str) -> str:
    """Returns normalized `source` with the body of `factor` replaced by `new_body`.

    `new_body` is inserted verbatim (normalized, not re-indented). Raises TemplateError
    if `source` does not parse or `new_body` contains a tag line.
    """
    program = parse_regions(source)
    span = program.span(factor)
    body_lines = _lines(new_body)
    for i, line in enumerate(body_lines):
        if _TAG_LIKE_RE.search(line):
            raise TemplateError(
                f'new {factor} body contains a tag line at body line {i + 1}: '
                f'{line.strip()!r}')
    lines = list(program.lines)
    lines[span.begin + 1:span.end] = body_lines
    return _join(lines)


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
    unified: str = ''

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


def _opcodes(parent: ProgramRegions, child: ProgramRegions
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
            None, parent.lines[p0:p1], child.lines[c0:c1], autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            ops.append((region, tag, p0 + i1, p0 + i2, c0 + j1, c0 + j2))
    return ops


def _range(start: int, stop: int) -> str:
    """A unified-diff range (1-based start, length), as difflib formats it."""
    length = stop - start
    first = start + 1 if length else start
    return str(first) if length == 1 else f'{first},{length}'


def _unified(parent: ProgramRegions, child: ProgramRegions,
             ops: list[tuple[str, str, int, int, int, int]], context: int = 3) -> str:
    plain: list[tuple[str, int, int, int, int]] = []
    for _, tag, i1, i2, j1, j2 in ops:  # Merge equal runs split at segment borders.
        if plain and tag == 'equal' and plain[-1][0] == 'equal':
            plain[-1] = ('equal', plain[-1][1], i2, plain[-1][3], j2)
        else:
            plain.append((tag, i1, i2, j1, j2))
    matcher = difflib.SequenceMatcher(None, parent.lines, child.lines, autojunk=False)
    # get_grouped_opcodes() reads (and edits) get_opcodes(): feed it our anchored ops.
    matcher.get_opcodes = lambda: list(plain)  # type: ignore[method-assign]
    out = []
    for group in matcher.get_grouped_opcodes(context):
        if all(tag == 'equal' for tag, *_ in group):
            continue
        if not out:
            out += ['--- parent\n', '+++ child\n']
        first, last = group[0], group[-1]
        out.append(f'@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n')
        for tag, i1, i2, j1, j2 in group:
            if tag == 'equal':
                out += [f' {line}\n' for line in parent.lines[i1:i2]]
                continue
            out += [f'-{line}\n' for line in parent.lines[i1:i2]]
            out += [f'+{line}\n' for line in child.lines[j1:j2]]
    return ''.join(out)


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
        if tag == 'equal':
            continue
        plines[region].update(range(i1 + 1, i2 + 1))
        clines[region].update(range(j1 + 1, j2 + 1))
    changed = frozenset(r for r in REGION_NAMES if plines[r] or clines[r])
    return RegionDiff(
        changed=changed,
        parent_lines={r: tuple(sorted(v)) for r, v in plines.items()},
        child_lines={r: tuple(sorted(v)) for r, v in clines.items()},
        unified=_unified(p, c, ops) if changed else '',
    )


def _ranges(numbers: tuple[int, ...]) -> str:
    """(3, 4, 5, 9) -> '3-5, 9'."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ', '.join(str(r[0]) if len(r) == 1 else f'{r[0]}-{r[-1]}' for r in runs)


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


def _where(diff: RegionDiff, region: str, child: ProgramRegions, parent: ProgramRegions
           ) -> tuple[int, str, str]:
    """(count, description, first line text) of the changed lines of `region`, child side preferred."""
    if diff.child_lines[region]:
        nums = diff.child_lines[region]
        side, text = 'child', child.lines[nums[0] - 1]
    else:
        nums = diff.parent_lines[region]
        side, text = 'parent', parent.lines[nums[0] - 1]
    return len(nums), f'{side} line{"s" if len(nums) > 1 else ""} {_ranges(nums)}', text


def check_locality(parent: str, child: str, factor: str) -> LocalityResult:
    """Checks that `child` differs from `parent` only inside the region of `factor`.

    Raises ValueError for an unknown factor and TemplateError if either does not parse.
    """
    p, c = parse_regions(parent), parse_regions(child)
    return locality_of(diff_parsed(p, c), factor, p, c)


def locality_of(diff: RegionDiff, factor: str, p: ProgramRegions, c: ProgramRegions
                ) -> LocalityResult:
    """`check_locality` from a diff computed already (`p`, `c`: its parent and child)."""
    if factor not in FACTORS:
        raise ValueError(f'Unexpected factor {factor!r}; expected one of {FACTORS}')
    if diff.empty:
        return LocalityResult(False, 'no change', diff)
    if SCAFFOLD in diff.changed:
        _, where, text = _where(diff, SCAFFOLD, c, p)
        return LocalityResult(
            False, f'{factor} edit changed scaffolding at {where} ({text.strip()!r})', diff)
    other = next(f for f in FACTORS if f != factor)
    if other in diff.changed:
        count, where, _ = _where(diff, other, c, p)
        return LocalityResult(
            False, f'{factor} edit changed {count} line(s) in {other} ({where})', diff)
    return LocalityResult(True, '', diff)


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
        kind = 'none'
    elif SCAFFOLD in changed:
        kind = 'scaffold'
    elif len(changed) == 2:
        kind = 'entangled'
    else:
        kind = 'operator' if 'OPERATOR' in changed else 'action'
    return Entanglement(kind, kind in ('entangled', 'scaffold'), changed)
