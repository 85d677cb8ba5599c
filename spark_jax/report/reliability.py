"""The reliability table of a proposal-only comparison: per method, what its proposals were.

Per method (its runs' attempts pooled): attempts; valid rate (feasible / attempts) with a
Wilson 95% interval; entanglement rates with Wilson intervals, over attempts:
  scaffold      the edit touched the scaffolding (tag lines or frozen code),
  tag           an answer's region tag lines were broken (any edit call),
  cross-factor  the edit touched both regions (OPERATOR and ACTION);
the failure types of the attempts that were not valid, with counts; and per attempt the
LLM tokens (prompt + completion, summed over its calls) and latency (summed over its
calls), median and range. Then Fisher's exact test (two-sided) of the first method's valid
rate against the second's (SPARK against OpenEvolve in the experiment).

Everything here comes from what the run databases record (answers, their token counts
and latencies as the backend reported them, the feasibility verdicts), never from a clock
of this machine: a replay of the same cassettes gives the same table, byte for byte.
"""

from __future__ import annotations

import collections
import dataclasses
import pathlib
import statistics
from typing import Iterable, Mapping, Sequence

from spark_jax.search.rundb import RunDB
from spark_jax.stats.proportions import fisher_exact, wilson
from spark_jax.util import markdown

__all__ = ["MethodAttempts", "collect", "rates_plot", "table_lines"]

_EDIT_ROLES_SKIP = ("route", "directive")


@dataclasses.dataclass(frozen=True)
class MethodAttempts:
    """One method's attempts, reduced to what the table shows."""

    method: str
    attempts: int
    valid: int
    scaffold: int
    tag: int
    cross_factor: int
    failures: tuple[tuple[str, int], ...]  # (failure type, count), most frequent first
    tokens: tuple[int, ...]  # per attempt
    latency_s: tuple[float, ...]  # per attempt
    models: tuple[str, ...]  # the model labels its calls report


def collect(method: str, db_paths: Iterable[pathlib.Path]) -> MethodAttempts:
    """Reads every proposal of `db_paths` (the method's runs)."""
    proposals = []
    for path in db_paths:
        with RunDB.open(path) as db:
            proposals.extend(db.proposals())
    failures = collections.Counter(
        p.failure_type or p.status for p in proposals if p.status != "feasible"
    )
    return MethodAttempts(
        method=method,
        attempts=len(proposals),
        valid=sum(p.status == "feasible" for p in proposals),
        scaffold=sum(p.entanglement == "scaffold" for p in proposals),
        tag=sum(
            any(
                c.role not in _EDIT_ROLES_SKIP and c.parse_outcome.startswith("tags_broken")
                for c in p.calls
            )
            for p in proposals
        ),
        cross_factor=sum(p.entanglement == "entangled" for p in proposals),
        failures=tuple(sorted(failures.items(), key=lambda kv: (-kv[1], kv[0]))),
        tokens=tuple(
            sum(c.prompt_tokens + c.completion_tokens for c in p.calls) for p in proposals
        ),
        latency_s=tuple(sum(c.latency_s for c in p.calls) for p in proposals),
        models=tuple(sorted({c.model for p in proposals for c in p.calls if c.model})),
    )


def _rate(k: int, n: int) -> str:
    if n == 0:
        return "—"
    lo, hi = wilson(k, n)
    return f"{k}/{n} = {k / n:.2f} [{lo:.2f}, {hi:.2f}]"


def _spread(values: Sequence[float], fmt: str) -> str:
    if not values:
        return "—"
    med = statistics.median(values)
    return f"{med:{fmt}} ({min(values):{fmt}}–{max(values):{fmt}})"


_HEAD = (
    "method",
    "attempts",
    "valid rate [Wilson 95%]",
    "scaffold rate",
    "tag rate",
    "cross-factor rate",
    "failure types (count)",
    "tokens / attempt: median (range)",
    "LLM latency s / attempt: median (range)",
)


def table_lines(rows: Sequence[MethodAttempts]) -> list[str]:
    """The markdown table, one row per method, in the given order."""
    table = []
    for r in rows:
        failures = ", ".join(f"{kind} {n}" for kind, n in r.failures) or "none"
        cells = (
            f"`{r.method}`",
            str(r.attempts),
            _rate(r.valid, r.attempts),
            _rate(r.scaffold, r.attempts),
            _rate(r.tag, r.attempts),
            _rate(r.cross_factor, r.attempts),
            failures,
            _spread(r.tokens, ".0f"),
            _spread(r.latency_s, ".1f"),
        )
        table.append(cells)
    return markdown.table(_HEAD, table)


def fisher_line(
    rows: Mapping[str, MethodAttempts],
    first: str,
    second: str,
    field: str = "valid",
    label: str = "valid rate",
) -> str:
    """One sentence: Fisher's exact test of `first`'s count `field` (valid, scaffold, tag,
    cross_factor) per attempt against `second`'s."""
    if first not in rows or second not in rows:
        return f"Fisher's exact test: needs both `{first}` and `{second}` (not run)."
    a, b = rows[first], rows[second]
    if a.attempts == 0 or b.attempts == 0:
        return f"Fisher's exact test: `{first}` or `{second}` has no attempts (not run)."
    x, y = getattr(a, field), getattr(b, field)
    t = fisher_exact(x, a.attempts, y, b.attempts)
    return (
        f"Fisher's exact test, {label} `{first}` {x}/{a.attempts} vs `{second}` "
        f"{y}/{b.attempts} (two-sided): odds ratio {t.odds_ratio:.2f}, "
        f"p = {t.p_value:.4f}."
    )


RATE_BARS = (("valid", "valid"), ("cross_factor", "cross-factor entangled"))


def rates_plot(rows: Sequence[MethodAttempts], path: pathlib.Path, caption: str) -> None:
    """A PNG: each method's valid and cross-factor entanglement rates per attempt, with
    Wilson 95% intervals as error bars (matplotlib's Agg canvas, no pyplot state)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rows = [r for r in rows if r.attempts]
    assert rows, "no method has attempts to plot"
    fig = Figure(figsize=(7.0, 3.6), dpi=120)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    width = 0.8 / len(RATE_BARS)
    for i, (field, label) in enumerate(RATE_BARS):
        rates, low, high = [], [], []
        for r in rows:
            k = getattr(r, field)
            rate, (lo, hi) = k / r.attempts, wilson(k, r.attempts)
            rates.append(rate)
            low.append(rate - lo)
            high.append(hi - rate)
        xs = [j + (i - (len(RATE_BARS) - 1) / 2) * width for j in range(len(rows))]
        ax.bar(xs, rates, width, yerr=[low, high], capsize=3, label=label)
    ax.set_xticks(range(len(rows)), [f"{r.method}\n(n={r.attempts})" for r in rows])
    ax.set_ylim(0.0, 1.25)
    ax.set_yticks([0.0, 0.2, 0.4, 0.6, 0.8, 1.0])
    ax.set_ylabel("rate per attempt (Wilson 95%)")
    ax.legend(loc="upper center", ncol=len(RATE_BARS), fontsize=8, frameon=False)
    fig.text(0.01, 0.01, caption, fontsize=7, ha="left", va="bottom", wrap=True)
    fig.subplots_adjust(bottom=0.25)
    fig.savefig(path, metadata={"Software": None})
