"""Writing files so that a reader never sees a half-written one."""

from __future__ import annotations

import os

__all__ = ["write_atomic"]


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
