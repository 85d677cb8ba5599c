"""Train and score one candidate on one CLRS task under a protocol preset.

The loop follows clrs/examples/run.py: cycle the training samplers, validate every
`eval_every` steps (and at step 0), keep the best-validation parameters in memory, and score
them on the OOD test set. The result is an immutable `Evaluation` (`program.outcome`, the
record the job side carries too). Training only: running this as a job on a worker process
or Ray, and the result cache, are `spark_jax.jobs`, which reaches it through the CLRS
family's plug-in; nothing here imports the job side.
"""

from __future__ import annotations

import itertools
import resource
import sys
from typing import Any, Callable

import jax

from spark_jax import program as program_lib
from spark_jax.config.protocol import ProtocolConfig
from spark_jax.evaluation import bridge, data, training_loop
from spark_jax.evaluation.prefetch import Prefetcher
from spark_jax.evaluation.train import Trainer, count_params
from spark_jax.evaluation.training_options import TrainingOptions
from spark_jax.evaluation.training_options import seed_tuple as seed_tuple  # callers' old name
from spark_jax.families import Evaluation
from spark_jax.program import macs
from spark_jax.util import labels


def _peak_rss_mb() -> float | None:
    try:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    except (ValueError, OSError):
        return None
    return peak / 1024.0 if sys.platform != "darwin" else peak / 2**20


def _device_peak_mb(devices) -> float | None:
    peaks = []
    for d in devices:
        try:
            stats = d.memory_stats()
        except Exception:  # noqa: BLE001 - backends without stats
            stats = None
        if stats and "peak_bytes_in_use" in stats:
            peaks.append(stats["peak_bytes_in_use"])
    return max(peaks) / 2**20 if peaks else None


def train_and_score(
    processor_factory: Callable,
    task: str,
    cfg: ProtocolConfig,
    seed: int = 42,
    *,
    devices=None,
    progress: Callable[[int, float], None] | None = None,
    cascade: tuple[float, float] | None = None,
    precompile: bool = True,
    prefetch: int = 2,
    buckets: bool = True,
) -> tuple[dict[str, float], Trainer]:
    """run.py's loop for any CLRS processor factory; returns (metrics, trainer).

    `cascade` = (threshold, fraction): after the first `training_loop.cascade_stage_steps`
    steps (validated at the boundary) a candidate whose best validation score is below
    `threshold` stops training and is scored as it stands; the metrics record the stage and the verdict.
    `precompile`: compile every executable concurrently before the first step (else lazily,
    one after another). `prefetch`: batches sampled and placed ahead on a background thread
    (0: sample in the loop). `buckets`: score validation and test in hint-length buckets
    (`data.bucket_batches`). None of them changes the result for a given seed.
    """
    task_data = data.make_task_data(task, cfg, seed, buckets=buckets)
    # One batch per training length: they fix every step shape (compiled ahead of time).
    lookahead = [next(task_data.train) for _ in data.train_lengths(task, cfg)]
    first = lookahead[0]
    trainer = Trainer(task_data.spec, first, processor_factory, cfg, devices=devices)
    source = itertools.chain(lookahead, task_data.train)
    if prefetch:
        source = Prefetcher(source, depth=prefetch, transform=trainer.shard_feedback)
    try:
        if precompile:
            trainer.precompile(
                first.features, lookahead, task_data.val_batches + task_data.test_batches
            )
        return _train_loop(
            trainer, task_data, first, len(lookahead), source, cfg, seed, progress, cascade
        )
    finally:
        if prefetch:
            source.close()


def _train_loop(trainer, task_data, first_host, n_first, batches, cfg, seed, progress, cascade):
    learner = training_loop.OneSeed(trainer)
    inputs = training_loop.Inputs.one_seed(task_data, seed, first_host.features, n_first)
    out = training_loop.run(learner, inputs, batches, cfg, progress, cascade)
    best_params = out.best_params[0]
    metrics = dict(
        ood_score=out.test_scores[0],
        val_score=out.best_val[0],
        best_step=out.best_step[0],
        params=count_params(best_params, processor_only=True),
        model_params=count_params(best_params),
        **out.timings(learner, n_first),
        final_loss=float(out.losses[0]),
        peak_rss_mb=_peak_rss_mb(),
        device_peak_mb=_device_peak_mb(trainer.devices),
        n_devices=len(trainer.devices),
        **out.cascade,
    )
    return metrics, trainer


def merge_seed_metrics(per_seed: list[dict[str, Any]]) -> dict[str, Any]:
    """One record's metrics from per-seed ones: means, per-seed scores, shared timings."""
    first = per_seed[0]
    k = len(per_seed)
    out = {key: v for key, v in first.items() if key != "seed"}
    out.update(
        ood_score=sum(m["ood_score"] for m in per_seed) / k,
        val_score=sum(m["val_score"] for m in per_seed) / k,
        final_loss=sum(m["final_loss"] for m in per_seed) / k,
        seeds=tuple(m["seed"] for m in per_seed),
        seed_scores=tuple(m["ood_score"] for m in per_seed),
        seed_val_scores=tuple(m["val_score"] for m in per_seed),
        seed_best_steps=tuple(m["best_step"] for m in per_seed),
        seed_final_losses=tuple(m["final_loss"] for m in per_seed),
        peak_rss_mb=_peak_rss_mb(),
        device_peak_mb=_device_peak_mb(jax.local_devices()[:1]),
    )
    return out


# `Evaluation.seed_mode` of K seeds that trained one after another because their one program
# would not fit in memory (each seed's figures are then its lone run's).
SEQUENTIAL = "sequential"


def _train(
    factory: Callable, task: str, cfg: ProtocolConfig, seed: int, options: TrainingOptions
) -> tuple[dict[str, Any], int]:
    """(metrics, first seed): one seed's run, or K seeds as one program run in
    `options.seed_mode` (merged; one seed after another when the K-seed program would not fit
    in memory); the metrics say where they were measured."""
    seed_list, devices, progress = options.seed_list(seed), options.devices, options.progress
    if len(seed_list) == 1:
        one = dict(devices=devices, progress=progress, cascade=options.cascade)
        metrics, _ = train_and_score(factory, task, cfg, seed_list[0], **one)
        return dict(metrics, machine=labels.measured_on()), seed_list[0]
    if options.cascade is not None:
        raise ValueError("a cascade cannot be combined with several seeds")
    from spark_jax.evaluation import seeds as seeds_lib

    seed_mode = options.seed_mode
    try:
        per_seed = seeds_lib.train_and_score_seeds(
            factory, task, cfg, seed_list, devices=devices, progress=progress, mode=seed_mode
        )
    except seeds_lib.SeedsDoNotFit as e:  # memory says so: one seed after another
        print(f"note: {e}; training them one after another", file=sys.stderr)
        per_seed = [
            dict(train_and_score(factory, task, cfg, s, devices=devices)[0], seed=s)
            for s in seed_list
        ]
        seed_mode = SEQUENTIAL  # the record says how the seeds ran, not what was asked
    metrics = dict(merge_seed_metrics(per_seed), seed_mode=seed_mode)
    return dict(metrics, machine=labels.measured_on()), seed_list[0]


def _measure(
    factory: Callable,
    task: str,
    cfg: ProtocolConfig,
    seed: int,
    training: TrainingOptions | None,
    name: str,
    sha256: str,
    step_macs: int,
) -> Evaluation:
    """The `Evaluation` of the processor `factory` builds (program `name`, source hash
    `sha256`, `step_macs` per processor step): trained and scored by `_train` as `training`
    says (None: the defaults of `TrainingOptions`)."""
    options = TrainingOptions() if training is None else training
    metrics, seed = _train(factory, task, cfg, seed, options)  # keyed as the stored form
    return Evaluation.from_dict(
        dict(
            task=task,
            preset=cfg.name,
            seed=seed,
            program=name,
            program_sha256=sha256,
            macs=step_macs,
            macs_nodes=cfg.macs_nodes,
            **metrics,
        )
    )


def check_output_shapes(flax_proc, hidden: int, nodes: int = 5, batch: int = 2) -> None:
    """Abstractly runs init + apply and raises ProgramError if the outputs break the contract."""
    x = macs.reference_inputs(nodes, hidden, batch)

    def run(kw):
        variables = flax_proc.init(jax.random.PRNGKey(0), **kw)
        return flax_proc.apply(variables, **kw)

    try:
        out = jax.eval_shape(run, x)
        bridge.check_processor_output(out, batch, nodes, hidden)
    except Exception as e:  # noqa: BLE001 - any tracing failure is the program's fault
        raise program_lib.ProgramError(f"processor breaks the CLRS contract: {e}") from e


def evaluate_program(
    program: program_lib.Program,
    task: str,
    cfg: ProtocolConfig,
    seed: int = 42,
    *,
    training: TrainingOptions | None = None,
) -> Evaluation:
    """Trains `program`'s processor on `task` under `cfg` and scores it, as `training` says
    (None: the evaluation seed alone on JAX's devices; see `TrainingOptions`).

    `training.seeds`: K > 1 (seeds `seed, seed+1, ...`) or a tuple of seeds trains them all
    as one program (`seeds.train_and_score_seeds`, its seed axis run as `training.seed_mode`
    says); the record then carries per-seed scores. `training.cascade`: (threshold, fraction)
    of a first training stage, see `train_and_score`.
    """
    data.check_task(task)
    module = program_lib.load_module(program)
    factory = bridge.module_processor_factory(module, cfg.use_ln, cfg.nb_triplet_fts)
    flax_proc = program_lib.build_flax_processor(
        module, cfg.hidden_size, cfg.use_ln, cfg.nb_triplet_fts
    )
    check_output_shapes(flax_proc, cfg.hidden_size)
    step_macs = macs.flax_processor_macs(flax_proc, cfg.macs_nodes, cfg.hidden_size)
    return _measure(factory, task, cfg, seed, training, program.name, program.sha256, step_macs)


def evaluate_official(
    kind: str,
    task: str,
    cfg: ProtocolConfig,
    seed: int = 42,
    *,
    training: TrainingOptions | None = None,
) -> Evaluation:
    """Trains DeepMind's Haiku processor `kind` (e.g. 'triplet_gmpnn') the same way.

    Same data, seeds, trainer and scoring as `evaluate_program`: the reference row for a port
    or a searched program.
    """
    data.check_task(task)
    factory = bridge.official_processor_factory(kind, cfg.use_ln, cfg.nb_triplet_fts)
    step_macs = macs.haiku_processor_macs(factory, cfg.macs_nodes, cfg.hidden_size)
    name = program_lib.OFFICIAL_PREFIX + kind
    return _measure(factory, task, cfg, seed, training, name, "", step_macs)
