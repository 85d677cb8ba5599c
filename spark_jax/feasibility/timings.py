"""Stage timings of a feasibility check: an immutable, picklable mapping."""

from __future__ import annotations

from typing import Any, Iterator, Mapping

__all__ = ["Timings"]


class Timings(Mapping[str, float]):
    """An immutable, picklable stage -> seconds mapping, in stage order."""

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[str, float] | tuple[tuple[str, float], ...] = ()) -> None:
        pairs = tuple(items.items()) if isinstance(items, Mapping) else tuple(items)
        object.__setattr__(self, "_items", tuple((str(k), float(v)) for k, v in pairs))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Timings is immutable")

    def __getitem__(self, key: str) -> float:
        for k, v in self._items:
            if k == key:
                return v
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return (k for k, _ in self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(self._items)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mapping) and dict(self) == dict(other)

    def __repr__(self) -> str:
        return f"Timings({dict(self._items)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return Timings, (self._items,)
