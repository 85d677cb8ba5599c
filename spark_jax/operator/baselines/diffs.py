"""OpenEvolve's SEARCH/REPLACE diff format: extract the blocks, apply them line-exactly.

A block is `<<<<<<< SEARCH\n...\n=======\n...\n>>>>>>> REPLACE`; its SEARCH lines must
match a run of the current program's lines exactly (OpenEvolve's rule). Unlike OpenEvolve,
which skips a block that matches nothing, a non-matching block here makes the whole answer a
parse failure ('diff_no_match'), so the miss is counted rather than silently dropped.
"""

from __future__ import annotations

import re

DIFF_BLOCK = re.compile(r"<<<<<<< SEARCH\n(.*?)=======\n(.*?)>>>>>>> REPLACE", re.DOTALL)


class DiffError(ValueError):
    """An answer's diff cannot be applied; `outcome` is the parse outcome to record."""

    def __init__(self, outcome: str, message: str):
        super().__init__(message)
        self.outcome = outcome


def extract_diffs(text: str) -> list[tuple[str, str]]:
    """The (search, replace) pairs of an answer, in order (trailing newline dropped)."""
    return [(s.rstrip("\n"), r.rstrip("\n")) for s, r in DIFF_BLOCK.findall(text or "")]


def apply_diff(program: str, text: str) -> str:
    """`program` with every block of `text` applied in order; raises DiffError."""
    blocks = extract_diffs(text)
    if not blocks:
        raise DiffError("no_diff", "the answer holds no SEARCH/REPLACE block")
    lines = program.split("\n")
    for k, (search, replace) in enumerate(blocks, 1):
        want = search.split("\n")
        for i in range(len(lines) - len(want) + 1):
            if lines[i : i + len(want)] == want:
                lines[i : i + len(want)] = replace.split("\n") if replace else []
                break
        else:
            first = want[0].strip()[:60] if want else ""
            raise DiffError(
                "diff_no_match", f"SEARCH block {k} matches no lines of the program ({first!r})"
            )
    return "\n".join(lines)


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
