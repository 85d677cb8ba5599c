"""Task data by the official CLRS protocol, built from `clrs.build_sampler` (no download).

Mirrors clrs/examples/run.py: one infinite training sampler per training length (cycled),
random `pos`, pred_h-as-input for the listed algorithms, permutation post-processing; a fixed
validation set at the largest training length; and the official OOD test set rebuilt the way
CLRS's dataset builder makes it (`build_sampler(task, seed=3, num_samples=32*mult, length=64)`)
then processed like run.py's test split (pred_as_input + permutations, no random pos).

One deliberate difference from run.py: validation and test use every sample of their fixed set
exactly once (run.py draws random batches with replacement from the same set).

Hint-length buckets: CLRS pads a fixed set's hints to its longest trajectory, so every sample
runs that many processor steps (quickselect's smoke test set: 220 steps, 91 on average).
When a set has enough batches and bucketing saves enough of that padding (`plan_buckets`),
its samples are scored in order of hint length, each batch cut to its bucket's length: at most
`MAX_BUCKETS` lengths, so at most that many prediction executables, compiled ahead of time.
A sample's prediction does not depend on the other samples of its batch nor on steps after
its own length (CLRS freezes its outputs there), so the scores are those of the padded set;
`TaskData.val_order`/`test_order` put the predictions back in the set's order before
`clrs.evaluate`. `buckets=False` keeps the padded batches.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, Iterator, Sequence

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
# Hint-length buckets of a fixed set (`plan_buckets`): at most MAX_BUCKETS lengths; only sets
# of MIN_BATCHES batches or more; a first split must save MIN_FIRST_SAVING of the padded
# sample-steps, each further split MIN_NEXT_SAVING.
MAX_BUCKETS = 4
MIN_BATCHES = 8
MIN_FIRST_SAVING = 0.25
MIN_NEXT_SAVING = 0.1


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
      val_order, test_order: None when the set's batches are in the set's order; else, for
        each sample of the set, its position in the concatenated batches (hint-length
        buckets, see the module docstring).
    """

    task: str
    spec: Any
    train: Iterator[Feedback]
    val_batches: tuple[Feedback, ...]
    test_batches: tuple[Feedback, ...]
    rng_key: Any
    val_order: np.ndarray | None = None
    test_order: np.ndarray | None = None


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


def train_batches(task: str, cfg: ProtocolConfig, seed: int):
    """(processed spec, infinite iterator of training batches) of `task`, seeded on its own
    (the identity probes': no validation or test set is built)."""
    check_task(task)
    return _train_iterator(task, cfg, np.random.RandomState(seed))


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
    buckets: bool,
):
    sampler, spec = clrs.build_sampler(
        task, seed=seed, num_samples=num_samples, length=length, **sampler_kwargs
    )
    full = sampler.next(None)  # the whole fixed dataset
    spec, it = _post_process(task, cfg, spec, iter([full]), rng)
    full = next(it)
    if buckets:
        return spec, *bucket_batches(full, cfg.eval_batch_size)
    return spec, split_batches(full, cfg.eval_batch_size), None


def _take_samples(feedback: Feedback, idx: np.ndarray, steps: int) -> Feedback:
    """The samples `idx` of `feedback`, hints cut to their first `steps` time steps."""
    features = feedback.features
    return Feedback(
        features=features._replace(
            inputs=jax.tree_util.tree_map(lambda x: x[idx], features.inputs),
            hints=jax.tree_util.tree_map(lambda x: x[:steps, idx], features.hints),
            lengths=features.lengths[idx],
        ),
        outputs=jax.tree_util.tree_map(lambda x: x[idx], feedback.outputs),
    )


def plan_buckets(batch_lengths: Sequence[int], batch_sizes: Sequence[int]) -> list[int]:
    """Hint lengths for batches of increasing needed lengths (one bucket length per batch).

    Contiguous groups, each cut to its longest batch, chosen to minimise the padded
    sample-steps (sum of bucket length x batch size); a set of fewer than `MIN_BATCHES`
    batches stays one group, a first split must save `MIN_FIRST_SAVING` of the padded work
    and every further one `MIN_NEXT_SAVING` (each costs one more compiled executable).
    """
    n = len(batch_lengths)
    one = [batch_lengths[-1]] * n
    if n < MIN_BATCHES:
        return one
    sizes = np.cumsum([0, *batch_sizes])

    def cost(i: int, j: int) -> int:  # batches i..j-1 as one group
        return batch_lengths[j - 1] * int(sizes[j] - sizes[i])

    best = {(0, 0): (0, [])}  # (groups, batches covered) -> (cost, group ends)
    for g in range(1, MAX_BUCKETS + 1):
        for j in range(g, n + 1):
            options = [
                (best[(g - 1, i)][0] + cost(i, j), best[(g - 1, i)][1] + [j])
                for i in range(g - 1, j)
                if (g - 1, i) in best
            ]
            best[(g, j)] = min(options)
    plan, plan_cost = [n], cost(0, n)
    for g in range(2, MAX_BUCKETS + 1):
        need = MIN_FIRST_SAVING if g == 2 else MIN_NEXT_SAVING
        if best[(g, n)][0] > (1.0 - need) * plan_cost:
            break
        plan_cost, plan = best[(g, n)]
    out, start = [], 0
    for end in plan:
        out += [batch_lengths[end - 1]] * (end - start)
        start = end
    return out


def bucket_batches(
    feedback: Feedback, batch_size: int
) -> tuple[tuple[Feedback, ...], np.ndarray | None]:
    """A fixed set in batches, bucketed by hint length where that pays (`plan_buckets`):
    (batches, order) with order None when the batches are `split_batches`'s."""
    lengths = np.asarray(feedback.features.lengths)
    sorted_idx = np.argsort(lengths, kind="stable")
    chunks = [sorted_idx[i : i + batch_size] for i in range(0, len(sorted_idx), batch_size)]
    needed = [int(lengths[c].max()) for c in chunks]
    steps = plan_buckets(needed, [len(c) for c in chunks])
    full = int(feedback.features.hints[0].data.shape[0])
    if len(set(steps)) == 1 and steps[0] >= full:
        return split_batches(feedback, batch_size), None
    batches = tuple(_take_samples(feedback, c, t) for c, t in zip(chunks, steps))
    return batches, np.argsort(sorted_idx, kind="stable")


def restore_order(tree, order: np.ndarray | None):
    """Concatenated per-sample arrays (batch axis 0) put back in their set's order."""
    if order is None:
        return tree
    return jax.tree_util.tree_map(lambda x: np.asarray(x)[order], tree)


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


def make_task_data(task: str, cfg: ProtocolConfig, seed: int, buckets: bool = True) -> TaskData:
    """Builds train/val/test data for `task` under protocol `cfg`, seeded like run.py
    (`buckets`: validation and test sets in hint-length buckets where that pays)."""
    check_task(task)
    rng = np.random.RandomState(seed)
    rng_key = jax.random.PRNGKey(rng.randint(2**32))
    spec, train = _train_iterator(task, cfg, rng)
    mult = _multiplier(task)
    val_spec, val_batches, val_order = _fixed_set(
        task,
        cfg,
        seed=rng.randint(2**32),
        num_samples=cfg.val_samples * mult,
        length=cfg.validation_length,
        sampler_kwargs=_sampler_kwargs(task, cfg, cfg.validation_length),
        rng=rng,
        buckets=buckets,
    )
    test_spec, test_batches, test_order = _fixed_set(
        task,
        cfg,
        seed=cfg.test_seed,
        num_samples=cfg.test_samples * mult,
        length=cfg.test_length,
        sampler_kwargs={},
        rng=None,
        buckets=buckets,
    )
    assert spec == val_spec == test_spec, (spec, val_spec, test_spec)
    return TaskData(
        task=task,
        spec=spec,
        train=train,
        val_batches=val_batches,
        test_batches=test_batches,
        rng_key=rng_key,
        val_order=val_order,
        test_order=test_order,
    )
