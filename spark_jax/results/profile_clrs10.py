"""results/bench's timed clrs10 benchmark (`scripts/bench_clrs10.sh`: each `clrs10-*/` folder's
`segments.jsonl` and `benchmark.db`): the command's wall, the device time, and each job's wall
split into compile, training and scoring."""

from __future__ import annotations

import collections
import json
import pathlib

from spark_jax.benchmark.store import BenchmarkDB
from spark_jax.util import markdown


def jobs_of(results: list) -> dict[tuple[str, str], list]:
    """The benchmark's results grouped by job: (task, program key) -> its seeds' results."""
    jobs: dict[tuple[str, str], list] = collections.defaultdict(list)
    for r in results:
        jobs[(r.task, r.program_key)].append(r)
    return jobs


def _segments(folder: pathlib.Path) -> list[dict]:
    """The runs of `scripts/bench_clrs10.sh` on this folder: start, end (epoch s), commit."""
    lines = (folder / "segments.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _clrs10_jobs(results: list, labels: dict[str, str]) -> list[list[str]]:
    """One row per (task, program) job: its wall and where it went (the seeds of a job share
    one record's timings; each seed's row holds 1/K of the job's wall and of its step time,
    `Evaluation.per_seed`, so both are summed over the rows), then all jobs'."""
    jobs = jobs_of(results)
    task_time: collections.Counter = collections.Counter()
    for (task, _), rows in jobs.items():
        task_time[task] += sum(r.wall_seconds for r in rows)
    total = sum(task_time.values())
    n = 5  # job wall, compile wall, training loop, its steps, scoring
    sums = [0.0] * n
    body = []
    for (task, key), rows in sorted(jobs.items(), key=lambda kv: (-task_time[kv[0][0]], kv[0])):
        wall, ev = sum(r.wall_seconds for r in rows), rows[0].evaluation
        parts = [wall]
        if ev is not None:
            rate = ev.loop_steps_per_second
            steps = sum(r.evaluation.train_seconds for r in rows if r.evaluation)
            loop = ev.steps / rate if rate else steps
            parts += [ev.compile_wall_seconds or ev.compile_seconds, loop, steps,
                      ev.eval_seconds]  # fmt: skip
        sums = [x + y for x, y in zip(sums, parts + [0.0] * (n - len(parts)))]
        cells = [f"{x:.0f}" for x in parts] + [""] * (n - len(parts))
        body.append([task, labels.get(key, key), str(len(rows)), *cells,
                     f"{100 * wall / total:.1f}%"])  # fmt: skip
    shares = [f"{x:.0f} ({100 * x / total:.0f}%)" for x in sums]
    body.append(["**all jobs**", "", "", *shares, "100%"])
    return body


def clrs10_summary(root: pathlib.Path) -> str:
    """The timed clrs10 benchmark: the command's wall (its runs in `segments.jsonl` added up),
    the benchmark's device time, and each job's wall split into compile, training, scoring."""
    parts = []
    for folder in sorted(p for p in root.glob("clrs10-*") if p.is_dir()):
        segments = _segments(folder)
        wall = sum(s["end"] - s["start"] for s in segments)
        commits = ", ".join(dict.fromkeys(s["commit"] for s in segments))
        with BenchmarkDB.open_readonly(folder / "benchmark.db") as db:
            results, spec = db.results(), db.spec()
            labels = {p.key: p.label for p in db.programs()}
            running, device = db.running_seconds(), db.wall_seconds()
        expected = len(spec["tasks"]) * len(spec["seeds"]) * len(labels)
        target = " (target <= 45)" if len(spec["tasks"]) == 10 else ""  # the issue's, for clrs10
        machine = sorted({r.evaluation.machine for r in results if r.evaluation})
        scorings = {(r.task, r.program_key): r.evaluation.eval_seconds
                    for r in results if r.evaluation}  # fmt: skip
        slow = sum(seconds > 60 for seconds in scorings.values())
        parts += [
            f"`{folder.name}`: {len(spec['tasks'])} tasks x {len(spec['seeds'])} seeds x "
            f"{len(labels)} programs, preset {spec['preset']}; {len(results)} of {expected} "
            f"results landed; {', '.join(machine)}.",
            "",
            f"- **Wall {wall / 60:.1f} min**{target}: the command's {len(segments)} "
            f"run(s) added up, pauses between them left out (commits {commits}); the jobs ran "
            f"during {running / 60:.1f} min of it; device time {device / 60:.1f} min (the "
            f"seeds of a (program, task) train as one job, one worker).",
            f"- Jobs whose scoring (validation + test) took over 60 s: {slow} (target: none).",
            "",
            *markdown.table(
                ["task", "program", "seeds", "job wall s", "compile wall s",
                 "training loop s", "of it, the steps s", "scoring s",
                 "share of device time"],
                _clrs10_jobs(results, labels),
                align="llrrrrrrr",
            ),
            "",
        ]  # fmt: skip
    return "\n".join(parts).strip() or "(no clrs10-* folder)"


def clrs10_parts(folder: pathlib.Path) -> dict:
    """A timed clrs10 folder's figures: its wall, its jobs' summed parts, and per task the
    jobs' walls and scoring seconds (as `clrs10_summary` reads them)."""
    with BenchmarkDB.open_readonly(folder / "benchmark.db") as db:
        results, spec = db.results(), db.spec()
    jobs = jobs_of(results)
    sums = collections.Counter()
    by_task: dict[str, list[tuple[float, float]]] = collections.defaultdict(list)
    for (task, _), rows in jobs.items():
        wall, ev = sum(r.wall_seconds for r in rows), rows[0].evaluation
        steps = sum(r.evaluation.train_seconds for r in rows if r.evaluation)
        rate = ev.loop_steps_per_second
        sums.update(
            wall=wall, compile=ev.compile_wall_seconds or ev.compile_seconds,
            loop=ev.steps / rate if rate else steps, steps=steps, scoring=ev.eval_seconds,
        )  # fmt: skip
        by_task[task].append((wall, ev.eval_seconds))
    segments = _segments(folder)
    return dict(
        wall_min=sum(s["end"] - s["start"] for s in segments) / 60,
        tasks=spec["tasks"],
        seeds=len(spec["seeds"]),
        jobs=len(jobs),
        sums=sums,
        by_task=by_task,
    )
