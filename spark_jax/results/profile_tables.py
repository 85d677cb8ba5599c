"""results/bench's generated tables, each from the folder's JSON: the evaluation profiles'
summary (`profile-*.json`), `spark-jax bench --only-candidate --json` (`bench-*.json`: median
and range over every repeat), the feasibility check's parts (`feasibility-*.json`), workers
(`workers-*.jsonl`), the smoke identity checks with the stack divergence (`identity-*.json`,
`stack-divergence-*.json`) and the seed modes (`seed-modes-*.json`)."""

from __future__ import annotations

import json
import pathlib

from spark_jax.perf.summary import candidate_table
from spark_jax.util import markdown

_MODE_RUNS = {
    "alone": "one after another, each seed alone",
    "map": "one program, seeds mapped (default)",
    "vmap": "one program, seeds vmapped",
}


def part_seconds(report: dict, prefix: str) -> float:
    """Seconds of a profile's parts named `prefix...`, overlapped parts left out."""
    return sum(
        p["seconds"]
        for p in report["parts"]
        if p["name"].startswith(prefix) and not p["overlapped"]
    )


def _share(report: dict, prefix: str) -> str:
    total = report["estimated_total_s"]
    seconds = part_seconds(report, prefix)
    return f"{seconds:.0f} s ({100 * seconds / total:.1f}%)"


def summary(reports: dict[str, dict]) -> str:
    """The profiles side by side: where each evaluation's estimated time goes."""
    body = [
        [f"`{name}`", "yes" if r.get("buckets", True) else "no",
         f"{r['estimated_total_s']:.0f} s", _share(r, "compile"), _share(r, "train"),
         _share(r, "validation"), _share(r, "test"),
         f"{100 * r['padding']['test']['padding_fraction']:.1f}%"]
        for name, r in reports.items()
    ]  # fmt: skip
    header = ["profile", "buckets", "evaluation (est.)", "compile wall", "training",
              "validation", "test", "test padding"]  # fmt: skip
    return "\n".join(markdown.table(header, body, align="llrrrrrr"))


def bench_summary(root: pathlib.Path) -> str:
    """Every `bench-*.json` (one `spark-jax bench --json` each) as one table per file."""
    parts = []
    for path in sorted(root.glob("bench-*.json")):
        report = json.loads(path.read_text(encoding="utf-8"))
        c = report["candidate"]
        parts += [
            f"`{path.name}`: {c['repeats']} repeat(s), task {c['task']}, preset {c['preset']}, "
            f"JAX backend {c['backend']}, {report.get('label', '')}",
            "",
            *candidate_table([c]),
            "",
        ]
    return "\n".join(parts).strip() or "(no bench-*.json)"


def feasibility_summary(root: pathlib.Path) -> str:
    """Each `feasibility-*.json` (`scripts/profile_feasibility.py`): the whole checks, then the
    semantic stage's parts with the largest XLA compiles of the concrete init."""
    parts = []
    for path in sorted(root.glob("feasibility-*.json")):
        r = json.loads(path.read_text(encoding="utf-8"))
        parts += [
            f"`{path.name}`: preset {r['preset']}; {r['machine']}; {r['label']}",
            "",
            *markdown.table(
                ["whole check", "seconds", "semantic stage s", "feasible"],
                [
                    [c["program"], f"{c['seconds']:.2f}",
                     f"{c['stages'].get('semantic', 0):.2f}", c["feasible"]]
                    for c in r["whole_checks"]
                ],
                align="lrrl",
            ),
            "",
        ]  # fmt: skip
        semantic = []
        for c in r["semantic_parts"]:
            top = list(c["compile_s_by_function"].items())[:3]
            compiles = ", ".join(f"{name} {sec:.2f} s" for name, sec in top) or "none"
            semantic.append([
                c["program"], f"{c['abstract_s']:.2f}", f"{c['concrete_first_size_s']:.2f}",
                f"{c['concrete_large_size_s']:.2f}", compiles,
            ])  # fmt: skip
        header = ["semantic stage, replayed", "abstract s", "concrete (N) s",
                  "concrete (large N) s", "XLA compile during the concrete init (largest three)"]  # fmt: skip
        parts += [*markdown.table(header, semantic, align="lrrrl"), ""]
    return "\n".join(parts).strip() or "(no feasibility-*.json)"


def workers_summary(root: pathlib.Path) -> str:
    """Each `workers-*.jsonl` (`scripts/bench_workers.py`): a benchmark's wall per worker
    configuration, and its ratio to the one-worker run of the same repeat."""
    parts = []
    for path in sorted(root.glob("workers-*.jsonl")):
        rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]
        first = rows[0]
        labels: dict[str, list[str]] = {}
        for r in rows:
            labels.setdefault(r["label"], [])
            if str(r["repeat"]) not in labels[r["label"]]:
                labels[r["label"]].append(str(r["repeat"]))
        parts += [
            f"`{path.name}`: `spark-jax benchmark {first['program']} --tasks {first['tasks']} "
            f"--seeds 1 --preset {first['preset']}`; {first['machine']}.",
            "",
            *(f"- repeats {', '.join(reps)}: {label}" for label, reps in labels.items()),
            "",
        ]
        one = {r["repeat"]: r["wall_s"] for r in rows if r["workers"] == 1 and r["rc"] == 0}
        body = []
        for r in rows:
            ratio = f"{r['wall_s'] / one[r['repeat']]:.2f}" if r["repeat"] in one else markdown.DASH
            job = f"{r['job_seconds']:.0f}" if r["rc"] == 0 else f"failed (rc {r['rc']})"
            body.append([r["repeat"], r["config"], f"{r['wall_s']:.0f}", job, ratio])
        header = ["repeat", "configuration", "wall s", "job time s", "wall / one worker's"]
        parts += [*markdown.table(header, body, align="rlrrr"), ""]
    return "\n".join(parts).strip() or "(no workers-*.jsonl)"


def identity_summary(root: pathlib.Path) -> str:
    """Every `identity-*.json` (`scripts/smoke_identity.py`): each task's runs side by side."""
    parts = []
    for path in sorted(root.glob("identity-*.json")):
        report = json.loads(path.read_text(encoding="utf-8"))
        body = [
            [row["task"], str(row["seed"]), run, f"{100 * r['ood_score']:.4f}",
             f"{100 * r['val_score']:.4f}", str(r["best_step"]), repr(r["final_loss"])]
            for row in report["rows"]
            for run, r in row["runs"].items()
        ]  # fmt: skip
        same = "; ".join(
            f"{row['task']}: all runs {'bit-identical' if row['identical'] else 'not identical'}"
            + ("" if "buckets_identical" not in row else
               f", buckets {'bit-identical' if row['buckets_identical'] else 'DIFFERENT'}")
            for row in report["rows"]
        )  # fmt: skip
        parts += [
            f"`{path.name}`: `{report['program']}`, preset {report['preset']}; "
            f"{report['machine']}. {same}.",
            "",
            *markdown.table(
                ["task", "seed", "run", "OOD %", "best validation %", "best step", "final loss"],
                body,
                align="lrlrrrr",
            ),
            "",
        ]
    for path in sorted(root.glob("stack-divergence-*.json")):
        parts += _divergence(path)
    return "\n".join(parts).strip() or "(no identity-*.json)"


def seed_modes_summary(root: pathlib.Path) -> str:
    """Every `seed-modes-*.json` (`scripts/seed_modes.py`): K seeds alone, mapped, vmapped."""
    parts = []
    for path in sorted(root.glob("seed-modes-*.json")):
        r = json.loads(path.read_text(encoding="utf-8"))
        alone = r["runs"]["alone"]["per_seed"]
        body = []
        for mode, run in r["runs"].items():
            per = run["per_seed"]
            body.append([
                _MODE_RUNS[mode], f"{run['wall_s']:.0f}", f"{run['compile_wall_s']:.0f}",
                " / ".join(f"{100 * s['ood_score']:.2f}" for s in per),
                " / ".join(f"{s['final_loss']:.6f}" for s in per),
                markdown.DASH if mode == "alone" else ("yes" if per == alone else "no"),
            ])  # fmt: skip
        flags = f", XLA_FLAGS={r['xla_flags']}" if r.get("xla_flags") else ""
        parts += [
            f"`{path.name}`: `{r['program']}` on {r['task']}, seeds "
            f"{', '.join(map(str, r['seeds']))}, preset {r['preset']}; {r['machine']} "
            f"(JAX {r['jax']}, {r['backend']}{flags}); load average "
            f"{' / '.join(map(str, r['load_average']))}.",
            "",
            *markdown.table(
                [
                    "seeds trained",
                    "wall s",
                    "compile wall s",
                    "OOD % per seed",
                    "final loss per seed",
                    "every seed bit-identical to alone",
                ],
                body,
                align="lrrlll",
            ),  # fmt: skip
            "",
        ]
    return "\n".join(parts).strip() or "(no seed-modes-*.json)"


def _divergence(path: pathlib.Path) -> list[str]:
    """`scripts/stack_divergence.py`'s losses around the first step where they part."""
    r = json.loads(path.read_text(encoding="utf-8"))
    a, b, first = r["losses_alone"], r["losses_stack_of_one"], r["first_differing_step"]
    head = (
        f"`{path.name}`: `{r['program']}` on {r['task']}, seed {r['seed']}, preset "
        f"{r['preset']}; {r['machine']}. "
    )
    if first is None:
        return [head + f"The training losses are bit-identical over all {len(a)} steps.", ""]
    steps = sorted({*range(max(1, first - 1), min(len(a), first + 3) + 1), len(a)})
    body = [[str(i), repr(a[i - 1]), repr(b[i - 1]), f"{a[i - 1] - b[i - 1]:+.3g}"] for i in steps]
    return [
        head + f"The training losses of the seed alone and of a stack of that one seed are "
        f"bit-identical up to step {first - 1} and part at step {first} of {len(a)}:",
        "",
        *markdown.table(
            ["step", "loss, alone", "loss, stack of one", "difference"], body, align="rrrr"
        ),
        "",
    ]
