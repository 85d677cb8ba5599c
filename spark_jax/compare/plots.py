"""A comparison's band plots: per method, the mean, min and max of its runs' curves; every
method in the same axes, the sampling controls (`sample`, `sequential`) dashed."""

from __future__ import annotations

import dataclasses
import math
import statistics
from typing import Sequence

from spark_jax.compare.methods import is_control
from spark_jax.util import labels

__all__ = ["Band", "band", "band_plot"]


@dataclasses.dataclass(frozen=True)
class Band:
    """One method's band over its runs: at each x, the mean, min and max of the runs' values
    (a run that stopped early keeps its last value: a best-so-far or a cumulative rate)."""

    xs: tuple[int, ...]
    mean: tuple[float, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]
    n: int


def band(curves: Sequence[Sequence[float]], scale: float = 1.0) -> Band | None:
    """The band of the runs' curves (NaN points left out); None with no curve."""
    scaled = [[scale * v for v in c] for c in curves if c]
    if not scaled:
        return None
    n = max(len(c) for c in scaled)
    padded = [c + [c[-1]] * (n - len(c)) for c in scaled]
    cols = [[row[k] for row in padded if not math.isnan(row[k])] for k in range(n)]
    xs = tuple(k for k in range(n) if cols[k])
    return Band(
        xs,
        tuple(statistics.mean(cols[k]) for k in xs),
        tuple(min(cols[k]) for k in xs),
        tuple(max(cols[k]) for k in xs),
        len(scaled),
    )


def band_plot(path, methods, grouped, curve, xlabel, ylabel, title, scale, label) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.0))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    for m in methods:
        b = band([list(r.acc.curves.get(curve, ())) for r in grouped.get(m.name, [])], scale)
        if b is None:
            continue
        control = is_control(m)  # the sampling controls: dashed, in the same axes
        (line,) = ax.plot(
            b.xs, b.mean, linestyle="--" if control else "-",
            label=f"{m.name}{' (control)' if control else ''} (n={b.n})",
        )  # fmt: skip
        ax.fill_between(b.xs, b.low, b.high, alpha=0.2, color=line.get_color())
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    labels.caption(fig, label)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(str(path), dpi=110)
