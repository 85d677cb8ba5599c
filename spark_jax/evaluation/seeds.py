"""K seeds of one candidate trained as one program: one compile for all K.

Each seed keeps what a run of its own would have: its data (`make_task_data(task, cfg, s)`:
its training order, validation set and dropout keys), its initial parameters (`s + 1`) and
its own best-validation parameters. The seeds' batches are stacked on a new leading axis
(`[K, ...]`; time-major hints `[K, T, B, ...]`, zero-padded to the longest `T` of the K,
which CLRS's length masks make neutral, as its own sampler padding is). Validation and test
scores are computed per seed.

How the program runs the seed axis (`SEED_MODES`):
- 'map' (the default): `jax.lax.map` of the one-seed step over the seeds, so each seed's
  arithmetic is a one-seed run's: on the CPU its figures are bit-identical to
  `train_and_score` of that seed (at the smoke preset too, where a float rounding apart grows
  into another run: results/chaos-at-smoke, results/bench). It needs K >= 2: one seed
  trains alone (`evaluate.train_and_score`). On a GPU XLA compiles the loop body otherwise
  than a lone step, and the figures part as with 'vmap' (results/bench).
- 'vmap': `jax.vmap` batches the seeds' arithmetic (one K-wide step instead of K one-seed
  steps); per-seed figures then differ from a one-seed run by float rounding, and a seed's
  result depends on the seeds stacked with it.
One device: the seed axis is not sharded.
"""

from __future__ import annotations

import itertools
import time
from typing import Any, Callable, Sequence

import clrs
import jax
import numpy as np
from jax.sharding import SingleDeviceSharding

from spark_jax.config import registry
from spark_jax.config.evaluation import DEFAULT_SEED_MODE, SEED_MODES  # noqa: F401 - re-exported
from spark_jax.config.protocol import ProtocolConfig
from spark_jax.evaluation import compiling, data, training_loop
from spark_jax.evaluation.prefetch import Prefetcher
from spark_jax.evaluation.train import CompileStats, Trainer, count_params
from spark_jax.program.outcome import TrainingError

Feedback = clrs.Feedback
# The K-seed program runs only if its largest step needs at most this share of the memory
# available to it (device memory where the backend reports it, else the host's).
MEMORY_SHARE = 0.8


class SeedsDoNotFit(RuntimeError):
    """The K-seed program would not fit in memory: train the seeds one after another."""


def available_bytes(device) -> int | None:
    """Memory free for a new program on `device`: its backend's figure, else the host's
    MemAvailable (CPU), else None (unknown)."""
    try:
        stats = device.memory_stats()
    except Exception:  # noqa: BLE001 - backends without stats
        stats = None
    if stats and "bytes_limit" in stats:
        return int(stats["bytes_limit"]) - int(stats.get("bytes_in_use", 0))
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def program_bytes(compiled) -> int | None:
    """What one run of a compiled executable holds (arguments, outputs, temporaries)."""
    try:
        m = compiled.memory_analysis()
    except Exception:  # noqa: BLE001 - not every backend reports it
        return None
    if m is None:
        return None
    return int(
        m.temp_size_in_bytes
        + m.argument_size_in_bytes
        + m.output_size_in_bytes
        - m.alias_size_in_bytes
    )


def check_fits(needed: int | None, available: int | None, k: int) -> None:
    """Raises SeedsDoNotFit when the K-seed step needs more than its share of memory."""
    if needed is not None and available is not None and needed > MEMORY_SHARE * available:
        raise SeedsDoNotFit(
            f"{k} seeds as one program need {needed / 2**20:.0f} MiB per step, more than "
            f"{MEMORY_SHARE:.0%} of the {available / 2**20:.0f} MiB available"
        )


def _stack(leaves: Sequence[np.ndarray], pad_axis: int | None = None) -> np.ndarray:
    if pad_axis is not None:
        longest = max(np.shape(x)[pad_axis] for x in leaves)
        padded = []
        for x in leaves:
            widths = [(0, 0)] * np.ndim(x)
            widths[pad_axis] = (0, longest - np.shape(x)[pad_axis])
            padded.append(np.pad(np.asarray(x), widths))
        leaves = padded
    return np.stack([np.asarray(x) for x in leaves])


def stack_features(features: Sequence[Any]):
    """K feature batches -> one with a leading seed axis (hints padded in time)."""
    first = features[0]
    return first._replace(
        inputs=jax.tree_util.tree_map(lambda *xs: _stack(xs), *[f.inputs for f in features]),
        hints=jax.tree_util.tree_map(lambda *xs: _stack(xs, 0), *[f.hints for f in features]),
        lengths=_stack([f.lengths for f in features]),
    )


def stack_feedback(feedbacks: Sequence[Feedback]) -> Feedback:
    """K training batches -> one `[K, ...]` batch."""
    return Feedback(
        features=stack_features([fb.features for fb in feedbacks]),
        outputs=jax.tree_util.tree_map(lambda *xs: _stack(xs), *[fb.outputs for fb in feedbacks]),
    )


def map_over_seeds(fn):
    """`fn` over the leading (seed) axis of every argument, one seed after another."""
    return lambda *args: jax.lax.map(lambda xs: fn(*xs), args)


def _take(tree, k: int):
    return jax.tree_util.tree_map(lambda x: x[k], tree)


class SeedStack:
    """A `Trainer`'s model trained for K seeds at once (parameters `[K, ...]`); `mode`: one
    of SEED_MODES."""

    def __init__(self, trainer: Trainer, k: int, mode: str = DEFAULT_SEED_MODE):
        check_mode(mode)
        self.trainer, self.k = trainer, k
        self.device = trainer.devices[0]
        self._sharding = SingleDeviceSharding(self.device)
        over = registry.seed_mode(mode).load()
        self._step_fn = jax.jit(over(trainer._train_step), donate_argnums=(0, 1))
        self._predict_fn = jax.jit(over(trainer._predict))
        self._init_fn = jax.jit(over(trainer._init))
        self._exes: dict = {}
        self.compile_stats = CompileStats()
        self.params = self.opt_state = None

    def place(self, tree):
        return jax.device_put(tree, self._sharding)

    def _abstract(self, tree):
        return jax.tree_util.tree_map(
            lambda x: jax.ShapeDtypeStruct(
                np.shape(x), jax.dtypes.canonicalize_dtype(x.dtype), sharding=self._sharding
            ),
            tree,
        )

    def _key(self, kind: str, tree) -> tuple:
        leaves, treedef = jax.tree_util.tree_flatten(tree)
        return kind, treedef, tuple((np.shape(x), str(x.dtype)) for x in leaves)

    def _lowerings(self, features, train: Sequence[Feedback], evals: Sequence[Any]) -> dict:
        keys = jax.ShapeDtypeStruct((self.k, 2), np.uint32, sharding=self._sharding)
        params = self._abstract(jax.eval_shape(self._init_fn, keys, features))
        opt_state = self._abstract(jax.eval_shape(jax.vmap(self.trainer.model.opt.init), params))
        out = {self._key("init", features): lambda: self._init_fn.lower(keys, features)}
        for fb in train:
            a = self._abstract(fb)
            out[self._key("step", a)] = lambda a=a: self._step_fn.lower(params, opt_state, keys, a)
        for feats in evals:
            a = self._abstract(feats)
            out[self._key("predict", a)] = lambda a=a: self._predict_fn.lower(params, keys, a)
        return out

    def precompile(self, features, train: Sequence[Feedback], evals: Sequence[Any]) -> None:
        """Compiles init, every stacked step shape and prediction shape concurrently."""
        report = compiling.compile_all(self._lowerings(features, train, evals))
        self._exes.update(report.executables)
        self.compile_stats.seconds += report.seconds
        self.compile_stats.wall_seconds += report.wall_seconds
        self.compile_stats.count += report.count

    def check_memory(self) -> None:
        """Raises SeedsDoNotFit if the largest compiled step exceeds its share of memory."""
        sizes = [program_bytes(exe) for key, exe in self._exes.items() if key[0] == "step"]
        known = [b for b in sizes if b is not None]
        check_fits(max(known) if known else None, available_bytes(self.device), self.k)

    def _run(self, kind: str, fn, *args):
        key = self._key(kind, args[-1])
        exe = self._exes.get(key)
        if exe is None:
            start = time.perf_counter()
            exe = self._exes[key] = fn.lower(*args).compile()
            took = time.perf_counter() - start
            self.compile_stats.seconds += took
            self.compile_stats.wall_seconds += took
            self.compile_stats.count += 1
        return exe(*args)

    def init(self, features, seeds: Sequence[int]) -> None:
        """Seed k's parameters as `Trainer.init(features[k], seeds[k])` would make them."""
        keys = self.place(np.stack([np.asarray(jax.random.PRNGKey(s)) for s in seeds]))
        feats = self.place(features)
        params = self._run("init", self._init_fn, keys, feats)
        self.params = self.place(params)
        self.opt_state = self.place(jax.vmap(self.trainer.model.opt.init)(params))

    def step(self, keys: Sequence[Any], feedback: Feedback) -> np.ndarray:
        """One optimizer step of every seed (`keys`: one per seed); returns the K losses."""
        keys = self.place(np.stack([np.asarray(x) for x in keys]))
        fb = self.place(feedback)
        self.params, self.opt_state, metrics = self._run(
            "step", self._step_fn, self.params, self.opt_state, keys, fb
        )
        losses = np.asarray(jax.device_get(metrics["loss"]))  # [K]
        if not np.all(np.isfinite(losses)):
            raise TrainingError(f"non-finite training loss {losses.tolist()} (one per seed)")
        return losses

    def evaluate(
        self, keys: list, batches: Sequence[Feedback], params=None, orders=None
    ) -> list[float]:
        """Per seed: `Trainer.evaluate(keys[k], batches[k])['score']`, computed at once.

        batches: per batch index, the stacked `[K, ...]` batch; keys: one key per seed;
        orders: per seed, its set's order (`TaskData.val_order`/`test_order`) or None.
        """
        orders = [None] * self.k if orders is None else list(orders)
        params = self.params if params is None else params
        preds, outputs = [], []
        keys = list(keys)
        for fb in batches:
            subs = []
            for k in range(self.k):
                keys[k], sub = jax.random.split(keys[k])
                subs.append(np.asarray(sub))
            feats = self.place(fb.features)
            preds.append(
                jax.device_get(
                    self._run(
                        "predict", self._predict_fn, params, self.place(np.stack(subs)), feats
                    )
                )
            )
            outputs.append(fb.outputs)
        scores = []
        for k in range(self.k):

            def concat(*xs, k=k):
                return np.concatenate([np.asarray(x)[k] for x in xs], axis=0)

            out = clrs.evaluate(
                data.restore_order(jax.tree_util.tree_map(concat, *outputs), orders[k]),
                data.restore_order(jax.tree_util.tree_map(concat, *preds), orders[k]),
            )
            scores.append(float(out["score"]))
        return scores

    def snapshot(self, seeds: Sequence[int]) -> dict[int, Any]:
        """Host copies of the given seeds' current parameters."""
        host = jax.device_get(self.params)
        return {i: _take(host, i) for i in seeds}

    def place_best(self, best: Sequence[Any]) -> Any:
        """Per-seed host parameters, stacked `[K, ...]` on the device."""
        return self.place(jax.tree_util.tree_map(lambda *xs: np.stack(xs), *best))


def check_mode(mode: str) -> None:
    if mode not in registry.seed_mode_names():
        known = ", ".join(registry.seed_mode_names())
        raise ValueError(f"unknown seed mode {mode!r}; expected one of {known}")


def _stacked_sets(sets: Sequence[Sequence[Feedback]]) -> tuple[Feedback, ...]:
    if len({len(s) for s in sets}) != 1:
        raise TrainingError(f"seeds disagree on the number of batches: {[len(s) for s in sets]}")
    return tuple(stack_feedback(batch) for batch in zip(*sets))


def train_and_score_seeds(
    processor_factory: Callable,
    task: str,
    cfg: ProtocolConfig,
    seeds: Sequence[int],
    *,
    devices=None,
    progress: Callable[[int, float], None] | None = None,
    precompile: bool = True,
    prefetch: int = 2,
    mode: str = DEFAULT_SEED_MODE,
) -> list[dict[str, Any]]:
    """`train_and_score` for every seed in `seeds` as one program (`mode`: how it runs the
    seed axis, see SEED_MODES); one metrics dict per seed (timing fields are those of the
    shared program). Raises SeedsDoNotFit, after compiling, when the program's step would
    not fit in memory (`check_fits`)."""
    seeds = list(seeds)
    if len(set(seeds)) != len(seeds) or not seeds:
        raise ValueError(f"seeds must be distinct and non-empty, got {seeds}")
    check_mode(mode)
    if mode == "map" and len(seeds) == 1:
        # XLA inlines a one-trip loop and fuses it otherwise than a one-seed step (a mapped
        # stack of one did not reproduce the seed alone at smoke).
        raise ValueError("one seed trains alone (`evaluate.train_and_score`), not mapped")
    datas = [data.make_task_data(task, cfg, s) for s in seeds]
    n_lengths = len(data.train_lengths(task, cfg))
    lookahead = [[next(d.train) for _ in range(n_lengths)] for d in datas]
    trainer = Trainer(
        datas[0].spec,
        lookahead[0][0],
        processor_factory,
        cfg,
        devices=(devices or jax.local_devices())[:1],
    )
    stack = SeedStack(trainer, len(seeds), mode)
    stacked_lookahead = [stack_feedback(fbs) for fbs in zip(*lookahead)]
    val = _stacked_sets([d.val_batches for d in datas])
    test = _stacked_sets([d.test_batches for d in datas])
    fresh = (stack_feedback([next(d.train) for d in datas]) for _ in itertools.count())
    source = itertools.chain(stacked_lookahead, fresh)
    if prefetch:
        source = Prefetcher(source, depth=prefetch, transform=stack.place)
    try:
        first = stacked_lookahead[0]
        if precompile:
            stack.precompile(first.features, stacked_lookahead, [fb.features for fb in val + test])
            stack.check_memory()
        return _loop(stack, datas, seeds, first, n_lengths, source, val, test, cfg, progress)
    finally:
        if prefetch:
            source.close()


def _loop(stack, datas, seeds, first_host, n_first, batches, val, test, cfg, progress):
    inputs = training_loop.Inputs(
        [d.rng_key for d in datas],
        [s + 1 for s in seeds],
        first_host.features,
        n_first,
        training_loop.FixedSet(val, [d.val_order for d in datas]),
        training_loop.FixedSet(test, [d.test_order for d in datas]),
    )
    out = training_loop.run(stack, inputs, batches, cfg, progress)
    shared = dict(
        params=count_params(out.best_params[0], processor_only=True),
        model_params=count_params(out.best_params[0]),
        **out.timings(stack, n_first),
        n_devices=1,
    )
    return [
        dict(
            seed=seeds[i],
            ood_score=out.test_scores[i],
            val_score=out.best_val[i],
            best_step=out.best_step[i],
            final_loss=float(out.losses[i]),
            **shared,
        )
        for i in range(len(seeds))
    ]
