"""The tables of results/chaos-at-smoke, from its runs.csv (scripts/chaos_at_smoke.py).

Per task: the unperturbed run's OOD test score, the perturbed runs' mean, sample std, min
and max, the range over every run and the largest move from the unperturbed score, in
percentage points; then every run. `write` rewrites the README's part between
`<!-- generated -->` and `<!-- end generated -->` and its `**Answer.**` paragraph (after
ANSWER_MARK) and, asked to, draws OUT/spread.png. No number is typed here.
"""

from __future__ import annotations

import csv
import pathlib
import statistics
from collections.abc import Sequence

from spark_jax.results import readme
from spark_jax.util import markdown

ANSWER_MARK = readme.answer_mark("chaos_table")
# A move of the OOD test score at least this large (pp) from a 1e-7 nudge is called far.
FAR_PP = 1.0


def read_runs(out: pathlib.Path) -> dict[str, list[dict[str, str]]]:
    """task -> its rows, in perturbation order."""
    by_task: dict[str, list[dict[str, str]]] = {}
    with (out / "runs.csv").open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            by_task.setdefault(row["task"], []).append(row)
    return {t: sorted(rows, key=lambda r: int(r["perturbation"])) for t, rows in by_task.items()}


SUMMARY_HEADER = ["task", "unperturbed OOD (%)", "perturbed runs", "mean (%)", "std (pp)",
                  "min (%)", "max (%)", "range over all runs (pp)",
                  "largest move from unperturbed (pp)"]  # fmt: skip
RUN_HEADER = ["task", "perturbation", "scale", "largest parameter change", "OOD test (%)",
              "best validation (%)", "train s", "wall s"]  # fmt: skip


def summary_rows(by_task: dict[str, list[dict[str, str]]]) -> list[str]:
    rows_out: list[list[str]] = []
    for task, rows in by_task.items():
        base = [float(r["ood_test"]) for r in rows if r["perturbation"] == "0"]
        moved = [float(r["ood_test"]) for r in rows if r["perturbation"] != "0"]
        if len(base) != 1 or len(moved) < 2:
            note = f"incomplete: {len(base)} unperturbed, {len(moved)} perturbed"
            rows_out.append([task, note] + [""] * (len(SUMMARY_HEADER) - 2))
            continue
        every = base + moved
        rows_out.append([
            task, readme.pct(base[0]), str(len(moved)), readme.pct(statistics.mean(moved)),
            readme.pct(statistics.stdev(moved)), readme.pct(min(moved)), readme.pct(max(moved)),
            readme.pct(max(every) - min(every)), readme.pct(max(abs(m - base[0]) for m in moved)),
        ])  # fmt: skip
    return markdown.table(SUMMARY_HEADER, rows_out)


def run_rows(by_task: dict[str, list[dict[str, str]]]) -> list[str]:
    return markdown.table(
        RUN_HEADER,
        [
            [task, r["perturbation"], r["scale"], r["max_param_change"],
             readme.pct(float(r["ood_test"])), readme.pct(float(r["val_score"])), r["train_seconds"],
             r["wall_seconds"]]
            for task, rows in by_task.items()
            for r in rows
        ],
    )  # fmt: skip


def answer(by_task: dict[str, list[dict[str, str]]]) -> str:
    """The README's answer: per task, how far the nudged runs moved from the unperturbed
    one, every figure from runs.csv."""
    parts, largest = [], 0.0
    for task, rows in by_task.items():
        base = [float(r["ood_test"]) for r in rows if r["perturbation"] == "0"]
        moved = [float(r["ood_test"]) for r in rows if r["perturbation"] != "0"]
        if len(base) != 1 or not moved:
            continue
        move = max(abs(m - base[0]) for m in moved)
        largest = max(largest, move)
        parts.append(
            f"on `{task}` by up to {readme.pct(move)} pp (the {len(moved)} nudged runs spread from "
            f"{readme.pct(min(moved))}% to {readme.pct(max(moved))}% around the unperturbed "
            f"{readme.pct(base[0])}%)"
        )
    scale = next(r["scale"] for rows in by_task.values() for r in rows if r["perturbation"] != "0")
    change = max(
        float(r["max_param_change"]) for rows in by_task.values() for r in rows
        if r["perturbation"] != "0"
    )  # fmt: skip
    verdict = "Far" if 100 * largest >= FAR_PP else "Little"
    return (
        f"{verdict}. A nudge of N(0, ({scale})^2) to every initial parameter (the largest "
        f"stored change {change:.3g}), far below anything a user would call a change, moves "
        f"one run's OOD test score {'; and '.join(parts)}; table below. At the "
        f"`{next(iter(by_task.values()))[0]['preset']}` preset a single training run is "
        "chaotic: any one-seed comparison of two programs there measures this noise as much "
        "as the programs."
    )


def generated(by_task: dict[str, list[dict[str, str]]]) -> list[str]:
    """The README's generated block (between the markers): the summary, then every run."""
    first = next(iter(by_task.values()))[0]
    machines = sorted({r["machine"] for rows in by_task.values() for r in rows})
    return [
        f"Program `{first['program']}`, preset `{first['preset']}`, training seed "
        f"{first['seed']}; measured on {'; '.join(machines)}.",
        "",
        *summary_rows(by_task),
        "",
        "Every run:",
        "",
        *run_rows(by_task),
    ]


def plot(by_task: dict[str, list[dict[str, str]]], path: pathlib.Path) -> None:
    """Draws `path`: per task, every perturbed run's OOD test score and the unperturbed one."""
    from spark_jax.util.labels import caption

    plt = readme.pyplot()

    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    for i, rows in enumerate(by_task.values()):
        moved = [100 * float(r["ood_test"]) for r in rows if r["perturbation"] != "0"]
        base = [100 * float(r["ood_test"]) for r in rows if r["perturbation"] == "0"]
        ax.scatter([i] * len(moved), moved, s=22, alpha=0.7, label="perturbed" if i == 0 else None)
        ax.scatter([i] * len(base), base, s=70, marker="x", color="k",
                   label="unperturbed" if i == 0 else None)  # fmt: skip
    ax.set_xticks(range(len(by_task)), list(by_task))
    ax.set_xlim(-0.6, len(by_task) - 0.4)
    ax.set_ylabel("OOD test score (%)")
    first = next(iter(by_task.values()))[0]
    scale = next(r["scale"] for rows in by_task.values() for r in rows if r["perturbation"] != "0")
    ax.set_title(
        f"One {first['preset']} training run, initial parameters moved by N(0, {scale}^2)",
        fontsize=9,
    )
    ax.legend(fontsize=7)
    fig.subplots_adjust(bottom=0.16)
    caption(fig, f"{first['preset']} protocol; {first['program']}, training seed "
                 f"{first['seed']}; {first['machine']}; no editor, no LLM")  # fmt: skip
    fig.savefig(path, dpi=130, metadata={"Software": None})
    plt.close(fig)


def write(out: pathlib.Path, draw: bool = False) -> None:
    """Rewrites OUT/README.md's generated block and answer from OUT/runs.csv; with `draw`,
    draws OUT/spread.png as well."""
    by_task = read_runs(out)
    readme.rewrite(out / "README.md", generated(by_task), ANSWER_MARK, answer(by_task))
    if draw:
        plot(by_task, out / "spread.png")


def main(argv: Sequence[str] | None = None) -> int:
    """`[OUT] [--plot]` (default results/chaos-at-smoke)."""
    args = readme.folder_arguments(argv, "chaos-at-smoke", __doc__, plot="spread.png")
    write(args.out, args.plot)
    return 0
