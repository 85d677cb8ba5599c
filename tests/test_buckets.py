"""Hint-length buckets for validation and test scoring: the plan, the batches, and the same
scores as the padded batches (the old path, `buckets=False`) for the same program, task,
preset and seed."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from spark_jax import program as program_lib
from spark_jax.config import protocol
from spark_jax.evaluation import bridge, data, evaluate, seeds

CFG = protocol.get_preset("tiny")
TASK = "quickselect"  # hint lengths vary a lot; 64 batches per fixed set at tiny


def test_plan_keeps_small_or_even_sets_whole():
    assert data.plan_buckets([5, 9, 20], [8, 8, 8]) == [20, 20, 20]  # too few batches
    assert data.plan_buckets([12] * 10, [8] * 10) == [12] * 10  # nothing to save


def test_plan_splits_skewed_sets_into_few_covering_lengths():
    needed = [10, 10, 11, 12, 12, 13, 30, 31, 32, 90]
    plan = data.plan_buckets(needed, [8] * len(needed))
    assert all(p >= n for p, n in zip(plan, needed))  # every batch fits its bucket
    assert plan == sorted(plan) and plan[-1] == 90
    assert 2 <= len(set(plan)) <= data.MAX_BUCKETS
    padded = sum(p * 8 for p in plan)
    assert padded < 0.5 * 90 * 8 * len(needed)


@pytest.fixture(scope="module")
def both_sets():
    return (data.make_task_data(TASK, CFG, seed=0, buckets=b) for b in (False, True))


def test_bucketed_sets_hold_every_sample_once_with_its_own_hints(both_sets):
    padded, bucketed = both_sets
    for name in ("val", "test"):
        old, new = getattr(padded, f"{name}_batches"), getattr(bucketed, f"{name}_batches")
        order = getattr(bucketed, f"{name}_order")
        assert getattr(padded, f"{name}_order") is None
        lengths = {int(fb.features.hints[0].data.shape[0]) for fb in new}
        if name == "test":  # lengths 8..36 at tiny: worth buckets (validation's 5..15 not)
            assert order is not None and 1 < len(lengths) <= data.MAX_BUCKETS
        if order is None:
            order = np.arange(sum(int(fb.features.lengths.shape[0]) for fb in new))
        for fb in new:
            assert int(fb.features.hints[0].data.shape[0]) >= int(fb.features.lengths.max())

        def cat(batches, axis=0):
            return jax.tree_util.tree_map(lambda *xs: np.concatenate(xs, axis), *batches)

        old_out = cat([fb.outputs for fb in old])
        new_out = data.restore_order(cat([fb.outputs for fb in new]), order)
        for a, b in zip(jax.tree_util.tree_leaves(old_out), jax.tree_util.tree_leaves(new_out)):
            np.testing.assert_array_equal(a, b)
        old_len = np.concatenate([fb.features.lengths for fb in old])
        new_len = data.restore_order(np.concatenate([fb.features.lengths for fb in new]), order)
        np.testing.assert_array_equal(old_len, new_len)


@pytest.fixture(scope="module")
def mpnn_factory(seed_paths):
    program = program_lib.read_program(seed_paths["mpnn"])
    return bridge.processor_factory(program, CFG.use_ln, CFG.nb_triplet_fts)


@pytest.fixture(scope="module")
def padded_and_bucketed(mpnn_factory):
    return tuple(
        evaluate.train_and_score(mpnn_factory, TASK, CFG, seed=0, buckets=b)[0]
        for b in (False, True)
    )


def test_buckets_give_bit_identical_scores(padded_and_bucketed):
    padded, bucketed = padded_and_bucketed
    for key in ("ood_score", "val_score", "best_step", "final_loss", "params"):
        assert padded[key] == bucketed[key], key


def test_vmapped_seeds_with_buckets_score_like_one_seed(mpnn_factory, padded_and_bucketed):
    _, alone = padded_and_bucketed
    together = seeds.train_and_score_seeds(mpnn_factory, TASK, CFG, [0, 1])
    assert together[0]["ood_score"] == pytest.approx(alone["ood_score"], abs=1e-6)
    assert together[0]["val_score"] == pytest.approx(alone["val_score"], abs=1e-6)
