"""Writes the generated block of results/families/README.md from the folder's data: one run
database per (benchmark, seed program) in OUT/data/<benchmark>-<seed>/run.db, and
OUT/data/notes.json (why a benchmark has no run: e.g. its data could not be downloaded) and
OUT/data/run.json (command, commit, date, host), and each run's retest.json beside its
run.db (the verdict table). Every number comes from those files.

Usage: python scripts/families_table.py [results/families] [--plot]

`--plot` also draws OUT/retest.png: per row, each fresh seed's test score of the seed program
and of the best of search, joined (the pairs the verdict tests), the verdict in the title.
"""

from __future__ import annotations

import json
import pathlib
import sys

from spark_jax.benchmark import family_retest
from spark_jax.report import family_smoke
from spark_jax.util.files import replace_generated

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "results" / "families"
BEGIN = "<!-- generated -->"


def block(out: pathlib.Path) -> str:
    data = out / "data"
    meta = json.loads((data / "run.json").read_text(encoding="utf-8"))
    rows = family_smoke.rows_from_folder(data)
    retests = family_retest.retests_from_folder(data)
    return "\n".join(
        [
            f"Command: `{meta['command']}` at commit `{meta['commit']}`, {meta['date_utc']}; "
            f"host {meta['host']}; preset `{meta['preset']}`, budget {meta['budget']} evaluated "
            "programs (seed included), offline editor (not an LLM), search training seed 0.",
            "",
            "### Verdicts: best of search vs its seed program, fresh seeds, test part",
            "",
            *family_retest.retest_lines(retests),
            "",
            "### The searches' own record (training seed 0; one run per row, no verdict)",
            "",
            family_smoke.PROTOCOL_NOTE,
            "",
            *family_smoke.table_lines(rows),
        ]
    )


def plot(out: pathlib.Path, path: pathlib.Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from spark_jax.util.labels import caption

    meta = json.loads((out / "data" / "run.json").read_text(encoding="utf-8"))
    found, _ = family_retest.verdicts(family_retest.retests_from_folder(out / "data"))
    cols = 3
    rows = -(-len(found) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.0 * cols, 2.6 * rows + 0.5), squeeze=False)
    for ax, v in zip(axes.flat, found):
        r = v.retest
        for a, b in zip(r.seed_scores, r.best_scores):
            ax.plot([0, 1], [a, b], color="0.6", linewidth=0.8, marker="o", markersize=3)
        ax.set_xticks([0, 1], ["seed program", "best of search"], fontsize=7)
        ax.set_xlim(-0.3, 1.3)
        ax.set_ylabel(r.metric, fontsize=7)
        ax.tick_params(axis="y", labelsize=7)
        ax.set_title(f"{r.benchmark} / {r.seed_program}: {v.verdict}", fontsize=8)
    for ax in list(axes.flat)[len(found) :]:
        ax.set_visible(False)
    fig.suptitle("Seed program vs best of search, fresh seeds, test part (lines join a seed)",
                 fontsize=9)  # fmt: skip
    fig.tight_layout(rect=(0, 0.05, 1, 0.97))
    caption(fig, f"{meta['preset']} protocol; host {meta['host']}; offline editor (not an LLM); "
                 f"commit {meta['commit']}")  # fmt: skip
    fig.savefig(path, dpi=120, metadata={"Software": None})
    plt.close(fig)


def main(argv: list[str]) -> int:
    draw = "--plot" in argv
    argv = [a for a in argv if a != "--plot"]
    out = pathlib.Path(argv[0]) if argv else DEFAULT_OUT
    readme = out / "README.md"
    readme.write_text(
        replace_generated(readme.read_text(encoding="utf-8"), BEGIN, block(out)), encoding="utf-8"
    )
    print(readme)
    if draw:
        plot(out, out / "retest.png")
        print(out / "retest.png")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
