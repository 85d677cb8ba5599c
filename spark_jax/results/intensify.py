"""Writes results/intensify/README.md's generated parts from its two comparisons
(`data/without`, `data/with`): per search seed, the reported best's selection score, its test
score on a fresh seed, the drop, the device hours; the paired test of the drops
(`spark_jax.compare.intensification`). Every number, the answer included, comes from the
runs' databases.
"""

from __future__ import annotations

import collections
import pathlib
from collections.abc import Sequence

from spark_jax.compare import intensification
from spark_jax.results import readme
from spark_jax.util import labels, markdown

ANSWER_MARK = readme.answer_mark("intensify_table")


def _rows(found: intensification.DropComparison) -> list[list]:
    rows = []
    for arm, runs in (("without", found.without), ("with", found.with_)):
        for r in runs:
            rows.append(
                [arm, r.seed, f"{r.selection:.2f}", f"{r.test:.2f}", f"{r.drop:+.2f}"]
                + [r.evaluated, r.reevaluations, f"{r.device_hours:.2f}"]
            )
    return rows


def _answer(found: intensification.DropComparison) -> str:
    t = found.test
    w, i = found.mean(found.without, "drop"), found.mean(found.with_, "drop")
    hours = found.mean(found.without, "device_hours"), found.mean(found.with_, "device_hours")
    trainings = found.mean(found.without, "trainings"), found.mean(found.with_, "trainings")
    return (
        f"`{found.verdict}` at {len(found.seeds)} search seeds: the drop from the reported "
        f"best's selection score to its test score on a fresh seed was {w:+.2f} pp without "
        f"intensification and {i:+.2f} pp with it (mean over seeds; "
        f"{t.method or 'no test'}, p = {t.p:.3g}), at "
        f"{hours[0]:.2f} and {hours[1]:.2f} device hours per search and "
        f"{trainings[0]:.1f} and {trainings[1]:.1f} trainings (candidates and re-evaluations)."
    )


def settings_line(found: intensification.DropComparison) -> str:
    """What the searches recorded: preset, task, editor and machine, over both arms."""
    runs = (*found.without, *found.with_)
    presets = ", ".join(f"`{p}`" for p in sorted({r.preset for r in runs}))
    tasks = ", ".join(f"`{t}`" for t in sorted({r.task for r in runs}))
    machines = collections.Counter(r.machine or "not recorded" for r in runs)
    return (
        f"Searches (each run.db's run_meta): preset {presets}, task {tasks}; "
        f"{labels.editor_label([r.editor for r in runs])}; machines: "
        + "; ".join(f"{m} ({n} searches)" for m, n in sorted(machines.items()))
        + "."
    )


def write(out: pathlib.Path) -> pathlib.Path:
    """Rewrites OUT/README.md's generated block (one row per search of either arm) and its
    answer from OUT/data/without and OUT/data/with."""
    found = intensification.compare_drops(
        intensification.arm_runs(out / "data" / "without"),
        intensification.arm_runs(out / "data" / "with"),
    )
    head = ["arm", "search seed", "selection (%)", "test (%)", "drop (pp)", "candidates"]
    table = markdown.table([*head, "re-evaluations", "device h"], _rows(found))
    block = [settings_line(found), "", *table]
    readme.rewrite(out / "README.md", block, ANSWER_MARK, _answer(found))
    return out / "README.md"


def main(argv: Sequence[str] | None = None) -> int:
    """`[OUT]` (default results/intensify)."""
    print(f"wrote {write(readme.folder_arguments(argv, 'intensify', __doc__).out)}")
    return 0
