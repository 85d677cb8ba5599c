"""Training and prediction for a CLRS `BaselineModel`, with our own pjit-compiled step.

dm-clrs 2.0.3's multi-device path (pmap + `jax.device_put_sharded`) is broken on current JAX,
so `Trainer` keeps CLRS's nets, losses and optimizer but compiles its own step: `jax.jit` over a
one-axis device `Mesh`, parameters and optimizer state replicated, the batch axis of every
Feedback leaf sharded (axis 0 for inputs/outputs/lengths, axis 1 for time-major hints).
Executables are compiled ahead of time once per input shape, so compile time is measured
exactly and never mixed into step time.
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from typing import Any, Callable, Sequence

import clrs
import jax
import numpy as np
import optax
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from spark_jax.config.protocol import ProtocolConfig

Feedback = clrs.Feedback
BATCH_AXIS = "batch"


class TrainingError(RuntimeError):
    """Training diverged (non-finite loss) or the setup is inconsistent."""


def _shape_key(tree) -> tuple:
    leaves, treedef = jax.tree_util.tree_flatten(tree)
    return treedef, tuple((tuple(np.shape(x)), str(x.dtype)) for x in leaves)


@dataclasses.dataclass
class CompileStats:
    seconds: float = 0.0
    count: int = 0


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
        self.model = clrs.models.BaselineModel(
            spec=spec,
            dummy_trajectory=dummy_feedback,
            processor_factory=processor_factory,
            hidden_dim=cfg.hidden_size,
            encode_hints=cfg.encode_hints,
            decode_hints=cfg.decode_hints,
            encoder_init=cfg.encoder_init,
            learning_rate=cfg.learning_rate,
            grad_clip_max_norm=cfg.grad_clip_max_norm,
            hint_repred_mode=cfg.hint_repred_mode,
            checkpoint_path=tempfile.gettempdir(),
        )  # unused: checkpoints stay in memory
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
        self._check_batch(int(features.lengths.shape[0]))
        if len(self.devices) == 1:
            return features  # host arrays go straight to the single device
        return features._replace(
            inputs=jax.device_put(features.inputs, self._rows),
            hints=jax.device_put(features.hints, self._time_rows),
            lengths=jax.device_put(features.lengths, self._rows),
        )

    def shard_feedback(self, feedback: Feedback) -> Feedback:
        if len(self.devices) == 1:
            self._check_batch(int(feedback.features.lengths.shape[0]))
            return feedback
        return Feedback(
            features=self.shard_features(feedback.features),
            outputs=jax.device_put(feedback.outputs, self._rows),
        )

    def _compiled(self, cache: dict, fn, *args):
        # Parameter and optimizer-state shapes never change: key on the data (last arg) only.
        key = _shape_key(args[-1])
        exe = cache.get(key)
        if exe is None:
            start = time.perf_counter()
            exe = fn.lower(*args).compile()
            self.compile_stats.seconds += time.perf_counter() - start
            self.compile_stats.count += 1
            cache[key] = exe
        return exe

    # -- public API -------------------------------------------------------------------------
    def init(self, features, seed: int) -> None:
        """Initializes parameters like `BaselineModel.init` (seed: run.py uses seed + 1)."""
        init = jax.jit(
            lambda key, feats: self.model.net_fn.init(
                key, [feats], True, algorithm_index=-1, return_hints=False, return_all_outputs=False
            )
        )
        params = init(jax.random.PRNGKey(seed), features)
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

    def evaluate(self, rng_key, batches: Sequence[Feedback], params=None) -> dict[str, float]:
        """`clrs.evaluate` over all batches of a fixed set; returns per-output scores + 'score'."""
        preds, outputs = [], []
        for fb in batches:
            rng_key, sub = jax.random.split(rng_key)
            preds.append(self.predict(sub, fb.features, params))
            outputs.append(fb.outputs)

        def concat(*xs):
            return np.concatenate(xs, axis=0)

        out = clrs.evaluate(
            jax.tree_util.tree_map(concat, *outputs), jax.tree_util.tree_map(concat, *preds)
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
