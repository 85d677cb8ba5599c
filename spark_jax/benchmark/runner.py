"""Runs a benchmark: every (program, task, seed) job on an executor, stored as it lands.

`start_benchmark` writes the plan into a fresh directory; `resume_benchmark` reads it back.
Both go through `run_pending`, which submits only the jobs without a stored result, records
each result in its own transaction when its future resolves, and finally writes the tables.
A kill -9 loses only the jobs in flight; they run again on resume and nothing runs twice.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import json
import pathlib
from typing import Any, Callable, Sequence

from spark_jax.benchmark import rounds, tables
from spark_jax.benchmark import seeds as seeds_lib
from spark_jax.benchmark.plan import BenchmarkJob, BenchmarkProgram, PlanError, plan_jobs
from spark_jax.benchmark.store import BenchmarkDB
from spark_jax.config import protocol as protocol_lib
from spark_jax.config.evaluation import DEFAULT_SEED_MODE
from spark_jax.config.protocol import ProtocolConfig
from spark_jax.config.sections import ExecutorConfig
from spark_jax.jobs.executors import EvalJob, EvalResult, make_executor
from spark_jax.stats import sequential as sequential_lib

__all__ = [
    "DB_NAME",
    "BenchmarkSpec",
    "resume_benchmark",
    "run_pending",
    "seed_groups",
    "split_result",
    "start_benchmark",
]

DB_NAME = "benchmark.db"


@dataclasses.dataclass(frozen=True)
class BenchmarkSpec:
    """What a benchmark measures and where its jobs run (stored in its database).

    Attributes:
      tasks, seeds: the CLRS tasks and the evaluation seeds of every program.
      preset: the protocol preset (the whole protocol is stored beside it).
      baseline: label of the program the others are compared with (None: no comparison).
      executor: where jobs run ('local' workers or 'ray').
      timeout_s: per-job wall-clock limit (None: none).
      allow_seed_overlap: whether `seeds` may include seeds that a searched program's search
        trained with (refused by default: `seeds.check_disjoint`).
      seeds_together: the pending consecutive seeds of a (program, task) run as one job, one
        program (`evaluate_program(..., training=TrainingOptions(seeds=K))`; its worker
        falls back to one seed after another when the K-seed step would not fit in memory),
        each seed's result stored as its own job's; False: one job per seed.
      seed_mode: how that program runs the seed axis (`config.evaluation.SEED_MODES`):
        'map' (each seed's figures bit-identical to its job alone) or 'vmap' (batched;
        a benchmark stored before the field resumes with it, as it started).
      protocol: `preset` resolved, once, at the command's edge (the CLI, or `from_dict` on a
        resume); None: resolved here.
      sequential: None for the fixed-seed mode (every seed of `seeds` runs); else the
        sequential design's fields (`stats.sequential.Design`: alpha, delta, seeds_per_round,
        max_seeds, ...), `seeds` then being the seeds up to the cap, run round by round
        (`rounds.next_jobs`).
      check_identity: check each program against the baseline before training
        (`evaluation.identity`); a pair shown identical trains the baseline only (False in
        benchmarks stored before the check existed).
    """

    tasks: tuple[str, ...]
    seeds: tuple[int, ...]
    preset: str
    baseline: str | None = None
    executor: ExecutorConfig = ExecutorConfig()
    timeout_s: float | None = None
    allow_seed_overlap: bool = False
    seeds_together: bool = True
    protocol: ProtocolConfig | None = None
    seed_mode: str = DEFAULT_SEED_MODE
    sequential: dict[str, Any] | None = None
    check_identity: bool = True

    def __post_init__(self) -> None:
        if self.protocol is None:
            object.__setattr__(self, "protocol", protocol_lib.get_preset(self.preset))

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["protocol"] = self.protocol.to_dict()
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "BenchmarkSpec":
        """The stored spec; PlanError when its preset's protocol is not this version's."""
        protocol = protocol_lib.get_preset(data["preset"])
        if json.loads(json.dumps(protocol.to_dict())) != data["protocol"]:
            raise PlanError(
                f"preset {data['preset']!r} changed since this benchmark started; its stored "
                "protocol differs from this version's"
            )
        executor = ExecutorConfig(**data["executor"])
        return cls(
            tasks=tuple(data["tasks"]),
            seeds=tuple(int(s) for s in data["seeds"]),
            preset=data["preset"],
            baseline=data.get("baseline"),
            executor=executor,
            timeout_s=data.get("timeout_s"),
            allow_seed_overlap=bool(data.get("allow_seed_overlap", False)),
            seeds_together=bool(data.get("seeds_together", True)),
            protocol=protocol,
            seed_mode=data.get("seed_mode", "vmap"),
            sequential=data.get("sequential"),
            check_identity=bool(data.get("check_identity", False)),
        )


def _check_spec(spec: BenchmarkSpec, programs: Sequence[BenchmarkProgram]) -> None:
    if not spec.seeds:
        raise PlanError("no seeds: --seeds must be at least 1")
    if spec.sequential is not None:
        if spec.baseline is None:
            raise PlanError("the sequential mode compares with a baseline: give --baseline")
        try:
            design = sequential_lib.Design(**spec.sequential)
        except (TypeError, ValueError) as e:
            raise PlanError(f"sequential design: {e}") from None
        if len(spec.seeds) != design.max_seeds:
            raise PlanError(
                f"a sequential benchmark plans {design.max_seeds} seeds, got {len(spec.seeds)}"
            )
    if len(set(spec.seeds)) != len(spec.seeds):
        raise PlanError(f"repeated seeds: {spec.seeds}")
    labels = [p.label for p in programs]
    if spec.baseline is not None and spec.baseline not in labels:
        raise PlanError(f"baseline {spec.baseline!r} is not one of the programs: {labels}")
    try:
        seeds_lib.check_disjoint(spec.seeds, programs, allow=spec.allow_seed_overlap)
    except seeds_lib.SeedOverlapError as e:
        raise PlanError(str(e)) from None


def start_benchmark(
    out_dir: str | pathlib.Path,
    programs: Sequence[BenchmarkProgram],
    spec: BenchmarkSpec,
    *,
    progress: Callable[[BenchmarkJob, EvalResult, int, int], None] | None = None,
) -> pathlib.Path:
    """Plans a new benchmark in `out_dir` (which must not hold one), runs it, writes the
    tables; returns the path of the Markdown report."""
    _check_spec(spec, programs)
    plan_jobs(programs, spec.tasks, spec.seeds)  # refuses repeated labels / programs early
    out = pathlib.Path(out_dir)
    if (out / DB_NAME).exists():
        raise PlanError(f"{out} already holds a benchmark; continue it with --resume {out}")
    out.mkdir(parents=True, exist_ok=True)
    with BenchmarkDB(out / DB_NAME, create=True) as db:
        db.store_plan(spec.to_dict(), list(programs))
    return run_pending(out, progress=progress)


def resume_benchmark(
    out_dir: str | pathlib.Path,
    *,
    progress: Callable[[BenchmarkJob, EvalResult, int, int], None] | None = None,
    sequential: dict[str, Any] | None = None,
) -> pathlib.Path:
    """Runs the jobs of the benchmark in `out_dir` that have no stored result yet.

    `sequential` (a design's fields) continues a fixed-seed benchmark in the sequential mode:
    its stored seeds (consecutive, from its first) are the first seeds of the sequence, more
    follow up to the cap, and the identity check runs before them. Valid as a sequential design
    because its first look that spends alpha comes after the stored seeds
    (`stats.sequential`): the fixed run's own test spent nothing the design counts on, which
    the report states."""
    if sequential is not None:
        _continue_sequentially(pathlib.Path(out_dir), sequential)
    return run_pending(out_dir, progress=progress)


def _continue_sequentially(out: pathlib.Path, design: dict[str, Any]) -> None:
    with BenchmarkDB(out / DB_NAME) as db:
        stored, programs = db.spec(), db.programs()
        if stored.get("sequential"):
            if stored["sequential"] != design:
                raise PlanError(
                    f"{out} is already sequential with {stored['sequential']}; resume it without "
                    "new design flags"
                )
            return
        seeds = list(stored["seeds"])
        if seeds != list(range(seeds[0], seeds[0] + len(seeds))):
            raise PlanError(f"{out}: its seeds {seeds} are not consecutive; cannot extend them")
        spec = BenchmarkSpec.from_dict(stored)
        cap = int(design.get("max_seeds", sequential_lib.DEFAULT_MAX_SEEDS))
        if cap < len(seeds):
            raise PlanError(f"--max-seeds {cap} is below the {len(seeds)} seeds already stored")
        spec = dataclasses.replace(
            spec,
            seeds=tuple(range(seeds[0], seeds[0] + cap)),
            sequential=dict(design),
            check_identity=True,
        )
        _check_spec(spec, programs)
        stored_new = spec.to_dict()
        stored_new["continued_from_fixed"] = seeds
        db.replace_spec(stored_new)


def run_pending(
    out_dir: str | pathlib.Path,
    *,
    progress: Callable[[BenchmarkJob, EvalResult, int, int], None] | None = None,
) -> pathlib.Path:
    """Submits every job without a stored result, stores results as they land, writes the
    tables (`report.md`, `results.csv`, `plots/ood_by_task.png`); returns report.md's path."""
    out = pathlib.Path(out_dir)
    with BenchmarkDB(out / DB_NAME) as db:
        stored = db.spec()
        spec = BenchmarkSpec.from_dict(stored)
        programs = db.programs()
        cfg = spec.protocol
        rounds.check_identity(db, stored, programs)
        while True:
            pending = rounds.next_jobs(stored, programs, db.results(), db.identity())
            if not pending:
                break
            finished = len(db.done_job_ids())
            _run_jobs(
                db, pending, spec, cfg.to_dict(), finished + len(pending), finished, progress, out
            )
            tables.write_benchmark_report(db, out)  # each round's decisions, as they land
        return tables.write_benchmark_report(db, out)


def seed_groups(pending: Sequence[BenchmarkJob], together: bool) -> list[list[BenchmarkJob]]:
    """The jobs to submit: runs of consecutive seeds of one (program, task), in plan order
    of their first job (`together` False: one job each)."""
    if not together:
        return [[job] for job in pending]
    open_groups: dict[tuple[str, str], list[BenchmarkJob]] = {}
    groups: list[list[BenchmarkJob]] = []
    for job in pending:
        key = (job.program.key, job.task)
        group = open_groups.get(key)
        if group is not None and job.seed == group[-1].seed + 1:
            group.append(job)
        else:
            open_groups[key] = [job]
            groups.append(open_groups[key])
    return groups


def split_result(result: EvalResult, group: Sequence[BenchmarkJob]) -> list[EvalResult]:
    """One result per job of `group` from its one K-seed result (a failure is every seed's;
    each seed's wall time is its 1/K share)."""
    if len(group) == 1:
        return [result]
    k = len(group)
    evaluations = (
        result.evaluation.per_seed() if result.ok else [None] * k  # type: ignore[union-attr]
    )
    if len(evaluations) != k:
        raise RuntimeError(f"a {k}-seed job returned {len(evaluations)} seed results")
    return [
        dataclasses.replace(
            result, job_id=job.job_id, evaluation=ev, wall_seconds=result.wall_seconds / k
        )
        for job, ev in zip(group, evaluations)
    ]


def _run_jobs(db, pending, spec, protocol, total, finished, progress, out) -> None:
    options = {"log_dir": str(out / "logs")} if spec.executor.kind == "local" else {}
    executor = make_executor(spec.executor, out, **options)
    try:
        futures = {}
        for group in seed_groups(pending, spec.seeds_together):
            job, k = group[0], len(group)
            eval_job = EvalJob(
                job_id=job.job_id if k == 1 else f"{job.job_id}+{k - 1}",
                source=job.program.source,
                program_name=job.program.program_name,
                task=job.task,
                protocol=protocol,
                seed=job.seed,
                timeout_s=None if spec.timeout_s is None else spec.timeout_s * k,
                seeds=k,
                seed_mode=spec.seed_mode,
            )
            futures[executor.submit(eval_job)] = group
        for future in concurrent.futures.as_completed(futures):
            group = futures[future]
            landed = list(zip(group, split_result(future.result(), group)))
            db.record_all(landed)
            for job, result in landed:
                finished += 1
                if progress is not None:
                    progress(job, result, finished, total)
    finally:
        executor.shutdown(wait=False)
