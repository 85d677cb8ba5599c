"""Task data by the official CLRS protocol, built from `clrs.build_sampler` (no download).

Mirrors clrs/examples/run.py: one infinite training sampler per training length (cycled),
random `pos`, pred_h-as-input for the listed algorithms, permutation post-processing; a fixed
validation set at the largest training length; and the official OOD test set rebuilt the way
CLRS's dataset builder makes it (`build_sampler(task, seed=3, num_samples=32*mult, length=64)`)
then processed like run.py's test split (pred_as_input + permutations, no random pos).

One deliberate difference from run.py: validation and test use every sample of their fixed set
exactly once (run.py draws random batches with replacement from the same set).
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, Iterator

import clrs
import jax
import numpy as np
from clrs._src import samplers as clrs_samplers

from spark_jax.config.protocol import ProtocolConfig
from spark_jax.config.tasks import TASKS, TaskError, check_task  # noqa: F401 - re-exported

# clrs/examples/run.py PRED_AS_INPUT_ALGOS.
PRED_AS_INPUT_ALGOS = frozenset(
    {
        "binary_search",
        "minimum",
        "find_maximum_subarray",
        "find_maximum_subarray_kadane",
        "matrix_chain_order",
        "lcs_length",
        "optimal_bst",
        "activity_selector",
        "task_scheduling",
        "naive_string_matcher",
        "kmp_matcher",
        "jarvis_march",
    }
)
STRING_MATCHERS = frozenset({"naive_string_matcher", "kmp_matcher"})
SPARSE_GRAPH_ALGOS = frozenset(
    {"articulation_points", "bridges", "mst_kruskal", "bipartite_matching"}
)
Feedback = clrs.Feedback


@dataclasses.dataclass(frozen=True)
class TaskData:
    """Everything a training run needs for one task.

    Attributes:
      task: CLRS algorithm name.
      spec: the processed spec (after pred_as_input / permutations).
      train: an infinite iterator of training Feedback batches, cycling the training lengths.
      val_batches: the fixed validation set, in batches.
      test_batches: the fixed OOD test set, in batches.
      rng_key: the JAX key run.py derives from the seed (for dropout/predict keys).
    """

    task: str
    spec: Any
    train: Iterator[Feedback]
    val_batches: tuple[Feedback, ...]
    test_batches: tuple[Feedback, ...]
    rng_key: Any


def _multiplier(task: str) -> int:
    return clrs.CLRS_30_ALGS_SETTINGS[task]["num_samples_multiplier"]


def _sampler_kwargs(task: str, cfg: ProtocolConfig, length: int) -> dict[str, Any]:
    p = tuple(0.1 + 0.1 * i for i in range(9))
    if task in SPARSE_GRAPH_ALGOS:
        p = tuple(np.array(p) / 2)
    needle = cfg.length_needle
    if needle < 0 and task in STRING_MATCHERS:
        # A random needle must leave a haystack longer than itself, or CLRS's sampler fails
        # to embed it. At run.py's training size (n=20, needle <= 8) this changes nothing; at
        # validation n=16 it caps needles at 7 (a needle of 8 would leave no room).
        needle = -max(1, min(-needle, (length - 1) // 2))
    kwargs: dict[str, Any] = dict(p=p, length_needle=needle)
    if needle == 0:
        kwargs.pop("length_needle")
    # build_sampler drops what a sampler does not take, with a warning per sampler: drop it here.
    accepted = inspect.signature(clrs_samplers.SAMPLERS[task]._sample_data).parameters
    return {k: v for k, v in kwargs.items() if k in accepted}


def _post_process(
    task: str, cfg: ProtocolConfig, spec, it: Iterator[Feedback], rng: np.random.RandomState | None
):
    if rng is not None and cfg.random_pos:
        it = clrs.process_random_pos(it, rng)
    if cfg.enforce_pred_as_input and task in PRED_AS_INPUT_ALGOS:
        spec, it = clrs.process_pred_as_input(spec, it)
    spec, it = clrs.process_permutations(spec, it, cfg.enforce_permutations)
    return spec, it


def train_lengths(task: str, cfg: ProtocolConfig) -> tuple[int, ...]:
    """The lengths the training iterator cycles through, one batch each, in order."""
    if task in STRING_MATCHERS:
        return (max(cfg.train_lengths) * 5 // 4,)  # run.py: fixed haystack + needle
    return tuple(cfg.train_lengths)


def _train_iterator(task: str, cfg: ProtocolConfig, rng: np.random.RandomState):
    lengths = train_lengths(task, cfg)
    iterators = []
    spec = None
    for length in lengths:
        sampler, spec = clrs.build_sampler(
            task,
            seed=rng.randint(2**32),
            num_samples=-1,
            length=length,
            **_sampler_kwargs(task, cfg, length),
        )

        def batches(s=sampler):
            while True:
                yield s.next(cfg.batch_size)

        spec, it = _post_process(task, cfg, spec, batches(), rng)
        iterators.append(it)

    def cycle():
        while True:
            for it in iterators:
                yield next(it)

    return spec, cycle()


def _fixed_set(
    task: str,
    cfg: ProtocolConfig,
    *,
    seed: int,
    num_samples: int,
    length: int,
    sampler_kwargs: dict[str, Any],
    rng: np.random.RandomState | None,
):
    sampler, spec = clrs.build_sampler(
        task, seed=seed, num_samples=num_samples, length=length, **sampler_kwargs
    )
    full = sampler.next(None)  # the whole fixed dataset
    spec, it = _post_process(task, cfg, spec, iter([full]), rng)
    return spec, split_batches(next(it), cfg.eval_batch_size)


def split_batches(feedback: Feedback, batch_size: int) -> tuple[Feedback, ...]:
    """Splits a Feedback along its batch axis (axis 1 for hints, 0 for everything else)."""
    n = int(feedback.features.lengths.shape[0])
    out = []
    for start in range(0, n, batch_size):
        sl = slice(start, min(start + batch_size, n))
        features = feedback.features
        out.append(
            Feedback(
                features=features._replace(
                    inputs=jax.tree_util.tree_map(lambda x, sl=sl: x[sl], features.inputs),
                    hints=jax.tree_util.tree_map(lambda x, sl=sl: x[:, sl], features.hints),
                    lengths=features.lengths[sl],
                ),
                outputs=jax.tree_util.tree_map(lambda x, sl=sl: x[sl], feedback.outputs),
            )
        )
    return tuple(out)


def make_task_data(task: str, cfg: ProtocolConfig, seed: int) -> TaskData:
    """Builds train/val/test data for `task` under protocol `cfg`, seeded like run.py."""
    check_task(task)
    rng = np.random.RandomState(seed)
    rng_key = jax.random.PRNGKey(rng.randint(2**32))
    spec, train = _train_iterator(task, cfg, rng)
    mult = _multiplier(task)
    val_spec, val_batches = _fixed_set(
        task,
        cfg,
        seed=rng.randint(2**32),
        num_samples=cfg.val_samples * mult,
        length=cfg.validation_length,
        sampler_kwargs=_sampler_kwargs(task, cfg, cfg.validation_length),
        rng=rng,
    )
    test_spec, test_batches = _fixed_set(
        task,
        cfg,
        seed=cfg.test_seed,
        num_samples=cfg.test_samples * mult,
        length=cfg.test_length,
        sampler_kwargs={},
        rng=None,
    )
    assert spec == val_spec == test_spec, (spec, val_spec, test_spec)
    return TaskData(
        task=task,
        spec=spec,
        train=train,
        val_batches=val_batches,
        test_batches=test_batches,
        rng_key=rng_key,
    )
