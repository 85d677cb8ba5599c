"""Writes the generated block of results/families/README.md from the folder's data: one run
database per (benchmark, seed program) in OUT/data/<benchmark>-<seed>/run.db, and
OUT/data/notes.json (why a benchmark has no run: e.g. its data could not be downloaded) and
OUT/data/run.json (command, commit, date, host), and each run's retest.json beside its
run.db (the verdict table). Every number comes from those files.

`plot` draws OUT/retest.png: per row, each fresh seed's test score of the seed program and
of the best of search, joined (the pairs the verdict tests), the verdict in the title.
"""

from __future__ import annotations

import json
import pathlib
from collections.abc import Sequence

from spark_jax.benchmark import family_retest
from spark_jax.report import family_smoke
from spark_jax.report.accounting import find_meta, read_meta
from spark_jax.results import readme
from spark_jax.search.rundb import RunDB
from spark_jax.stats import significance

ANSWER_MARK = readme.answer_mark("families_table")


def editors(data: pathlib.Path) -> str:
    """The runs' editor as their databases record it: 'offline editor (not an LLM)' when
    every run used the offline rule-based editor."""
    kinds = set()
    for path in sorted(data.glob("*/run.db")):
        with RunDB.open(path) as db:
            kinds.add(str(find_meta(read_meta(db)[0], "editor.kind") or "not recorded"))
    if kinds == {"offline"}:
        return "offline editor (not an LLM)"
    return "editor " + ", ".join(f"`{k}`" for k in sorted(kinds))


def _names(rows) -> str:
    return ", ".join(f"`{v.retest.benchmark}` {v.retest.seed_program}" for v in rows)


def answer(out: pathlib.Path) -> str:
    """The README's answer from the verdict table and the notes: per benchmark, which seed
    programs the best of search beats (or loses to) after Holm, where the statistics cannot
    tell, which searches kept their seed, and which benchmarks did not run and why."""
    data = out / "data"
    found, _ = family_retest.verdicts(family_retest.retests_from_folder(data))
    tested = [v for v in found if v.verdict in (significance.WIN, significance.LOSS,
                                                  significance.CANNOT_TELL)]  # fmt: skip
    sentences = []
    for word, verb in ((significance.WIN, "beats"), (significance.LOSS, "is below")):
        rows = [v for v in found if v.verdict == word]
        by_bench: dict[str, list] = {}
        for v in rows:
            by_bench.setdefault(v.retest.benchmark, []).append(v)
        for bench, vs in by_bench.items():
            total = sum(v.retest.benchmark == bench for v in found)
            better = [
                sum((b > a) == (verb == "beats") and b != a
                    for a, b in zip(v.retest.seed_scores, v.retest.best_scores))
                for v in vs
            ]  # fmt: skip
            n = {len(v.retest.seeds) for v in vs}
            seeds = (
                f"on every one of {n.pop()} fresh seeds"
                if len(n) == 1 and all(k == len(vs[0].retest.seeds) for k in better)
                else "on "
                + ", ".join(f"{k} of {len(v.retest.seeds)}" for k, v in zip(better, vs))
                + " fresh seeds"
            )
            metric = vs[0].retest.metric
            sentences.append(
                f"On `{bench}`, the best of search {verb} its seed program for "
                f"{len(vs)} of the {total} seed programs ({', '.join(v.retest.seed_program for v in vs)}: "
                f"{'higher' if verb == 'beats' else 'lower'} test {metric} {seeds}, a "
                f"{word} after Holm over the {len(tested)} tested rows)"
            )
    unsure = [v for v in found if v.verdict == significance.CANNOT_TELL]
    if unsure:
        sentences.append(f"For {_names(unsure)} the statistics cannot tell")
    kept = [v for v in found if v.verdict == "kept its seed"]
    if kept:
        sentences.append(f"The searches of {_names(kept)} kept their seed (nothing to test)")
    unfinished = [v for v in found if v.verdict == "unfinished"]
    if unfinished:
        sentences.append(f"The retests of {_names(unfinished)} are unfinished")
    notes_path = data / "notes.json"
    notes = json.loads(notes_path.read_text(encoding="utf-8")) if notes_path.is_file() else {}
    if notes:
        names = ", ".join(f"`{name}`" for name in notes)
        why = (
            "their data is not cached and its download failed on this machine, which has no "
            "network (their rows carry the one-line error; no data is substituted)"
            if all("download" in note and "failed" in note for note in notes.values())
            else "their rows carry the one-line reason"
        )
        sentences.append(f"{names} did not run: {why}")
    return ". ".join(sentences) + "."


def block(out: pathlib.Path) -> list[str]:
    """The README's generated block (between the markers): the verdicts, then each search's
    own record."""
    data = out / "data"
    meta = json.loads((data / "run.json").read_text(encoding="utf-8"))
    rows = family_smoke.rows_from_folder(data)
    retests = family_retest.retests_from_folder(data)
    return [
        f"Command: `{meta['command']}` at commit `{meta['commit']}`, {meta['date_utc']}; "
        f"host {meta['host']}; preset `{meta['preset']}`, budget {meta['budget']} evaluated "
        f"programs (seed included), {editors(data)}, search training seed 0.",
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


def plot(out: pathlib.Path, path: pathlib.Path) -> None:
    """Draws `path`: each row's fresh-seed pairs, seed program against best of search."""
    from spark_jax.util.labels import caption

    plt = readme.pyplot()

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


def write(out: pathlib.Path, draw: bool = False) -> list[pathlib.Path]:
    """Rewrites OUT/README.md's generated block and answer (and with `draw`, OUT/retest.png)
    from OUT/data; returns the files written."""
    readme.rewrite(out / "README.md", block(out), ANSWER_MARK, answer(out))
    if not draw:
        return [out / "README.md"]
    plot(out, out / "retest.png")
    return [out / "README.md", out / "retest.png"]


def main(argv: Sequence[str] | None = None) -> int:
    """`[OUT] [--plot]` (default results/families): writes OUT and prints what it wrote."""
    args = readme.folder_arguments(argv, "families", __doc__, plot="retest.png")
    for path in write(args.out, args.plot):
        print(path)
    return 0
