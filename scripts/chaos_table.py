"""The tables of results/chaos-at-smoke, from its runs.csv (scripts/chaos_at_smoke.py).

    python scripts/chaos_table.py [OUT] [--plot]     (OUT defaults to results/chaos-at-smoke)

Per task: the unperturbed run's OOD test score, the perturbed runs' mean, sample std, min
and max, the range over every run and the largest move from the unperturbed score, in
percentage points; then every run. Rewrites the README's part between `<!-- generated -->`
and `<!-- end generated -->`; `--plot` also draws OUT/spread.png. No number is typed here.
"""

from __future__ import annotations

import argparse
import csv
import pathlib
import statistics
import sys

from spark_jax.util import markdown

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "results" / "chaos-at-smoke"
BEGIN, END = "<!-- generated -->", "<!-- end generated -->"


def read_runs(out: pathlib.Path) -> dict[str, list[dict[str, str]]]:
    """task -> its rows, in perturbation order."""
    by_task: dict[str, list[dict[str, str]]] = {}
    with (out / "runs.csv").open(newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            by_task.setdefault(row["task"], []).append(row)
    return {t: sorted(rows, key=lambda r: int(r["perturbation"])) for t, rows in by_task.items()}


def _pp(x: float) -> str:
    return f"{100 * x:.2f}"


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
            task, _pp(base[0]), str(len(moved)), _pp(statistics.mean(moved)),
            _pp(statistics.stdev(moved)), _pp(min(moved)), _pp(max(moved)),
            _pp(max(every) - min(every)), _pp(max(abs(m - base[0]) for m in moved)),
        ])  # fmt: skip
    return markdown.table(SUMMARY_HEADER, rows_out)


def run_rows(by_task: dict[str, list[dict[str, str]]]) -> list[str]:
    return markdown.table(
        RUN_HEADER,
        [
            [task, r["perturbation"], r["scale"], r["max_param_change"],
             _pp(float(r["ood_test"])), _pp(float(r["val_score"])), r["train_seconds"],
             r["wall_seconds"]]
            for task, rows in by_task.items()
            for r in rows
        ],
    )  # fmt: skip


def generated(by_task: dict[str, list[dict[str, str]]]) -> str:
    first = next(iter(by_task.values()))[0]
    machines = sorted({r["machine"] for rows in by_task.values() for r in rows})
    return "\n".join(
        [
            f"Program `{first['program']}`, preset `{first['preset']}`, training seed "
            f"{first['seed']}; measured on {'; '.join(machines)}.",
            "",
            *summary_rows(by_task),
            "",
            "Every run:",
            "",
            *run_rows(by_task),
        ]
    )


def plot(by_task: dict[str, list[dict[str, str]]], path: pathlib.Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from spark_jax.util.labels import caption

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=str(DEFAULT_OUT))
    parser.add_argument("--plot", action="store_true", help="also draw OUT/spread.png")
    args = parser.parse_args(argv)
    out = pathlib.Path(args.out)
    by_task = read_runs(out)
    readme = out / "README.md"
    text = readme.read_text(encoding="utf-8")
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    readme.write_text(text[:start] + "\n" + generated(by_task) + "\n" + text[end:], "utf-8")
    if args.plot:
        plot(by_task, out / "spread.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
