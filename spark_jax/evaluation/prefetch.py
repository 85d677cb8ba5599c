"""A bounded background prefetcher: the next batches are sampled (and placed on the device)
while the current training step runs.

One daemon thread pulls from the source iterator in order and applies `transform` (e.g. a
`device_put`), keeping at most `depth` items ready; the consumer sees exactly the source's
items in the source's order. `close()` (or leaving the `with` block) stops and joins the
thread; an error in the source or the transform is raised on the consumer's next `next()`.
"""

from __future__ import annotations

import queue
import threading
from typing import Any, Callable, Iterator

__all__ = ["Prefetcher", "THREAD_NAME"]

THREAD_NAME = "spark-prefetch"
_END = object()


class _Failure:
    def __init__(self, error: BaseException):
        self.error = error


class Prefetcher:
    """Iterates `source` through a bounded queue filled by one background thread.

    Args:
      source: the iterator to read ahead of (may be infinite).
      depth: items kept ready at most (>= 1).
      transform: applied to each item on the background thread (default: none).
    """

    def __init__(
        self, source: Iterator[Any], depth: int = 2, transform: Callable[[Any], Any] | None = None
    ):
        if depth < 1:
            raise ValueError(f"prefetch depth must be >= 1, got {depth}")
        self._source = source
        self._transform = transform
        self._queue: queue.Queue = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._done = False
        self._thread = threading.Thread(target=self._fill, name=THREAD_NAME, daemon=True)
        self._thread.start()

    def _put(self, item) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def _fill(self) -> None:
        try:
            for item in self._source:
                if self._stop.is_set():
                    return
                if self._transform is not None:
                    item = self._transform(item)
                if not self._put(item):
                    return
            self._put(_END)
        except BaseException as e:  # noqa: BLE001 - handed to the consumer
            self._put(_Failure(e))

    def __iter__(self) -> Prefetcher:
        return self

    def __next__(self):
        if self._done:
            raise StopIteration
        item = self._queue.get()
        if item is _END:
            self._done = True
            self.close()
            raise StopIteration
        if isinstance(item, _Failure):
            self._done = True
            self.close()
            raise item.error
        return item

    def close(self) -> None:
        """Stops the background thread and waits for it (idempotent)."""
        self._stop.set()
        while self._thread.is_alive():
            try:  # unblock a producer waiting on a full queue
                self._queue.get_nowait()
            except queue.Empty:
                pass
            self._thread.join(timeout=0.05)

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def __enter__(self) -> Prefetcher:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
