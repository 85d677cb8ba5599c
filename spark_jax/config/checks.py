"""Shared value checks of the config records (pure Python)."""

from __future__ import annotations

import math
import numbers
from typing import Any

from spark_jax.config.protocol import ConfigError

__all__ = ["check_number"]


def check_number(
    path: str,
    value: Any,
    *,
    minimum: float | None = None,
    positive: bool = False,
    optional: bool = False,
    integer: bool = False,
) -> None:
    """Raises ConfigError unless `value` is a number (an int if `integer`) in range."""
    if value is None and optional:
        return
    kind = numbers.Integral if integer else numbers.Real
    what = "an integer" if integer else "a number"
    if (
        not isinstance(value, kind)
        or isinstance(value, bool)
        or (not integer and not math.isfinite(value))
    ):
        raise ConfigError(f"{path}: must be {what}{' or null' if optional else ''} (got {value!r})")
    if positive and not value > 0:
        raise ConfigError(f"{path}: must be > 0 (got {value!r})")
    if minimum is not None and value < minimum:
        raise ConfigError(f"{path}: must be >= {minimum} (got {value!r})")
