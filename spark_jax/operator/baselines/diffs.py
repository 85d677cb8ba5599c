"""OpenEvolve's SEARCH/REPLACE diff format, applied as OpenEvolve v0.3.2 applies it
(`openevolve/utils/code_utils.py`: `extract_diffs`, `apply_diff`; `process_parallel.py`).

A block is `<<<<<<< SEARCH\n...\n=======\n...\n>>>>>>> REPLACE`; both texts lose trailing
whitespace (`rstrip()`). Blocks apply in order, each at the first run of the current program's
lines that its SEARCH lines match exactly. As in OpenEvolve:

  - an answer without any block is a failure ('no_diff': OpenEvolve's "No valid diffs found in
    response"), the only diff failure OpenEvolve has;
  - a block whose SEARCH text matches nothing is skipped and the others still apply; the
    skipped blocks are counted in the result (`AppliedDiff.skipped`), not dropped silently;
  - when every block is skipped, or the replacements change nothing, the result is the
    program unchanged. OpenEvolve then evaluates it like any child. Here the caller reports it
    apart (see `openevolve.py`): it is the parent itself, so it falls under the one duplicate
    rule every method shares (not retrained, recorded as a duplicate of an evaluated program).
"""

from __future__ import annotations

import dataclasses
import difflib
import re

DIFF_BLOCK = re.compile(r"<<<<<<< SEARCH\n(.*?)=======\n(.*?)>>>>>>> REPLACE", re.DOTALL)


class DiffError(ValueError):
    """An answer's diff cannot be applied; `outcome` is the parse outcome to record."""

    def __init__(self, outcome: str, message: str):
        super().__init__(message)
        self.outcome = outcome


@dataclasses.dataclass(frozen=True)
class AppliedDiff:
    """The program after an answer's blocks, with how many blocks there were and which
    matched nothing (1-based block numbers)."""

    program: str
    blocks: int
    skipped: tuple[int, ...] = ()

    def note(self) -> str:
        """'ok', or 'skipped_blocks: ...' naming the blocks that matched nothing."""
        if not self.skipped:
            return "ok"
        which = ", ".join(map(str, self.skipped))
        return (
            f"skipped_blocks: {len(self.skipped)} of {self.blocks} SEARCH blocks matched "
            f"nothing (block {which}; skipped, as OpenEvolve does)"
        )


def extract_diffs(text: str) -> list[tuple[str, str]]:
    """The (search, replace) pairs of an answer, in order, trailing whitespace dropped."""
    return [(s.rstrip(), r.rstrip()) for s, r in DIFF_BLOCK.findall(text or "")]


def apply_diff(program: str, text: str) -> AppliedDiff:
    """`program` with every block of `text` that matches applied in order; raises DiffError
    only when `text` holds no block."""
    blocks = extract_diffs(text)
    if not blocks:
        raise DiffError("no_diff", "the answer holds no SEARCH/REPLACE block")
    lines = program.split("\n")
    skipped = []
    for k, (search, replace) in enumerate(blocks, 1):
        want = search.split("\n")
        for i in range(len(lines) - len(want) + 1):
            if lines[i : i + len(want)] == want:
                lines[i : i + len(want)] = replace.split("\n")
                break
        else:
            skipped.append(k)
    return AppliedDiff("\n".join(lines), len(blocks), tuple(skipped))


def as_diff(parent: str, child: str) -> str:
    """`child` written as one SEARCH/REPLACE block over the lines that changed (for the
    offline analogue's call records)."""
    a, b = parent.split("\n"), child.split("\n")
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end_a, end_b = len(a), len(b)
    while end_a > start and end_b > start and a[end_a - 1] == b[end_b - 1]:
        end_a, end_b = end_a - 1, end_b - 1
    search, replace = "\n".join(a[start:end_a]), "\n".join(b[start:end_b])
    return f"<<<<<<< SEARCH\n{search}\n=======\n{replace}\n>>>>>>> REPLACE\n"


def line_blocks(parent: str, child: str) -> list[tuple[str, str]]:
    """The (search, replace) pairs that turn `parent` into `child`, one per changed hunk of a
    line diff (a pure insertion carries the line above it as its search text), as a diff
    answer would have written them."""
    a, b = parent.split("\n"), child.split("\n")
    blocks = []
    ops = difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            continue
        if i1 == i2 and i1 > 0:  # an insertion: anchor it on the line above
            i1, j1 = i1 - 1, j1 - 1
        blocks.append(("\n".join(a[i1:i2]).rstrip(), "\n".join(b[j1:j2]).rstrip()))
    return blocks
