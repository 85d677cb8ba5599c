"""Markdown for every report (run, benchmark, compare, family, bench, the configuration docs):
tables, sections and documents are built here and nowhere else, so that a table's header,
its separator and its rows always agree.

    lines = markdown.table(["task", "OOD (%)"], [["dfs", "41.20"]], align="lr")
    text = markdown.document([markdown.section("Results", lines)])

A report is a list of sections (each a list of lines); `document` joins them. Cells are
written as given: `cell` makes one from arbitrary text (pipes escaped, line breaks folded).
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

__all__ = ["DASH", "cell", "document", "replace_answer", "row", "section", "splice", "table"]

DASH = "—"  # an empty or unknown cell


def cell(text: Any, limit: int | None = None) -> str:
    """One table cell from arbitrary text: pipes escaped, line breaks folded into spaces;
    longer than `limit` characters it is cut and ends in an ellipsis."""
    text = str(text).replace("|", "\\|").replace("\n", " ")
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def row(cells: Iterable[Any]) -> str:
    """One table row: `| a | b |`."""
    return "| " + " | ".join(str(c) for c in cells) + " |"


def table(header: Sequence[Any], rows: Iterable[Sequence[Any]], align: str = "") -> list[str]:
    """A table's lines: header, separator, rows.

    Args:
      header: the column titles.
      rows: one sequence of cells per row, each with exactly len(header) cells.
      align: one letter per column, 'l' (the default for every column) or 'r' (right-aligned,
        for numbers).
    Raises:
      ValueError: a row's cell count, or `align`, does not match the header.
    """
    titles = [str(h) for h in header]
    align = align or "l" * len(titles)
    if len(align) != len(titles) or set(align) - {"l", "r"}:
        raise ValueError(
            f"table '{titles[0] if titles else ''}': align {align!r} needs one of 'l'/'r' "
            f"per column ({len(titles)})"
        )
    lines = [row(titles), "|" + "".join("---:|" if a == "r" else "---|" for a in align)]
    for cells in rows:
        cells = list(cells)
        if len(cells) != len(titles):
            shown = ", ".join(str(c) for c in cells)[:120]
            raise ValueError(
                f"table '{titles[0]}': a row has {len(cells)} cells, the header "
                f"{len(titles)}: {shown}"
            )
        lines.append(row(cells))
    return lines


def section(title: str, body: Iterable[str], level: int = 2) -> list[str]:
    """A heading, a blank line, the body, a blank line."""
    return ["#" * level + " " + title, "", *body, ""]


def document(sections: Iterable[Sequence[str]], end: str = "") -> str:
    """The sections' lines joined by newlines, then `end`."""
    return "\n".join(line for s in sections for line in s) + end


def splice(text: str, begin: str, end: str, block: Sequence[str]) -> str:
    """`text` with its part from the marker `begin` through the marker `end` replaced by
    `block`'s lines (a results README's generated block: `block` carries both markers)."""
    start, stop = text.index(begin), text.index(end) + len(end)
    return text[:start] + "\n".join(block) + text[stop:]


def replace_answer(text: str, mark: str, answer: str) -> str:
    """`text` with the `**Answer.**` paragraph on the line after `mark` replaced by `answer`;
    `text` unchanged when it has no mark (an answer written by hand). ValueError when the
    mark is not followed by that paragraph."""
    if mark not in text:
        return text
    start = text.index(mark) + len(mark) + 1
    if not text.startswith("**Answer.**", start):
        raise ValueError(f"{mark} is not followed by the **Answer.** paragraph")
    stop = text.find("\n\n", start)
    stop = len(text) if stop < 0 else stop
    return text[:start] + f"**Answer.** {answer}" + text[stop:]
