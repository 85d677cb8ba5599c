"""Per-candidate cost of `spark-jax perf`: one whole candidate, ours vs the official loop.

In one process, on identical batches (both sides draw from `make_task_data(task, cfg, seed)`):
  - official: DeepMind's `BaselineModel` with its Haiku `triplet_gmpnn`, trained as
    clrs/examples/run.py does (eager init, lazily jitted `feedback`/`predict`, sampling in the
    loop, best-validation parameters restored for the test);
  - ours: `train_and_score` on the Flax port (every executable compiled concurrently ahead of
    time, batches prefetched on a background thread).
Both follow the same schedule (validation at step 0 and every `eval_every`, then the test).
Figures per side: init, compile (ours: sum and wall of init, step, validation and test
compiles; official: its first training call per shape, which compiles; its eager init and its
prediction compiles fall in init and evaluation), steady-state steps/s (after one step per training length, data waits included),
evaluation and total wall. The sides alternate over `repeats` so that load drifts on a shared
machine hit both; every ratio is reported as its median and range over the repeats.

Seeds: K seeds as one program (`train_and_score_seeds`), its seed axis mapped (the default:
per-seed figures bit-identical to one-seed runs) and vmapped (batched), each against K
sequential single-seed candidates (K times the single candidate measured in the same repeat).
Feasibility: the check of an unseen program (the seed with a wider message layer, new shapes
every repeat, in a warm sandbox) against one evaluation of ours.
"""

from __future__ import annotations

import itertools
import statistics
import time
from typing import Any

import jax
import numpy as np

from spark_jax import program as program_lib
from spark_jax.config import assets
from spark_jax.config.evaluation import SEED_MODES
from spark_jax.config.protocol import ProtocolConfig
from spark_jax.evaluation import bridge, data, evaluate, seeds, training_loop
from spark_jax.evaluation.train import CompileStats
from spark_jax.perf.summary import TARGETS, meets

SEED_PROGRAM = assets.seed_program_path("triplet_gmpnn")


def _official_score(model, key, batches, order) -> float:
    """DeepMind's `BaselineModel.predict` over a fixed set, scored by `clrs.evaluate` in the
    set's order (as run.py scores)."""
    import clrs

    preds, outputs = [], []
    for fb in batches:
        key, sub = jax.random.split(key)
        preds.append(model.predict(sub, fb.features)[0])
        outputs.append(fb.outputs)
    cat = lambda *xs: np.concatenate(xs, axis=0)  # noqa: E731
    out = clrs.evaluate(
        data.restore_order(jax.tree_util.tree_map(cat, *outputs), order),
        data.restore_order(jax.tree_util.tree_map(cat, *preds), order),
    )
    return float(out["score"])


class _OfficialLearner:
    """DeepMind's `BaselineModel` as a one-seed learner of the evaluation's training loop
    (`training_loop.run`): its own jitted `feedback` and `predict`, eager `init`; its first
    training call per shape compiles inside the step, so no compile time is split off."""

    k = 1

    def __init__(self, model):
        self.model = model
        self.compile_stats = CompileStats()

    @property
    def params(self):
        return self.model._device_params

    def init(self, features, seeds):
        self.model.init(features, seeds[0])

    def step(self, keys, feedback) -> np.ndarray:
        return np.array([float(self.model.feedback(keys[0], feedback))])

    def evaluate(self, keys, batches, params=None, orders=None) -> list[float]:
        if params is not None:
            self.model.params = params
        return [_official_score(self.model, keys[0], batches, orders[0])]

    def snapshot(self, seeds):
        return {0: self.model.params}

    def place_best(self, best):
        return best[0]


def _official_candidate(task: str, cfg: ProtocolConfig, seed: int) -> dict[str, float]:
    start = time.perf_counter()
    task_data = data.make_task_data(task, cfg, seed)
    factory = bridge.official_processor_factory("triplet_gmpnn", cfg.use_ln, cfg.nb_triplet_fts)
    first = next(task_data.train)
    learner = _OfficialLearner(bridge.baseline_model(task_data.spec, first, factory, cfg))
    n_first = len(data.train_lengths(task, cfg))
    inputs = training_loop.Inputs.one_seed(task_data, seed, first.features, n_first)
    out = training_loop.run(learner, inputs, itertools.chain([first], task_data.train), cfg)
    steady = cfg.train_steps - n_first
    return dict(
        init_s=out.init_seconds,
        compile_s=out.first_pass_seconds,
        compile_wall_s=out.first_pass_seconds,
        steps_per_s=steady / out.loop_seconds if out.loop_seconds > 0 else float("nan"),
        eval_s=out.eval_seconds,
        total_s=time.perf_counter() - start,
        ood_score=out.test_scores[0],
    )


def _ours_candidate(task: str, cfg: ProtocolConfig, seed: int, factory) -> dict[str, float]:
    start = time.perf_counter()
    m, _ = evaluate.train_and_score(factory, task, cfg, seed)
    return dict(
        init_s=m["init_seconds"],
        compile_s=m["compile_seconds"],
        compile_wall_s=m["compile_wall_seconds"],
        steps_per_s=m["loop_steps_per_second"] or float("nan"),
        eval_s=m["eval_seconds"],
        total_s=time.perf_counter() - start,
        ood_score=m["ood_score"],
    )


def unseen_program(source: str, width: int) -> str:
    """The seed with its first message layer `width` times wider: new shapes, same contract."""
    line = "self.msg_mlp_1 = linear(h)"
    if line not in source:
        raise RuntimeError(f"bench: the seed program has no line {line!r} to widen")
    return source.replace(line, f"self.msg_mlp_1 = linear(h * {width})")


def _feasibility_unseen(cfg: ProtocolConfig, repeats: int) -> list[float]:
    from spark_jax.feasibility import checker as feasibility
    from spark_jax.feasibility import sandbox

    source = program_lib.read_program(SEED_PROGRAM).source
    options = feasibility.CheckOptions.from_protocol(cfg)
    times = []
    with sandbox.SandboxWorker() as worker:
        feasibility.check_program(source, options=options, worker=worker)  # imports warm
        for i in range(repeats):
            child = unseen_program(source, width=2 + i)
            t0 = time.perf_counter()
            report = feasibility.check_program(child, options=options, worker=worker)
            times.append(time.perf_counter() - t0)
            if not report.feasible:
                raise RuntimeError(f"bench: unseen program infeasible: {report.reason}")
    return times


def _spread(values: list[float]) -> dict[str, Any]:
    return dict(
        median=statistics.median(values), min=min(values), max=max(values), values=list(values)
    )


def bench_candidate(
    task: str, cfg: ProtocolConfig, seed: int = 42, repeats: int = 2, k: int = 4
) -> dict[str, Any]:
    """Runs the per-candidate comparison; returns per-side figures and ratio spreads."""
    program = program_lib.read_program(SEED_PROGRAM)
    factory = bridge.processor_factory(program, cfg.use_ln, cfg.nb_triplet_fts)
    runs: dict[str, list] = {
        "official": [],
        "ours": [],
        **{f"seeds_{mode}ped_s": [] for mode in SEED_MODES},
    }
    for r in range(repeats):
        runs["official"].append(_official_candidate(task, cfg, seed + r))
        runs["ours"].append(_ours_candidate(task, cfg, seed + r, factory))
        for mode in SEED_MODES if k > 1 else ():
            t0 = time.perf_counter()
            seeds.train_and_score_seeds(factory, task, cfg, list(range(seed, seed + k)), mode=mode)
            runs[f"seeds_{mode}ped_s"].append(time.perf_counter() - t0)
    feas = _feasibility_unseen(cfg, max(3, repeats))
    pairs = list(zip(runs["official"], runs["ours"]))
    ratios = {
        f"{name}_ours_over_official": _spread([o[name] / f[name] for f, o in pairs])
        for name in ("init_s", "compile_wall_s", "steps_per_s", "eval_s", "total_s")
    }
    ratios["compile_sum_ours_over_official"] = _spread(
        [o["compile_s"] / f["compile_s"] for f, o in pairs]
    )
    ratios["fixed_init_plus_compile_ours_over_official"] = _spread(
        [
            (o["init_s"] + o["compile_wall_s"]) / (f["init_s"] + f["compile_wall_s"])
            for f, o in pairs
        ]
    )
    ratios["total_wall_ours_over_official"] = ratios.pop("total_s_ours_over_official")
    ratios["steps_per_s_ours_over_official"] = ratios.pop("steps_per_s_ours_over_official")
    for mode in SEED_MODES if k > 1 else ():
        ratios[f"seeds_{mode}ped_over_sequential"] = _spread(
            [v / (k * o["total_s"]) for v, o in zip(runs[f"seeds_{mode}ped_s"], runs["ours"])]
        )
    one_eval = statistics.median(o["total_s"] for o in runs["ours"])
    ratios["feasibility_unseen_over_evaluation"] = _spread([t / one_eval for t in feas])
    return dict(
        task=task,
        preset=cfg.name,
        repeats=repeats,
        k=k,
        backend=jax.default_backend(),
        device_kind=jax.devices()[0].device_kind,
        runs=runs,
        feasibility_unseen_s=feas,
        ratios=ratios,
    )


def verdict(name: str, spread: dict[str, float]) -> str:
    """'MET' or 'NOT MET' for the median of a ratio against its target."""
    op, target = TARGETS[name]
    return f"{'MET' if meets(name, spread['median']) else 'NOT MET'} (target {op} {target:g})"


def format_candidate(report: dict[str, Any]) -> str:
    """The per-candidate section of the bench's text report, a verdict per target."""
    lines = [
        f"per-candidate cost: {report['task']} / {report['preset']}, {report['repeats']} "
        f"repeat(s), official and ours alternating, K={report['k']} seeds"
    ]
    for side in ("official", "ours"):
        runs = report["runs"][side]
        med = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
        lines.append(
            f"  {side:<9} init {med['init_s']:6.2f} s  compile sum {med['compile_s']:6.2f} s "
            f"wall {med['compile_wall_s']:6.2f} s  steps/s {med['steps_per_s']:7.2f}  "
            f"eval {med['eval_s']:6.2f} s  total {med['total_s']:7.2f} s"
        )
    for mode in SEED_MODES:
        walls = report["runs"].get(f"seeds_{mode}ped_s")
        if walls:
            lines.append(f"  K={report['k']} {mode}ped seeds: {statistics.median(walls):.2f} s")
    feas = report["feasibility_unseen_s"]
    lines.append(f"  feasibility of an unseen program: median {statistics.median(feas):.3f} s")
    for name, s in report["ratios"].items():
        note = verdict(name, s) if name in TARGETS else ""
        lines.append(f"  {name:<38} {s['median']:7.3f}  [{s['min']:.3f}, {s['max']:.3f}]  {note}")
    return "\n".join(lines)
