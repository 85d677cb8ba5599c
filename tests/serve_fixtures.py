"""Run, benchmark and comparison directories built through the stores' own write APIs, for
the serve tests: a run whose LLM answer carries markup, a small benchmark, and a comparison
laid out as `spark-jax compare` writes it (its plan, one run directory per method x seed)."""

from __future__ import annotations

import json
import pathlib

import records

from spark_jax.benchmark.plan import BenchmarkJob, BenchmarkProgram
from spark_jax.benchmark.store import BenchmarkDB
from spark_jax.compare import PLAN_FILE, ComparePlan
from spark_jax.search.rundb import RunDB

HOSTILE_ANSWER = "<script>window.__pwned = 1</script><img src=x onerror=window.__pwned=2> done"
HOSTILE_DIRECTIVE = "Use <b>gated</b> messages & keep 'shapes'"
PARENT = "def f(x):\n    return x\n"
CHILD = "def f(x):\n    return x * 2\n"
DIFF = "--- parent\n+++ child\n@@ -1,2 +1,2 @@\n def f(x):\n-    return x\n+    return x * 2\n"


def make_run(run_dir: pathlib.Path) -> pathlib.Path:
    """A finished two-attempt run: attempt 0 feasible and scored, with an LLM call whose
    answer and reasoning hold HTML; attempt 1 infeasible."""
    meta = dict(
        task="bfs",
        preset="tiny",
        editor="llm",
        budget=2,
        max_attempts=4,
        config={"operator": {"mode": "spark", "factor_choice": "asr"}},
    )
    with RunDB.create(run_dir / "run.db", meta) as db:
        seed_id = db.insert_program(PARENT)
        db.record_evaluation(
            seed_id, None, records.job(task="bfs", preset="tiny"), records.result(0.4)
        )
        call = records.call(
            "sar",
            response=HOSTILE_ANSWER,
            reasoning="thinking </pre><script>alert(1)</script>",
            backend="openai",
            model="m1",
            is_llm=True,
        )
        feasible = records.proposal(
            0,
            parent_id=seed_id,
            child_source=CHILD,
            directive=HOSTILE_DIRECTIVE,
            calls=(call,),
            feasibility=records.report(True, diff=DIFF),
        )
        child_id = db.record_proposal(feasible)
        db.record_evaluation(
            child_id,
            0,
            records.job("a0", task="bfs", preset="tiny", source=CHILD),
            records.result(0.6, job_id="a0"),
            archive_state={  # the search loop's snapshot shape, archive part only
                "archive": {
                    "config": {"feature_dimensions": ["ood_acc", "macs"], "feature_bins": 10},
                    "records": [
                        {"id": seed_id, "ood_acc": 0.4, "macs": 100},
                        {"id": child_id, "ood_acc": 0.6, "macs": 100},
                    ],
                    "grids": [[[[4, 0], seed_id]], [[[6, 0], child_id]]],
                    "islands": [[[seed_id, False, [4, 0]]], [[child_id, False, [6, 0]]]],
                    "best_id": child_id,
                }
            },
        )
        db.record_proposal(records.proposal(1, "infeasible", parent_id=child_id))
        db.set_meta("finished_at", 1.0)
    return run_dir


def make_benchmark(bench_dir: pathlib.Path) -> pathlib.Path:
    programs = [
        BenchmarkProgram("official:mpnn", "k1", PARENT, "official:mpnn", "official"),
        BenchmarkProgram("mine", "k2", CHILD, "mine", "file mine.py"),
    ]
    spec = {"preset": "tiny", "tasks": ["bfs", "dfs"], "seeds": [0, 1], "baseline": "official:mpnn"}
    spec |= {"executor": {"kind": "local"}}  # and the protocol: what report.md's header names
    spec["protocol"] = dict(train_lengths=[4], train_steps=4, batch_size=4, hidden_size=8)
    spec["protocol"] |= dict(test_length=8, test_samples=8)
    bench_dir.mkdir(parents=True, exist_ok=True)
    with BenchmarkDB(bench_dir / "benchmark.db", create=True) as db:
        db.store_plan(spec, programs)
        for i, (p, task, seed) in enumerate(
            (p, t, s) for p in programs for t in spec["tasks"] for s in spec["seeds"]
        ):
            job = BenchmarkJob(p, task, seed)
            if i == 7:
                db.record(job, records.replace(records.result(None, "timeout", job.job_id)))
            else:
                db.record(job, records.result(0.1 * (i + 1), job_id=job.job_id, task=task))
    return bench_dir


SEQUENTIAL = {"alpha": 0.05, "delta": 5.0, "seeds_per_round": 3, "max_seeds": 9}


def make_sequential_benchmark(bench_dir: pathlib.Path) -> pathlib.Path:
    """A benchmark in the sequential mode (`--seeds auto`): `mine` shown identical to the
    baseline on dfs (only the baseline trains there), and a first round of 3 seeds landed on
    bfs, `mine` about 20 pp above the baseline."""
    programs = [
        BenchmarkProgram("official:mpnn", "k1", PARENT, "official:mpnn", "official"),
        BenchmarkProgram("mine", "k2", CHILD, "mine", "file mine.py"),
    ]
    spec = {"preset": "tiny", "tasks": ["bfs", "dfs"], "seeds": list(range(9))}
    spec |= {"baseline": "official:mpnn", "executor": {"kind": "local"}}
    spec["protocol"] = dict(train_lengths=[4], train_steps=4, batch_size=4, hidden_size=8)
    spec["protocol"] |= dict(test_length=8, test_samples=8)
    spec["sequential"] = SEQUENTIAL
    bench_dir.mkdir(parents=True, exist_ok=True)
    with BenchmarkDB(bench_dir / "benchmark.db", create=True) as db:
        db.store_plan(spec, programs)
        db.store_identity(
            {f"k2|{t}": {"task": t, "identical": t == "dfs", "reason": "x"} for t in spec["tasks"]}
        )
        for p, task, seed in [(p, "bfs", s) for p in programs for s in range(3)] + [
            (programs[0], "dfs", s) for s in range(3)
        ]:
            job = BenchmarkJob(p, task, seed)
            ood = 0.3 + 0.01 * (seed % 2) + (0.2 if p.label == "mine" else 0.0)
            db.record(job, records.result(ood, job_id=job.job_id, task=task, seed=seed))
    return bench_dir


# (method, seed) -> OOD of each attempt's evaluated child (None: an infeasible attempt).
COMPARE_MEMBERS = {
    ("spark", 0): [0.5, None, 0.7],
    ("spark", 1): [0.6, 0.55],
    ("fixed-act-sar", 0): [None, 0.45],
}


def make_member(run_dir: pathlib.Path, oods: list[float | None], finished: bool = True) -> None:
    """A run of the offline editor: the seed scored 0.4, then one attempt per entry."""
    config = {"editor": {"kind": "offline"}, "operator": {"mode": "spark"}}
    meta = dict(task="bfs", preset="tiny", budget=4, max_attempts=5, config=config)
    with RunDB.create(run_dir / "run.db", meta) as db:
        seed_id = db.insert_program(PARENT)
        ev = dict(task="bfs", preset="tiny")
        db.record_evaluation(seed_id, None, records.job(**ev), records.result(0.4, **ev))
        for k, ood in enumerate(oods):
            if ood is None:
                db.record_proposal(records.proposal(k, "infeasible", parent_id=seed_id))
                continue
            child = db.record_proposal(records.proposal(k, parent_id=seed_id))
            job = records.job(f"a{k}", source=f"y = {k}\n", **ev)
            db.record_evaluation(child, k, job, records.result(ood, job_id=f"a{k}", **ev))
        if finished:
            db.set_meta("finished_at", 1.0)


def make_comparison(
    cmp_dir: pathlib.Path,
    members: dict[tuple[str, int], list[float | None]] = COMPARE_MEMBERS,
    methods: tuple[str, ...] = ("spark", "fixed-act-sar"),
    seeds: tuple[int, ...] = (0, 1),
) -> pathlib.Path:
    """A comparison directory; (method, seed) pairs absent from `members` have no run yet."""
    base = {"task": "bfs", "preset": "tiny", "editor": {"kind": "offline"}}
    plan = ComparePlan(base, methods, seeds, budget=4, max_attempts=5)
    cmp_dir.mkdir(parents=True, exist_ok=True)
    (cmp_dir / PLAN_FILE).write_text(json.dumps(plan.to_dict()))
    for (method, seed), oods in members.items():
        make_member(cmp_dir / method / f"seed-{seed}", oods)
    return cmp_dir
