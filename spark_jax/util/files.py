"""Writing files so that a reader never sees a half-written one."""

from __future__ import annotations

import os

__all__ = ["GENERATED_END", "replace_generated", "write_atomic"]

# Closes a generated block of a results README (its opening marker names the script).
GENERATED_END = "<!-- end generated -->"


def write_atomic(path: str | os.PathLike, text: str) -> None:
    """Writes `text` to `path` via a temporary sibling and a rename (creates the directory)."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    tmp = os.path.join(directory, f".{os.path.basename(path)}.tmp{os.getpid()}")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def replace_generated(text: str, begin: str, body: str, end: str = GENERATED_END) -> str:
    """`text` with what lies between the markers `begin` and `end` replaced by `body` (the
    prose around them kept); ValueError naming the missing marker when one is absent."""
    for marker in (begin, end):
        if marker not in text:
            raise ValueError(f"missing the marker {marker!r}")
    head, rest = text.split(begin, 1)
    if end not in rest:
        raise ValueError(f"no {end!r} after {begin!r}")
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{body}\n{end}{tail}"
