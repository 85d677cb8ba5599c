"""Framing between a parent and its worker process: 4-byte big-endian length + UTF-8 JSON.

The child reads requests with the blocking `read_frame` and answers with `write_frame`; the
parent reads with `read_frame_from`, which polls with `select` so that a deadline, a frame
cap and a watchdog `tick` apply while it waits. Standard library only (the children import
this before anything heavy).
"""

from __future__ import annotations

import json
import os
import select
import struct
from typing import Any, BinaryIO, Callable

__all__ = [
    "HEADER",
    "FrameEOF",
    "FrameTimeout",
    "FrameTooLarge",
    "encode_frame",
    "read_frame",
    "read_frame_from",
    "write_all",
    "write_frame",
]

HEADER = struct.Struct(">I")  # The body's length in bytes.


class FrameTimeout(Exception):
    """No complete frame before the deadline."""


class FrameEOF(Exception):
    """The other side closed its pipe."""


class FrameTooLarge(ValueError):
    """A frame header announced more than the cap."""


def encode_frame(message: dict[str, Any]) -> bytes:
    """A length-prefixed JSON frame."""
    body = json.dumps(message).encode("utf-8")
    return HEADER.pack(len(body)) + body


def write_all(fd: int, data: bytes) -> None:
    """Writes all of `data` to a raw file descriptor (os.write may write less)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def write_frame(fd: int, message: dict[str, Any]) -> None:
    """Writes one frame to a raw file descriptor."""
    write_all(fd, encode_frame(message))


def read_frame(stream: BinaryIO) -> dict[str, Any] | None:
    """Blocks for one frame on a buffered binary stream; None at EOF (or a cut-off frame)."""
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    size = HEADER.unpack(header)[0]
    body = stream.read(size)
    return json.loads(body.decode("utf-8")) if len(body) == size else None


def read_frame_from(
    fd: int,
    buffer: bytearray,
    deadline: float,
    *,
    clock: Callable[[], float],
    tick: Callable[[], None] | None = None,
    frame_cap: int | None = None,
    poll_s: float = 0.05,
) -> dict[str, Any]:
    """The next frame from a pipe, polling with `select` (the parent's side).

    `buffer` keeps bytes past the frame for the next call; `tick` runs every poll (watchdogs;
    what it raises propagates). Raises FrameTimeout at `deadline` (on `clock`), FrameEOF,
    FrameTooLarge (a header above `frame_cap`), or ValueError (a body that is not JSON).
    """
    while True:
        if len(buffer) >= HEADER.size:
            size = HEADER.unpack(bytes(buffer[: HEADER.size]))[0]
            if frame_cap is not None and size > frame_cap:
                raise FrameTooLarge(f"response frame of {size} bytes (cap {frame_cap})")
            end = HEADER.size + size
            if len(buffer) >= end:
                body = bytes(buffer[HEADER.size : end])
                del buffer[:end]
                return json.loads(body.decode("utf-8"))
        remaining = deadline - clock()
        if remaining <= 0:
            raise FrameTimeout()
        if tick is not None:
            tick()
        readable, _, _ = select.select([fd], [], [], min(remaining, poll_s))
        if readable:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise FrameEOF("worker closed its pipe")
            buffer += chunk
