"""`spark-jax perf`: performance ratios against the official CLRS implementation.

All figures come from one process on the same batches:
  - official: DeepMind's Haiku `triplet_gmpnn` in `clrs.models.BaselineModel` (its own jitted
    `feedback` and eager `init`), exactly how clrs/examples/run.py trains;
  - ours: our Flax port of `triplet_gmpnn` through the CLRS bridge in our pjit `Trainer`;
  - control: the official Haiku processor in our `Trainer` (isolates the processor's cost
    from the training-loop's).
Fixed cost = parameter init + the first pass over one batch per training length (which
compiles every step executable). Throughput = timed steps/s after that, blocking on each loss,
the three sides interleaved in blocks of 10 steps on the same batches.
Ratios are ours/official: throughput >= 1.0 and fixed cost <= 1.0 are the targets.

Feasibility: the median of several warm `check_program` runs of the seed (in the sandbox
worker, at the preset's sizes) against the wall time of one full `evaluate_program` of the
same seed under the preset; target >= 100x cheaper.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable

import jax
import numpy as np

from spark_jax import program as program_lib
from spark_jax.config import assets
from spark_jax.config.protocol import ProtocolConfig
from spark_jax.evaluation import bridge, data, seeds
from spark_jax.evaluation.train import Trainer

SEED_PROGRAM = assets.seed_program_path("triplet_gmpnn")


def _memory_mb(compiled) -> float | None:
    held = seeds.program_bytes(compiled)
    return None if held is None else held / 2**20


def _timed_loop(step: Callable[[Any, Any], Any], batches, rng_key) -> tuple[float, list[float]]:
    losses = []
    start = time.perf_counter()
    for fb in batches:
        rng_key, sub = jax.random.split(rng_key)
        losses.append(float(step(sub, fb)))
    return time.perf_counter() - start, losses


@dataclasses.dataclass
class _Side:
    """One contender: its fixed-cost figures, its step function and its compiled memory."""

    figures: dict[str, Any]
    step: Callable[[Any, Any], Any]
    memory_mb: Callable[[], float | None]
    run_s: float = 0.0
    steps: int = 0
    last_loss: float = float("nan")


def _setup_official(spec, warm, cfg: ProtocolConfig, seed: int) -> _Side:
    factory = bridge.official_processor_factory("triplet_gmpnn", cfg.use_ln, cfg.nb_triplet_fts)
    model = bridge.baseline_model(spec, warm[0], factory, cfg)
    key = jax.random.PRNGKey(seed)
    start = time.perf_counter()
    model.init(warm[0].features, seed + 1)
    jax.block_until_ready(model._device_params)
    init_s = time.perf_counter() - start
    warm_s, _ = _timed_loop(model.feedback, warm, key)

    def memory() -> float | None:
        compiled = model.jitted_feedback.lower(
            model._device_params, key, warm[-1], model._device_opt_state, 0
        ).compile()
        return _memory_mb(compiled)

    return _Side(
        dict(init_s=init_s, first_pass_s=warm_s, fixed_s=init_s + warm_s), model.feedback, memory
    )


def _setup_trainer(spec, warm, factory, cfg: ProtocolConfig, seed: int) -> _Side:
    trainer = Trainer(spec, warm[0], factory, cfg, devices=jax.local_devices()[:1])
    key = jax.random.PRNGKey(seed)
    start = time.perf_counter()
    trainer.init(warm[0].features, seed + 1)
    jax.block_until_ready(trainer.params)
    init_s = time.perf_counter() - start

    def step(k, fb):
        return trainer.step(k, fb)["loss"]

    warm_s, _ = _timed_loop(step, warm, key)

    def memory():
        return max(
            (m for m in map(_memory_mb, trainer._step_exes.values()) if m is not None), default=None
        )

    return _Side(
        dict(
            init_s=init_s,
            first_pass_s=warm_s,
            fixed_s=init_s + warm_s,
            compile_s=trainer.compile_stats.seconds,
        ),
        step,
        memory,
    )


def _interleaved(sides: dict[str, _Side], timed, seed: int, round_steps: int) -> None:
    """Times every side on the same batches, round-robin in blocks, so that load drifts on a
    shared machine hit all sides alike."""
    key = jax.random.PRNGKey(seed)
    for start in range(0, len(timed), round_steps):
        block = timed[start : start + round_steps]
        for side in sides.values():
            run_s, losses = _timed_loop(side.step, block, key)
            side.run_s += run_s
            side.steps += len(block)
            side.last_loss = losses[-1]
    for side in sides.values():
        side.figures.update(
            steps_per_s=side.steps / side.run_s,
            step_memory_mb=side.memory_mb(),
            final_loss=side.last_loss,
        )


def bench_feasibility(
    task: str, cfg: ProtocolConfig, seed: int, repeats: int = 5
) -> dict[str, Any]:
    """Warm feasibility check vs one full evaluation of the seed program."""
    from spark_jax.evaluation import evaluate
    from spark_jax.feasibility import checker as feasibility
    from spark_jax.feasibility import sandbox

    program = program_lib.read_program(SEED_PROGRAM)
    options = feasibility.CheckOptions.from_protocol(cfg)
    with sandbox.SandboxWorker() as worker:
        feasibility.check_program(program.source, options=options, worker=worker)  # warm-up
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            report = feasibility.check_program(program.source, options=options, worker=worker)
            times.append(time.perf_counter() - start)
        if not report.feasible:
            raise RuntimeError(f"seed program infeasible in bench: {report.reason}")
    start = time.perf_counter()
    evaluate.evaluate_program(program, task, cfg, seed)
    eval_s = time.perf_counter() - start
    check_s = float(np.median(times))
    return dict(
        check_s=check_s,
        check_runs=times,
        evaluation_s=eval_s,
        ratio_evaluation_over_check=eval_s / check_s,
    )


def _sides(spec, warm, cfg: ProtocolConfig, seed: int) -> dict[str, _Side]:
    """The three contenders, each initialised and through its first pass over `warm`."""
    program = program_lib.read_program(SEED_PROGRAM)
    ours = bridge.processor_factory(program, cfg.use_ln, cfg.nb_triplet_fts)
    haiku = bridge.official_processor_factory("triplet_gmpnn", cfg.use_ln, cfg.nb_triplet_fts)
    return {
        "official": _setup_official(spec, warm, cfg, seed),
        "ours": _setup_trainer(spec, warm, ours, cfg, seed),
        "control_haiku_in_our_trainer": _setup_trainer(spec, warm, haiku, cfg, seed),
    }


def _ratios(official: dict, ours: dict, control: dict) -> dict[str, float]:
    ratios = dict(
        throughput_ours_over_official=ours["steps_per_s"] / official["steps_per_s"],
        fixed_cost_ours_over_official=ours["fixed_s"] / official["fixed_s"],
        throughput_flax_over_haiku_same_trainer=ours["steps_per_s"] / control["steps_per_s"],
    )
    if ours["step_memory_mb"] and official["step_memory_mb"]:
        ratios["step_memory_ours_over_official"] = (
            ours["step_memory_mb"] / official["step_memory_mb"]
        )
    return ratios


def run_bench(
    task: str,
    cfg: ProtocolConfig,
    steps: int = 30,
    seed: int = 42,
    with_feasibility: bool = True,
    with_pipeline: bool = True,
    pipeline_candidates: int = 6,
) -> dict[str, Any]:
    """Trains official and ours on identical batches; returns figures and ratios."""
    task_data = data.make_task_data(task, cfg, seed)
    n_lengths = len(cfg.train_lengths)
    batches = [next(task_data.train) for _ in range(n_lengths + steps)]
    warm, timed = batches[:n_lengths], batches[n_lengths:]

    sides = _sides(task_data.spec, warm, cfg, seed)
    _interleaved(sides, timed, seed, round_steps=10)
    official, ours, control = (sides[k].figures for k in sides)
    ratios = _ratios(official, ours, control)
    report = dict(
        task=task,
        preset=cfg.name,
        steps=steps,
        backend=jax.default_backend(),
        devices=len(jax.local_devices()),
        official=official,
        ours=ours,
        control_haiku_in_our_trainer=control,
        ratios=ratios,
        targets=dict(
            throughput_ours_over_official=">= 1.0",
            fixed_cost_ours_over_official="<= 1.0",
            feasibility_evaluation_over_check=">= 100",
        ),
    )
    if with_pipeline:
        from spark_jax.perf.pipeline import bench_pipeline

        report["pipeline"] = bench_pipeline(candidates=pipeline_candidates, seed=seed)
        ratios["pipeline_evaluator_busy_fraction"] = report["pipeline"]["busy_fraction"]
        report["targets"]["pipeline_evaluator_busy_fraction"] = ">= 0.9"
    if with_feasibility:
        report["feasibility"] = bench_feasibility(task, cfg, seed)
        ratios["feasibility_evaluation_over_check"] = report["feasibility"][
            "ratio_evaluation_over_check"
        ]
    return report


def format_report(report: dict[str, Any]) -> str:
    lines = [
        f"spark-jax perf: {report['task']} / {report['preset']} preset, "
        f"{report['steps']} timed steps, backend {report['backend']}"
    ]
    for side in ("official", "ours", "control_haiku_in_our_trainer"):
        r = report[side]
        mem = f"{r['step_memory_mb']:.1f} MB" if r.get("step_memory_mb") else "n/a"
        lines.append(
            f"  {side:<30} steps/s {r['steps_per_s']:8.2f}   fixed {r['fixed_s']:7.2f} s "
            f"(init {r['init_s']:.2f} s)   step memory {mem}"
        )
    if "feasibility" in report:
        f = report["feasibility"]
        lines.append(
            f"  {'feasibility check (warm, median)':<30} {f['check_s']:.3f} s   "
            f"one {report['preset']} evaluation {f['evaluation_s']:.1f} s"
        )
    if "pipeline" in report:
        p = report["pipeline"]
        lines.append(
            f"  {'pipeline (2 in flight, loopback LLM)':<30} {p['candidates']} candidates, "
            f"LLM {p['llm_latency_per_proposal_s']:.1f} s/proposal, evaluation "
            f"{p['evaluation_per_candidate_s']:.1f} s/candidate"
        )
    for name, value in report["ratios"].items():
        target = report["targets"].get(name, "")
        lines.append(f"  {name:<42} {value:6.3f}  {target}")
    return "\n".join(lines)
