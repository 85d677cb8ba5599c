"""A run's plots: five PNGs drawn from `RunAccounting.curves` (matplotlib, Agg canvas; no
pyplot state, so it is safe in any process). OOD fractions are drawn as percentages."""

from __future__ import annotations

import math
import os
import pathlib

from spark_jax.report.accounting import RunAccounting
from spark_jax.util import labels

__all__ = ["PLOT_FILES", "write_plots"]

PLOT_FILES = (
    "best_ood_vs_attempt.png",
    "best_ood_vs_evaluated.png",
    "entanglement_rate.png",
    "valid_rate.png",
    "incumbent_macs.png",
)


def write_plots(
    acc: RunAccounting, out: pathlib.Path, caption: str = ""
) -> tuple[pathlib.Path, ...]:
    """Writes the five PNGs of PLOT_FILES into `out` (created) and returns their paths, in
    PLOT_FILES order; a plot with nothing to draw says so instead. `caption` (protocol, task,
    editor, machine) is every figure's caption."""
    out.mkdir(parents=True, exist_ok=True)
    for name, spec in zip(PLOT_FILES, _plot_specs(acc)):
        _draw(out / name, *spec, caption)
    return tuple(out / name for name in PLOT_FILES)


def _plot_specs(acc: RunAccounting) -> list[tuple]:
    """(title, x label, y label, [(xs, ys, label, style)]) per plot, in PLOT_FILES order."""
    c = {
        k: [100.0 * y for y in v] if k in ("best", "cand_ood", "best_eval") else list(v)
        for k, v in acc.curves.items()
    }
    # x is the stored 0-based attempt index; the seed's point, before any attempt, is at -1.
    att, seed_x = list(range(-1, len(c["best"]) - 1)), "attempt index (-1: the seed)"
    ood = "OOD accuracy (%)"
    c["macs"] = [m / 1000.0 for m in c["macs"]]  # K, as report.md
    return [
        (
            "best-so-far OOD accuracy vs attempt",
            seed_x,
            ood,
            [(att, c["best"], "best so far", "step"), (att, c["cand_ood"], "candidate", ".")],
        ),
        (
            "best-so-far OOD accuracy vs evaluated candidates",
            "evaluated candidates (0: the seed)",
            ood,
            [(list(range(len(c["best_eval"]))), c["best_eval"], "best so far", "step")],
        ),
        (
            "entanglement rate (cumulative)",
            "attempt index",
            "entangled or scaffold / attempts",
            [(att[1:], c["entangled"], "entanglement rate", "-")],
        ),
        (
            "cumulative valid rate",
            "attempt index",
            "feasible / attempts",
            [(att[1:], c["valid"], "valid rate", "-")],
        ),
        (
            "incumbent MACs",
            seed_x,
            "MACs (K) of the best-so-far program",
            [(att, c["macs"], "incumbent MACs", "step")],
        ),
    ]


def _draw(path: pathlib.Path, title, xlabel, ylabel, series, caption: str) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    fig = Figure(figsize=(6.4, 4.0), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    drawn = [s for s in series if any(not math.isnan(y) for y in s[1])]
    for xs, ys, label, style in drawn:
        if style == "step":
            ax.step(xs, ys, where="post", label=label, marker="." if len(xs) < 3 else None)
        else:
            ax.plot(xs, ys, style, label=label, alpha=0.5 if style == "." else 1.0)
    if "rate" in title:
        ax.set_ylim(-0.02, 1.02)
    if len(drawn) > 1:
        ax.legend(loc="lower right", fontsize="small")
    elif not drawn:
        ax.text(0.5, 0.5, "no data recorded", ha="center", va="center", transform=ax.transAxes)
    ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
    ax.ticklabel_format(axis="y", style="plain", useOffset=False)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # attempt indices, counts
    ax.grid(True, alpha=0.3)
    fig.subplots_adjust(left=0.13, right=0.97, bottom=0.17 if caption else 0.12, top=0.92)
    if caption:
        labels.caption(fig, caption)
    _save(fig, path)


def _save(fig, path: pathlib.Path) -> None:
    """Saves `fig` as a PNG via a temporary sibling and a rename: a full disk (OSError)
    leaves the previous file or none, never a truncated or 0-byte PNG."""
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        fig.savefig(tmp, format="png")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
