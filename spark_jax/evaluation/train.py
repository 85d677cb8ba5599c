"""Training and prediction for a CLRS `BaselineModel`, with our own pjit-compiled step.

dm-clrs 2.0.3's multi-device path (pmap + `jax.device_put_sharded`) is broken on current JAX,
so `Trainer` keeps CLRS's nets, losses and optimizer but compiles its own step: `jax.jit` over a
one-axis device `Mesh`, parameters and optimizer state replicated, the batch axis of every
Feedback leaf sharded (axis 0 for inputs/outputs/lengths, axis 1 for time-major hints).
Executables are compiled ahead of time once per input shape, so compile time is measured
exactly and never mixed into step time: `precompile` lowers init, every training shape and
every prediction shape on abstract values (`jax.eval_shape`) and compiles them concurrently
before the first step; a shape it did not foresee is compiled lazily when first seen.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Callable, Sequence

import clrs
import jax
import numpy as np
import optax
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from spark_jax.config.protocol import ProtocolConfig
from spark_jax.evaluation import bridge, compiling, data
from spark_jax.program.outcome import TrainingError

Feedback = clrs.Feedback
BATCH_AXIS = "batch"


def _shape_key(tree) -> tuple:
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    return treedef, tuple((tuple(np.shape(x)), str(_dtype(x))) for x in leaves)


def _dtype(x):
    return jax.dtypes.canonicalize_dtype(x.dtype)  # host int64 arrays run as int32


def _abstract(tree, sharding):
    return jax.tree_util.tree_map(
        lambda x: jax.ShapeDtypeStruct(np.shape(x), _dtype(x), sharding=sharding), tree
    )


@dataclasses.dataclass
class CompileStats:
    """seconds: sum of every lowering + compile; wall_seconds: what the run waited for them."""

    seconds: float = 0.0
    count: int = 0
    wall_seconds: float = 0.0


class Trainer:
    """Owns one BaselineModel's parameters and optimizer state on a device mesh.

    Args:
      spec: processed CLRS spec of the task.
      dummy_feedback: one training batch (sizes the encoders/decoders).
      processor_factory: `out_size -> clrs Processor` (ours or DeepMind's).
      cfg: the protocol.
      devices: devices to shard the batch over (default: all local devices).
    """

    def __init__(
        self,
        spec,
        dummy_feedback: Feedback,
        processor_factory: Callable,
        cfg: ProtocolConfig,
        devices: Sequence[Any] | None = None,
    ):
        self.cfg = cfg
        self.devices = list(devices if devices is not None else jax.local_devices())
        self.mesh = Mesh(np.array(self.devices), (BATCH_AXIS,))
        self._replicated = NamedSharding(self.mesh, P())
        self._rows = NamedSharding(self.mesh, P(BATCH_AXIS))
        self._time_rows = NamedSharding(self.mesh, P(None, BATCH_AXIS))
        self.model = bridge.baseline_model(spec, dummy_feedback, processor_factory, cfg)
        self.params = None
        self.opt_state = None
        self.compile_stats = CompileStats()
        self._step_exes: dict = {}
        self._predict_exes: dict = {}
        self._step_fn = jax.jit(
            self._train_step,
            donate_argnums=(0, 1),
            out_shardings=(self._replicated, self._replicated, self._replicated),
        )
        self._predict_fn = jax.jit(self._predict)
        self._init_fn = jax.jit(self._init)
        self._init_exe = None

    def _init(self, key, features):
        return self.model.net_fn.init(
            key, [features], True, algorithm_index=-1, return_hints=False, return_all_outputs=False
        )

    # -- pure functions ---------------------------------------------------------------------
    def _train_step(self, params, opt_state, rng_key, feedback):
        loss, grads = jax.value_and_grad(self.model._loss)(params, rng_key, feedback, 0)
        updates, opt_state = self.model.opt.update(grads, opt_state, params)
        params = optax.apply_updates(params, updates)
        return params, opt_state, {"loss": loss, "grad_norm": optax.tree.norm(grads)}

    def _predict(self, params, rng_key, features):
        preds, _ = self.model._predict(params, rng_key, features, 0, False, False)
        return preds

    # -- placement --------------------------------------------------------------------------
    def _check_batch(self, n: int):
        if n % len(self.devices):
            raise TrainingError(
                f"batch of {n} does not split evenly over {len(self.devices)} devices"
            )

    def shard_features(self, features):
        """Places a batch's features on the mesh (batch axis sharded)."""
        self._check_batch(int(features.lengths.shape[0]))
        return features._replace(
            inputs=jax.device_put(features.inputs, self._rows),
            hints=jax.device_put(features.hints, self._time_rows),
            lengths=jax.device_put(features.lengths, self._rows),
        )

    def shard_feedback(self, feedback: Feedback) -> Feedback:
        """Places a training batch on the mesh (idempotent: placed arrays stay where they are)."""
        return Feedback(
            features=self.shard_features(feedback.features),
            outputs=jax.device_put(feedback.outputs, self._rows),
        )

    def _abstract_features(self, features):
        return features._replace(
            inputs=_abstract(features.inputs, self._rows),
            hints=_abstract(features.hints, self._time_rows),
            lengths=_abstract(features.lengths, self._rows),
        )

    def _abstract_feedback(self, feedback: Feedback) -> Feedback:
        return Feedback(
            features=self._abstract_features(feedback.features),
            outputs=_abstract(feedback.outputs, self._rows),
        )

    def precompile(
        self, features, train_batches: Sequence[Feedback], eval_batches: Sequence[Feedback]
    ) -> compiling.CompileReport:
        """Compiles init (for `features`), a step per distinct training-batch shape and a
        prediction per distinct evaluation-batch shape, concurrently, before anything runs."""
        key = jax.ShapeDtypeStruct((2,), np.uint32, sharding=self._replicated)
        params = _abstract(jax.eval_shape(self._init, key, features), self._replicated)
        opt_state = _abstract(jax.eval_shape(self.model.opt.init, params), self._replicated)
        lowerings: dict = {
            ("init", _shape_key(features)): lambda: self._init_fn.lower(key, features)
        }
        for fb in train_batches:
            abstract = self._abstract_feedback(fb)
            lowerings.setdefault(
                ("step", _shape_key(abstract)),
                lambda a=abstract: self._step_fn.lower(params, opt_state, key, a),
            )
        for fb in eval_batches:
            abstract = self._abstract_features(fb.features)
            lowerings.setdefault(
                ("predict", _shape_key(abstract)),
                lambda a=abstract: self._predict_fn.lower(params, key, a),
            )
        report = compiling.compile_all(lowerings)
        for name, exe in report.executables.items():
            if name[0] == "init":
                self._init_exe = (name[1], exe)
            else:
                cache = self._step_exes if name[0] == "step" else self._predict_exes
                cache.setdefault(name[1], exe)
        self.compile_stats.seconds += report.seconds
        self.compile_stats.count += report.count
        self.compile_stats.wall_seconds += report.wall_seconds
        return report

    def _compiled(self, cache: dict, fn, *args):
        # Parameter and optimizer-state shapes never change: key on the data (last arg) only.
        key = _shape_key(args[-1])
        exe = cache.get(key)
        if exe is None:
            start = time.perf_counter()
            exe = fn.lower(*args).compile()
            took = time.perf_counter() - start
            self.compile_stats.seconds += took
            self.compile_stats.wall_seconds += took
            self.compile_stats.count += 1
            cache[key] = exe
        return exe

    # -- public API -------------------------------------------------------------------------
    def init(self, features, seed: int) -> None:
        """Initializes parameters like `BaselineModel.init` (seed: run.py uses seed + 1)."""
        key = jax.device_put(jax.random.PRNGKey(seed), self._replicated)
        init = self._init_fn
        if self._init_exe is not None and self._init_exe[0] == _shape_key(features):
            init = self._init_exe[1]
        params = init(key, features)
        self.params = jax.device_put(params, self._replicated)
        self.opt_state = jax.device_put(self.model.opt.init(params), self._replicated)

    def step(self, rng_key, feedback: Feedback) -> dict[str, float]:
        """One optimizer step; returns host metrics and raises on a non-finite loss."""
        fb = self.shard_feedback(feedback)
        rng_key = jax.device_put(rng_key, self._replicated)
        exe = self._compiled(
            self._step_exes, self._step_fn, self.params, self.opt_state, rng_key, fb
        )
        self.params, self.opt_state, metrics = exe(self.params, self.opt_state, rng_key, fb)
        metrics = {k: float(v) for k, v in jax.device_get(metrics).items()}
        if not np.isfinite(metrics["loss"]):
            raise TrainingError(f"non-finite training loss {metrics['loss']}")
        return metrics

    def predict(self, rng_key, features, params=None):
        """Hard output predictions (postprocessed like `BaselineModel.predict`)."""
        params = self.params if params is None else params
        feats = self.shard_features(features)
        rng_key = jax.device_put(rng_key, self._replicated)
        exe = self._compiled(self._predict_exes, self._predict_fn, params, rng_key, feats)
        return jax.device_get(exe(params, rng_key, feats))

    def evaluate(
        self, rng_key, batches: Sequence[Feedback], params=None, order=None
    ) -> dict[str, float]:
        """`clrs.evaluate` over all batches of a fixed set; returns per-output scores + 'score'
        (`order`: the set's `TaskData.val_order`/`test_order` for hint-length buckets)."""
        preds, outputs = [], []
        for fb in batches:
            rng_key, sub = jax.random.split(rng_key)
            preds.append(self.predict(sub, fb.features, params))
            outputs.append(fb.outputs)

        def concat(*xs):
            return np.concatenate(xs, axis=0)

        out = clrs.evaluate(
            data.restore_order(jax.tree_util.tree_map(concat, *outputs), order),
            data.restore_order(jax.tree_util.tree_map(concat, *preds), order),
        )
        return {k: float(v) for k, v in out.items()}

    def snapshot(self):
        """A host copy of the current parameters (the in-memory 'best checkpoint')."""
        return jax.device_get(self.params)

    def place(self, host_params):
        return jax.device_put(host_params, self._replicated)


def count_params(params, processor_only: bool = False) -> int:
    """Number of parameters (optionally only those under the CLRS processor tag)."""
    total = 0
    for module_name, leaves in params.items():
        if processor_only and "clrs_processor" not in module_name:
            continue
        total += sum(int(np.prod(np.shape(v))) for v in jax.tree_util.tree_leaves(leaves))
    return total
