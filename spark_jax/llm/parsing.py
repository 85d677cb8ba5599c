"""Deterministic parsers for LLM output (pure functions, no I/O).

All parsers first drop reasoning (`<think>` blocks, see `_text.split_reasoning`),
so text the model wrote while thinking never decides anything.
"""

from __future__ import annotations

import ast
import re
import textwrap

from spark_jax.llm._text import split_reasoning

__all__ = ["FACTORS", "parse_factor", "extract_program", "sanitize_directive"]

FACTORS = ("OPERATOR", "ACTION")

_DECOR = r"[\s>#*_`\"'.:-]*"
_LABELED = re.compile(
    r"^[\s>#*_`-]*(?:final\s+)?(?:factor|answer|choice|decision)[*_`\s]*[:=]"
    + _DECOR
    + r"(OPERATOR|ACTION)"
    + _DECOR
    + r"$",
    re.IGNORECASE,
)
_ALONE = re.compile(r"^" + _DECOR + r"(OPERATOR|ACTION)" + _DECOR + r"$", re.IGNORECASE)


def parse_factor(text: str | None) -> str | None:
    """Finds the routed factor, 'OPERATOR' or 'ACTION', in a route answer (strict).

    Decision rule, on the answer with reasoning removed:
      1. labelled lines such as `FACTOR: ACTION` (also `Answer:`, `Choice:`, `Decision:`,
         `Final factor:`; any case, markdown emphasis or backticks allowed), where the token
         is the only thing after the label - the last such line wins;
      2. else lines that hold the token alone (markdown allowed) - the last wins.
    A token inside prose ("the action region is...") never counts, so an answer without
    such a line is a parse failure (the caller retries, then falls back to ACTION).

    Returns:
      'OPERATOR', 'ACTION', or None.
    """
    answer, _ = split_reasoning(text)
    lines = answer.split("\n")
    for pattern in (_LABELED, _ALONE):
        found = [m.group(1) for m in map(pattern.match, lines) if m]
        if found:
            return found[-1].upper()
    return None


_FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*([\w+.#-]*)")
_PY_LANGS = frozenset({"python", "py", "python3", "py3"})


def _fenced_blocks(text: str) -> list[tuple[str, str, bool]]:
    """Returns `(language, body, closed)` for every fenced block, in order.

    An opening fence that is never closed (truncated output) yields one block with
    everything after it and `closed=False`.
    """
    blocks: list[tuple[str, str, bool]] = []
    fence, lang, body = "", "", []  # fence == '' means outside any block.
    for line in text.split("\n"):
        m = _FENCE.match(line)
        if not fence:
            if m:
                fence, lang, body = m.group(1), m.group(2).lower(), []
        elif (
            m
            and m.group(1)[0] == fence[0]
            and len(m.group(1)) >= len(fence)
            and line.strip() == m.group(1)
        ):
            blocks.append((lang, "\n".join(body), True))
            fence = ""
        else:
            body.append(line)
    if fence:
        blocks.append((lang, "\n".join(body), False))
    return blocks


def _tidy(code: str) -> str | None:
    code = textwrap.dedent(code).strip("\n")
    return code.rstrip() + "\n" if code.strip() else None


_CODE_START = re.compile(
    r"^(?:from\s+[\w.]+\s+import\s|import\s+\w|(?:async\s+)?def\s+\w|class\s+\w|@\w"
    r'|"""|\'\'\'|#!)'
)


def _is_prose(line: str) -> bool:
    """A column-0 sentence that is not a Python statement."""
    if not line or line[0].isspace() or not line[0].isalpha() or " " not in line.strip():
        return False
    try:
        ast.parse(line)
    except SyntaxError:
        return True
    return False


def extract_program(text: str | None) -> str | None:
    """Extracts the program from an edit answer.

    Rules, on the answer with reasoning removed:
      1. fenced blocks (``` or ~~~): the largest block tagged python/py, else the
         largest block of any language; an unclosed fence (truncated output) counts
         as a block running to the end of the text;
      2. no fences: if some column-0 line starts like code (`import`, `from .. import`,
         `def`, `class`, a decorator, a docstring), everything from the first such
         line, minus trailing prose lines;
      3. otherwise None.

    Returns:
      The dedented code ending with one newline, or None.
    """
    answer, _ = split_reasoning(text)
    blocks = [(lang, body) for lang, body, _ in _fenced_blocks(answer) if body.strip()]
    if blocks:
        python = [b for lang, b in blocks if lang in _PY_LANGS]
        pool = python or [b for _, b in blocks]
        return _tidy(max(pool, key=lambda b: len(b.strip())))
    lines = answer.split("\n")
    start = next((i for i, line in enumerate(lines) if _CODE_START.match(line)), None)
    if start is None:
        return None
    lines = lines[start:]
    while lines and (not lines[-1].strip() or _is_prose(lines[-1])):
        lines.pop()
    return _tidy("\n".join(lines))


_CODE_LINE = re.compile(
    r"""^\s*(?:
        (?:async\s+)?def\s+\w+\s*\(
      | class\s+\w+\s*[(:]
      | import\s+[\w.]+
      | from\s+[\w.]+\s+import\s
      | return\b
      | @\w[\w.]*\s*(?:\(|$)
      | (?:if|elif|else|for|while|with|try|except|finally)\b[^.!?]*:\s*$
      | [A-Za-z_][\w.]*(?:\[[^\]]*\])?(?:\s*,\s*[A-Za-z_][\w.]*)*\s*[-+*/@]?=(?!=)\s*\S.*[\[({]
      | [\])}]+[,;:]?\s*$
    )""",
    re.VERBOSE,
)
_LABEL = re.compile(r"^\W*directive\W*?:[\s*_]*", re.IGNORECASE)


_SENTENCE_END = re.compile(r"[.!?][)\"'`]*(?=\s|$)")


def sanitize_directive(text: str | None, max_chars: int = 600) -> str:
    """Cleans a reflection directive into one short paragraph of prose.

    Drops reasoning, fenced code blocks (an unclosed fence drops the rest), lines that
    look like code (def/class/import/return/decorators/control-flow headers,
    assignments whose value has brackets, lone closing brackets) and a leading
    'Directive:' label; keeps inline `backticks` (they name attributes); collapses
    whitespace. Over `max_chars`, it is cut after the last whole sentence that fits, else
    (one long first sentence) at the last word boundary, never mid-word.

    Returns:
      The directive, or '' if nothing is left.
    """
    if max_chars <= 0:
        raise ValueError("max_chars must be > 0")
    answer, _ = split_reasoning(text)
    kept: list[str] = []
    fence = ""
    for line in answer.split("\n"):
        m = _FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and line.strip() == m.group(1):
                fence = ""
            continue
        if m:
            fence = m.group(1)
            continue
        if not _CODE_LINE.match(line):
            kept.append(line)
    out = " ".join(" ".join(kept).split())
    out = _LABEL.sub("", out)
    if len(out) > max_chars:
        ends = [m.end() for m in _SENTENCE_END.finditer(out, 0, max_chars + 1)]
        ends = [e for e in ends if e <= max_chars]
        if ends:
            out = out[: ends[-1]]
        else:
            cut = out[: max_chars + 1].rfind(" ")
            out = out[:cut] if cut > 0 else out[:max_chars]
        if out.count("`") % 2:  # Never leave an inline code span open.
            out = out[: out.rfind("`")].rstrip()
    return out.strip()
