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
parses that template (feasibility stage `template`) and replaces a region's body;
`program.locality` diffs a child against its parent. Pure Python; no candidate code is
imported here.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Literal

__all__ = [
    "FACTORS",
    "SCAFFOLD",
    "REGION_NAMES",
    "TemplateError",
    "RegionSpan",
    "ProgramRegions",
    "normalize",
    "parse_regions",
    "replace_region",
]

FACTORS: tuple[str, ...] = ("OPERATOR", "ACTION")
SCAFFOLD = "SCAFFOLD"
REGION_NAMES: tuple[str, ...] = FACTORS + (SCAFFOLD,)

Region = Literal["OPERATOR", "ACTION", "SCAFFOLD"]

# An exact tag line (after trailing-whitespace stripping).
_TAG_RE = re.compile(r"[ \t]*# SPARK:(BEGIN|END) (OPERATOR|ACTION)")
# Anything that looks like an attempt at a tag; must then be an exact tag line.
_TAG_LIKE_RE = re.compile(r"#\s*SPARK\s*:\s*(BEGIN|END)\b", re.IGNORECASE)


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
    text = source.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        return ""
    return "\n".join(line.rstrip() for line in lines) + "\n"


def _lines(source: str) -> list[str]:
    text = normalize(source)
    return text.split("\n")[:-1] if text else []


def _join(lines: list[str] | tuple[str, ...]) -> str:
    return "".join(line + "\n" for line in lines)


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
        raise ValueError(f"Unexpected factor {factor!r}; expected one of {FACTORS}")

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
    return f"# SPARK:{kind} {factor}"


def _tag_lines(lines: list[str]) -> dict[tuple[str, str], int]:
    """(kind, factor) -> the line index of each tag; TemplateError for text on a tag line or
    a missing or duplicated tag."""
    found: dict[tuple[str, str], list[int]] = {
        (kind, factor): [] for factor in FACTORS for kind in ("BEGIN", "END")
    }
    for i, line in enumerate(lines):
        if not _TAG_LIKE_RE.search(line):
            continue
        match = _TAG_RE.fullmatch(line)
        if match is None:
            raise TemplateError(
                f"text on tag line {i + 1}: {line.strip()!r} (a tag line must be exactly "
                f"'# SPARK:BEGIN|END OPERATOR|ACTION' plus indentation)",
                i + 1,
            )
        found[(match.group(1), match.group(2))].append(i)

    for (kind, factor), where in found.items():
        if not where:
            raise TemplateError(f"missing tag {_tag(kind, factor)!r}")
        if len(where) > 1:
            at = ",".join(str(i + 1) for i in where)
            raise TemplateError(
                f"duplicated tag {_tag(kind, factor)!r} at lines {at}", where[1] + 1
            )
    return {key: where[0] for key, where in found.items()}


def _check_order(tags: dict[tuple[str, str], int]) -> dict[str, tuple[int, int]]:
    """factor -> (BEGIN, END) line indices; TemplateError for END before BEGIN, ACTION before
    OPERATOR, or nested/overlapping regions."""
    bounds = {f: (tags[("BEGIN", f)], tags[("END", f)]) for f in FACTORS}
    for factor, (begin, end) in bounds.items():
        if end < begin:
            raise TemplateError(
                f"END before BEGIN for {factor} (END at line {end + 1}, BEGIN at line {begin + 1})",
                end + 1,
            )
    (op_begin, op_end), (act_begin, act_end) = bounds["OPERATOR"], bounds["ACTION"]
    if act_begin < op_begin and act_end < op_begin:
        raise TemplateError(
            f"ACTION before OPERATOR (ACTION at lines {act_begin + 1}-{act_end + 1}, "
            f"OPERATOR at lines {op_begin + 1}-{op_end + 1})",
            act_begin + 1,
        )
    if not op_end < act_begin:
        raise TemplateError(
            f"nested/overlapping regions: OPERATOR at lines {op_begin + 1}-{op_end + 1}, "
            f"ACTION at lines {act_begin + 1}-{act_end + 1}",
            max(op_begin, act_begin) + 1,
        )
    return bounds


def parse_regions(source: str) -> ProgramRegions:
    """Parses the tag template of `source` (normalized first).

    Raises:
      TemplateError: a malformed tag line (text on a tag line, unknown factor), a missing
        or duplicated tag, END before BEGIN, ACTION before OPERATOR, nested or
        overlapping regions.
    """
    lines = _lines(source)
    bounds = _check_order(_tag_lines(lines))
    spans = []
    for factor in FACTORS:
        begin, end = bounds[factor]
        indent = lines[begin][: len(lines[begin]) - len(lines[begin].lstrip())]
        spans.append(RegionSpan(factor, begin, end, _join(lines[begin + 1 : end]), indent))

    scaffold: list[str] = []
    cursor = 0
    for span in spans:
        scaffold.extend(lines[cursor : span.begin + 1])
        scaffold.append(f"{span.indent}# <SPARK {span.factor} body>")
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
                f"new {factor} body contains a tag line at body line {i + 1}: {line.strip()!r}"
            )
    lines = list(program.lines)
    lines[span.begin + 1 : span.end] = body_lines
    return _join(lines)
