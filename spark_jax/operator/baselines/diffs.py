"""OpenEvolve's SEARCH/REPLACE diff format, applied as OpenEvolve 0.4.0 applies it
(`openevolve/utils/code_utils.py`: `extract_diffs`, `_find_search_lines`, `apply_diff_blocks`;
`process_parallel.py: _run_iteration_worker`). The baseline first followed v0.3.2; 0.4.0 (on the
package registry since 2026-09) changed diff application, and this module follows 0.4.0.

A block is `<<<<<<< SEARCH\n...\n=======\n...\n>>>>>>> REPLACE`; both texts lose trailing
whitespace (`rstrip()`). Blocks apply in order, each at the first run of the current program's
lines that its SEARCH lines match: exactly first, else ignoring trailing whitespace on each
line (new in 0.4.0). As in OpenEvolve 0.4.0, these are failures of the attempt (nothing is
evaluated), each with its own outcome:

  - 'no_diff': the answer holds no block ("No valid diffs found in response");
  - 'malformed_diff': a delimiter line outside a block, or a block whose delimiter lines are
    not exactly SEARCH, =======, REPLACE (0.4.0's "Unmatched SEARCH/REPLACE delimiter
    outside a diff block" / "Malformed SEARCH/REPLACE delimiter sequence"; v0.3.2 applied what
    its regular expression matched, a stray `=======` line included);
  - 'no_match': no block's SEARCH text matches the parent ("None of the N SEARCH block(s)
    matched the parent program"; v0.3.2 evaluated the unchanged parent again).

A block whose SEARCH text matches nothing while another matches is skipped and the others still
apply (0.4.0 logs a warning); the skipped blocks are counted in the result
(`AppliedDiff.skipped`), not dropped silently. When the blocks that match change nothing, the
result is the parent itself: 0.4.0 fails the attempt ("Diff did not change the parent
program"); here the caller (`common.BaselineOperator.step`) records it as a failed attempt of
type `duplicate` under the one duplicate rule every method shares: the same effect (not
evaluated, counted as an attempt, not valid), under the shared rule's name.

The recorded real-model answers (results/llm-reliability, results/llm-trained) were parsed by
v0.3.2's rules; tests/test_baselines.py parses each of them again under these and finds the
same child for every one.
"""

from __future__ import annotations

import dataclasses
import difflib
import re

DIFF_BLOCK = re.compile(r"<<<<<<< SEARCH\n(.*?)=======\n(.*?)>>>>>>> REPLACE", re.DOTALL)
_MARKER = re.compile(r"^[ \t]*(<<<<<<< SEARCH|=======|>>>>>>> REPLACE)[ \t]*\r?$", re.MULTILINE)
_MARKERS = ["<<<<<<< SEARCH", "=======", ">>>>>>> REPLACE"]


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


def check_delimiters(text: str) -> None:
    """Raises DiffError('malformed_diff') where OpenEvolve 0.4.0's `extract_diffs` raises: a
    delimiter line outside every block, or a block whose delimiter lines are not exactly
    SEARCH, =======, REPLACE (a second separator the regular expression would take as code)."""
    cursor = 0
    for match in DIFF_BLOCK.finditer(text):
        if _MARKER.search(text[cursor : match.start()]):
            raise DiffError("malformed_diff", "unmatched SEARCH/REPLACE delimiter outside a block")
        if [m.group(1) for m in _MARKER.finditer(match.group(0))] != _MARKERS:
            raise DiffError("malformed_diff", "malformed SEARCH/REPLACE delimiter sequence")
        cursor = match.end()
    if _MARKER.search(text[cursor:]):
        raise DiffError("malformed_diff", "unmatched SEARCH/REPLACE delimiter outside a block")


def _find(lines: list[str], want: list[str]) -> int:
    """The first index where `want` matches `lines`: exactly, else ignoring trailing
    whitespace on each line (0.4.0's `_find_search_lines`); -1 if nowhere."""
    size = len(want)
    for i in range(len(lines) - size + 1):
        if lines[i : i + size] == want:
            return i
    stripped = [line.rstrip() for line in want]
    for i in range(len(lines) - size + 1):
        if [line.rstrip() for line in lines[i : i + size]] == stripped:
            return i
    return -1


def apply_diff(program: str, text: str) -> AppliedDiff:
    """`program` with every block of `text` that matches applied in order.

    Raises:
      DiffError: 'no_diff' (no block), 'malformed_diff' (delimiter lines out of order or
        outside a block), 'no_match' (no block matches the program).
    """
    text = text or ""
    check_delimiters(text)  # 0.4.0's extract_diffs raises before the empty check
    blocks = extract_diffs(text)
    if not blocks:
        raise DiffError("no_diff", "the answer holds no SEARCH/REPLACE block")
    lines = program.split("\n")
    skipped = []
    for k, (search, replace) in enumerate(blocks, 1):
        i = _find(lines, want := search.split("\n"))
        if i >= 0:
            lines[i : i + len(want)] = replace.split("\n")
        else:
            skipped.append(k)
    if len(skipped) == len(blocks):
        raise DiffError(
            "no_match", f"none of the {len(blocks)} SEARCH block(s) matched the parent program"
        )
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
