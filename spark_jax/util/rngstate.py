"""JSON-serializable `random.Random` state, for run snapshots that resume identically."""

from __future__ import annotations

import random


def dump(rng: random.Random) -> list:
    """The generator's state as a JSON-friendly list."""
    version, internal, gauss = rng.getstate()
    return [version, list(internal), gauss]


def load(rng: random.Random, state: list) -> random.Random:
    """Restores `dump(rng)` into `rng`; returns it."""
    version, internal, gauss = state
    rng.setstate((version, tuple(internal), gauss))
    return rng
