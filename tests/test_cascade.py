"""The cascade's first training stage: a candidate below the threshold stops there, and
every evaluation says what its stage scored and whether it was promoted."""

from __future__ import annotations

import pytest

from spark_jax import program as program_lib
from spark_jax.config import protocol
from spark_jax.evaluation import evaluate, training_loop
from spark_jax.evaluation.training_options import TrainingOptions

CFG = protocol.get_preset("tiny")  # 8 steps, validated every 4


@pytest.fixture(scope="module")
def mpnn(seed_paths):
    return program_lib.read_program(seed_paths["mpnn"])


def test_stage_length():
    assert training_loop.cascade_stage_steps(8, 0.25) == 2
    assert training_loop.cascade_stage_steps(8, 0.01) == 1
    assert training_loop.cascade_stage_steps(8, 1.0) == 8


def test_no_cascade_records_nothing(mpnn):
    ev = evaluate.evaluate_program(mpnn, "bfs", CFG, seed=0)
    assert ev.steps == CFG.train_steps
    assert (ev.cascade_steps, ev.cascade_val_score, ev.cascade_promoted) == (None, None, None)


def test_unreachable_threshold_stops_after_the_first_stage(mpnn):
    ev = evaluate.evaluate_program(
        mpnn, "bfs", CFG, seed=0, training=TrainingOptions(cascade=(1.5, 0.25))
    )
    assert ev.cascade_promoted is False and ev.cascade_steps == 2 and ev.steps == 2
    assert 0.0 <= ev.cascade_val_score <= 1.0 and ev.val_score == ev.cascade_val_score
    assert 0.0 <= ev.score <= 1.0  # still scored, as it stands


def test_reachable_threshold_promotes_to_full_training(mpnn):
    ev = evaluate.evaluate_program(
        mpnn, "bfs", CFG, seed=0, training=TrainingOptions(cascade=(0.0, 0.5))
    )
    assert ev.cascade_promoted is True and ev.cascade_steps == 4 and ev.steps == 8
    assert ev.val_score >= ev.cascade_val_score
