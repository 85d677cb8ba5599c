"""results/gpu's generated tables, from the JSON lines of scripts/gpu_measure.py: the machine
and versions, one evaluation of DeepMind's processor and of our port inside our evaluator,
workers sharing the GPU, K seeds vmapped, the paper preset's per-candidate wall and the cost
of the paper's protocol (projections, labelled as such: `project_candidate`), the `bench`
phase and whole searches on the device."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from spark_jax.perf.summary import candidate_table
from spark_jax.util import markdown

# What the measurements ran on (results/gpu/README.md, Install): the device machine's own JAX
# and CUDA plugin (named from the data) with an import stub for TensorFlow, not the README's
# pinned `pip install -e ".[cuda12]"`.
INSTALL = "with an import stub for TensorFlow, not the pinned `.[cuda12]` install"
OFFICIAL, OURS = "official:triplet_gmpnn", "processors/triplet_gmpnn.py"
PAPER_STEPS = 10_000
PAPER_EVAL_EVERY = 50
SEARCH_ATTEMPTS = 100
VALID_RATE = 0.55  # the SPARK paper's valid rate (0.5-0.6): attempts that reach training
TRANSFER_JOBS = 30 * 3  # the best program on 30 tasks x 3 seeds


def project_candidate(run: dict, steps: int = PAPER_STEPS) -> float:
    """Projected wall of one candidate trained `steps` steps, from a shorter timed run.

    The measured process wall (import, data, compile, the run's steps, its validations and
    test) plus the missing steps at the run's steady rate (data waits included) plus the
    missing validations at the run's mean scoring time per validation.
    """
    ev = run["evaluation"]
    done = ev["steps"]
    n_scorings = done // PAPER_EVAL_EVERY + 2  # validations at 0, every eval_every, and the test
    per_scoring = ev["eval_seconds"] / n_scorings
    missing = max(0, steps - done)
    return (
        run["process_wall_s"]
        + missing / ev["loop_steps_per_second"]
        + (missing / PAPER_EVAL_EVERY) * per_scoring
    )


def fmt(x: float, nd: int = 1) -> str:
    return f"{x:,.{nd}f}"


def env_table(env: dict) -> list[str]:
    v = env["versions"]
    packages = ", ".join(f"{k} {v[k]}" for k in sorted(v))
    return markdown.table(
        ["item", "value"],
        [
            ["device", f"{env['device_kind']} (nvidia-smi: {env['nvidia_smi']})"],
            ["host", f"{env['cpus']} CPU cores (XLA compiles on these)"],
            ["JAX backend", f"{env['backend']}, {env['n_devices']} device"],
            ["packages", f"{packages}; Python {env['python']}"],
            ["spark-jax commit", env["commit"]],
            ["install", install(env)],
        ],
    )


def check_table(checks: list[dict]) -> list[str]:
    by = {}
    measured = []
    for r in checks:
        ev = r["evaluation"]
        steps = ev["steps"]
        by[(r["preset"], steps, r["program"])] = r
        measured.append([
            f"{r['preset']} ({steps})", f"`{r['program']}`", fmt(r["process_wall_s"]),
            fmt(ev["compile_wall_seconds"]), fmt(ev["loop_steps_per_second"]),
            fmt(100 * ev["ood_score"], 2), fmt(ev["device_peak_mb"], 0),
        ])  # fmt: skip
    ratios = []
    for (preset, steps, program), ours in sorted(by.items()):
        if program != OURS or (preset, steps, OFFICIAL) not in by:
            continue
        off = by[(preset, steps, OFFICIAL)]
        eo, ef = ours["evaluation"], off["evaluation"]
        ratios.append([
            f"{preset} ({steps})", f"{ours['process_wall_s'] / off['process_wall_s']:.2f}",
            f"{eo['compile_wall_seconds'] / ef['compile_wall_seconds']:.2f}",
            f"{eo['loop_steps_per_second'] / ef['loop_steps_per_second']:.2f}",
            f"{eo['device_peak_mb'] / ef['device_peak_mb']:.2f}",
        ])  # fmt: skip
    return [
        *markdown.table(
            ["preset (steps)", "program", "process wall s", "compile wall s", "steady steps/s",
             "OOD %", "peak device MB"],
            measured,
        ),
        "",
        "Ours / official (same seed, same batches):",
        "",
        *markdown.table(
            ["preset (steps)", "process wall", "compile wall", "steady steps/s",
             "peak device memory"],
            ratios,
        ),
    ]  # fmt: skip


def workers_table(workers: list[dict], single: dict[tuple, float]) -> list[str]:
    body = []
    for r in sorted(workers, key=lambda r: (r["preset"], r["train_steps"] or 0, r["workers"])):
        evs = [x["evaluation"] for x in r["runs"] if x.get("evaluation")]
        base = single.get((r["preset"], r["train_steps"]))
        ratio = "" if base is None else f"{r['candidates_per_hour'] / base:.2f}"
        steps = evs[0]["steps"]
        body.append([
            f"{r['preset']} ({steps})", r["workers"],
            r["mem_fraction"] or "default (0.75, preallocated)",
            fmt(r["wall_s"]), fmt(r["candidates_per_hour"]), ratio,
            fmt(sum(e["compile_wall_seconds"] for e in evs) / len(evs)),
            fmt(sum(e["loop_steps_per_second"] for e in evs) / len(evs)),
            fmt(r.get("gpu_util_mean", float("nan"))),
            fmt(r.get("gpu_mem_used_max_mib", float("nan")), 0),
        ])  # fmt: skip
    return markdown.table(
        ["preset (steps)", "workers", "memory fraction each", "wall s", "candidates/h",
         "x 1 worker", "compile wall s (mean)", "steady steps/s per worker",
         "GPU util % (mean, nvidia-smi)", "GPU memory used max MiB"],
        body,
    )  # fmt: skip


def seeds_table(seeds: list[dict], single_smoke: dict | None) -> list[str]:
    body = []
    rows = sorted(seeds, key=lambda r: r["k"])
    if single_smoke is not None:
        rows = [dict(single_smoke, k=1)] + rows
    for r in rows:
        ev = r["evaluation"]
        seq = (
            ""
            if single_smoke is None
            else f"{r['process_wall_s'] / (r['k'] * single_smoke['process_wall_s']):.2f}"
        )
        body.append([
            r["preset"], r["k"], fmt(r["process_wall_s"]), fmt(r["k"] * 3600 / r["process_wall_s"]),
            seq, fmt(ev["compile_wall_seconds"]), fmt(ev["loop_steps_per_second"]),
            fmt(ev["device_peak_mb"], 0),
        ])  # fmt: skip
    return markdown.table(
        ["preset", "K seeds vmapped", "process wall s", "seed-runs/h", "vmapped / K sequential",
         "compile wall s", "steady steps/s", "peak device MB"],
        body,
    )  # fmt: skip


def worker_rates(ours: dict, workers: list[dict]) -> dict[int, float]:
    """Projected paper-preset candidates per hour by number of workers: one worker from our
    port's timed run, more from each shared-GPU run's slowest projected candidate."""
    rates = {1: 3600 / project_candidate(ours)}
    for r in workers:
        if r["preset"] == "paper":
            each = [project_candidate(x) for x in r["runs"] if x.get("evaluation")]
            rates[r["workers"]] = len(each) * 3600 / max(each)
    return rates


def projection(checks: list[dict], workers: list[dict]) -> list[str]:
    paper = {
        r["program"]: r
        for r in checks
        if r["preset"] == "paper" and r["evaluation"]["steps"] < PAPER_STEPS
    }
    if OURS not in paper or OFFICIAL not in paper:
        return ["(no paper-preset timing run in the data)"]
    ours, off = project_candidate(paper[OURS]), project_candidate(paper[OFFICIAL])
    out = [
        f"One dfs candidate at the paper preset ({PAPER_STEPS:,} steps), projected from the "
        f"{paper[OURS]['evaluation']['steps']}-step runs above: ours {fmt(ours / 60)} min, official "
        f"{fmt(off / 60)} min, ours/official **{ours / off:.2f}**: DeepMind's processor inside "
        "our evaluator, a processor comparison (the <= 0.5 target is for our loop against "
        "DeepMind's: the `bench` table below)."
    ]
    rates = worker_rates(paper[OURS], workers)
    projected = []
    for w in sorted(rates):
        per = 3600 * (1 if w == 1 else w) / rates[w]
        projected.append(
            [w, f"{fmt(per / 60)} min", fmt(rates[w], 2), f"{rates[w] / rates[1]:.2f}"]
        )
    out += [
        "",
        *markdown.table(
            ["workers on one H100", "projected wall per candidate (each)",
             "projected candidates/h", "x 1 worker"],
            projected,
        ),
    ]  # fmt: skip
    best = max(rates, key=rates.get)
    evaluated = SEARCH_ATTEMPTS * VALID_RATE
    search_h = evaluated / rates[best]
    transfer_h = TRANSFER_JOBS / rates[best]
    out += [
        "",
        f"**Projection, the paper's protocol on one H100** ({best} worker(s), dfs candidate cost "
        f"for every task): {SEARCH_ATTEMPTS} attempts at a valid rate of {VALID_RATE} = "
        f"{evaluated:.0f} trained candidates: **{fmt(search_h)} h**; then the best program on "
        f"30 tasks x 3 seeds = {TRANSFER_JOBS} trainings: **{fmt(transfer_h)} h**; in all "
        f"**{fmt(search_h + transfer_h)} GPU-hours** (multiply by your price per H100-hour for "
        f"the cost). With 1 worker: {fmt(evaluated / rates[1] + TRANSFER_JOBS / rates[1])} h. "
        "A projection, not a measured search: feasibility checks and LLM calls overlap the "
        "training and are left out; tasks other than dfs differ in cost (quickselect's test "
        "set is 64x larger).",
    ]
    return out


def bench_table(benches: list[dict]) -> list[str]:
    """`spark-jax bench --only-candidate`, one repeat per process: median and range over them."""
    done = [r for r in benches if r["rc"] == 0]
    if not done:
        return ["(no `bench` phase in the data)"]
    kinds = sorted({r["candidate"]["device_kind"] for r in done})
    seeds = ", ".join(str(r["seed"]) for r in done)
    return [
        f"{len(done)} repeats (training seeds {seeds}), each one `spark-jax bench --only-candidate "
        f"--repeats 1 --seed S --preset {done[0]['preset']}` process on {', '.join(kinds)} at "
        f"commit {done[0]['commit'] or 'unknown'}; task {done[0]['candidate']['task']}; "
        f"{len(benches) - len(done)} failed.",
        "",
        *candidate_table([r["candidate"] for r in done]),
    ]


def _trainings(results: Path, r: dict) -> int | None:
    """Programs the search trained: its evaluation rows (the seed and every candidate, from the
    run database copied beside the data) plus the final test's trainings."""
    db = results / f"search-{r['budget']}-{r['workers']}.db"
    if not db.exists():
        return None
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as con:
        [(n,)] = con.execute("SELECT COUNT(*) FROM evaluations").fetchall()
    return n + len(r.get("final_test") or {})


def search_table(results: Path, searches: list[dict]) -> list[str]:
    """Whole `spark-jax search` processes on the device: what a user's search costs there."""

    def pct(x) -> str:
        return markdown.DASH if x is None else f"{100 * x:.2f}"

    body = []
    for r in searches:
        by_role = {
            role: score for score, roles in (r.get("final_test") or {}).values() for role in roles
        }
        name = (
            "`spark-jax search` (the embedded default)"
            if r["embedded_default"]
            else f"budget {r['budget']}, {r['workers']} workers"
        )
        state = (
            "finished"
            if r["rc"] == 0
            else "cut short by the call's time limit"
            if r["cut_short"]
            else f"failed (rc {r['rc']})"
        )
        trained = _trainings(results, r)
        per_training = (
            fmt(r["process_wall_s"] / 60 / trained) if r["rc"] == 0 and trained else markdown.DASH
        )
        body.append([
            name, state, f"{r.get('attempts', 0)} / {r.get('feasible', 0)}",
            f"{r.get('evaluated', 0)} of {r['budget'] - 1}",
            markdown.DASH if trained is None else trained,
            fmt(r["process_wall_s"] / 60), per_training,
            fmt(r.get("gpu_util_mean", float("nan"))),
            fmt(r.get("gpu_mem_used_max_mib", float("nan")), 0),
            pct(by_role.get("seed")), pct(by_role.get("best")),
        ])  # fmt: skip
    commits = sorted({r["commit"] or "unknown" for r in searches})
    devices = sorted({r.get("device") or "device not recorded" for r in searches})
    return [
        "Each row is one `spark-jax search` process timed whole (imports, the seed's evaluation, "
        "proposals, feasibility checks, training, and the final test, which trains the seed and "
        f"the best again and scores them on the test set) at commit {', '.join(commits)}, JAX "
        f"{searches[0]['jax']}, on {'; '.join(devices)}; dfs, smoke, the offline rule-based "
        "editor (no LLM), selection on `ood_val`, search seed 0. A budget B is B - 1 candidates "
        "and the seed. The test scores are one 300-step run each (chaotic at this length): they "
        "show the search ran to its end, not that its best is better than its seed.",
        "",
        *markdown.table(
            ["search", "state", "attempts / feasible", "candidates evaluated", "trainings",
             "process wall min", "min per training", "GPU util % (mean)",
             "GPU memory used max MiB", "seed: OOD test %", "best: OOD test %"],
            body,
        ),
    ]  # fmt: skip


def install(env: dict) -> str:
    v = env["versions"]
    plugins = [f"{k} {v[k]}" for k in sorted(v) if k.startswith("jax-cuda")]
    return f"JAX {v.get('jax', '?')} ({', '.join(plugins) or 'no CUDA plugin recorded'}) {INSTALL}"
