"""K seeds of one candidate as one program: mapped over the seed axis (the default), per seed
bit-identical to K sequential runs; vmapped, the same within float rounding; per-seed scores
in the record, and records from before the fields still load. (At the smoke preset, where a
rounding apart grows into another run, `scripts/seed_modes.py` shows the same in
results/bench.)"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from spark_jax import program as program_lib
from spark_jax.config import protocol
from spark_jax.evaluation import bridge, data, evaluate, seeds
from spark_jax.evaluation.training_options import TrainingOptions
from spark_jax.families import Evaluation
from spark_jax.util import labels

CFG = protocol.get_preset("tiny")


@pytest.fixture(scope="module")
def stacks_and_sequential(seed_paths):
    program = program_lib.read_program(seed_paths["mpnn"])
    two, two_vmapped = TrainingOptions(seeds=2), TrainingOptions(seeds=2, seed_mode="vmap")
    mapped = evaluate.evaluate_program(program, "bfs", CFG, seed=0, training=two)
    vmapped = evaluate.evaluate_program(program, "bfs", CFG, seed=0, training=two_vmapped)
    alone = [evaluate.evaluate_program(program, "bfs", CFG, seed=s) for s in (0, 1)]
    return mapped, vmapped, alone


@pytest.fixture(scope="module")
def vmapped_and_sequential(stacks_and_sequential):
    _, vmapped, alone = stacks_and_sequential
    return vmapped, alone


def test_mapped_seeds_are_bit_identical_to_sequential_runs(stacks_and_sequential):
    mapped, _, alone = stacks_and_sequential
    assert mapped.seed_mode == "map" and alone[0].seed_mode is None
    assert mapped.seeds == (0, 1)
    assert mapped.seed_scores == tuple(e.score for e in alone)
    assert mapped.seed_val_scores == tuple(e.val_score for e in alone)
    assert mapped.seed_best_steps == tuple(e.best_step for e in alone)
    assert mapped.seed_final_losses == tuple(e.final_loss for e in alone)


def test_one_seed_is_not_mapped_and_modes_are_checked(seed_paths):
    program = program_lib.read_program(seed_paths["mpnn"])
    factory = bridge.processor_factory(program, CFG.use_ln, CFG.nb_triplet_fts)
    with pytest.raises(ValueError, match="one seed trains alone"):
        seeds.train_and_score_seeds(factory, "bfs", CFG, [1], mode="map")
    with pytest.raises(ValueError, match="unknown seed mode 'pmap'"):
        seeds.train_and_score_seeds(factory, "bfs", CFG, [1, 2], mode="pmap")


def test_vmapped_seeds_score_like_sequential_runs(vmapped_and_sequential):
    together, alone = vmapped_and_sequential
    assert together.seed_mode == "vmap"
    assert together.seeds == (0, 1) and together.seed == 0
    np.testing.assert_allclose(together.seed_scores, [e.score for e in alone], atol=1e-6)
    np.testing.assert_allclose(together.seed_val_scores, [e.val_score for e in alone], atol=1e-6)
    assert together.score == pytest.approx(np.mean([e.score for e in alone]), abs=1e-6)
    assert together.final_loss == pytest.approx(np.mean([e.final_loss for e in alone]), rel=1e-4)
    assert together.params == alone[0].params and together.steps == CFG.train_steps
    assert alone[0].seeds is None and alone[0].score_std == 0.0
    assert together.machine == alone[0].machine == labels.measured_on()


def test_record_round_trips_per_seed_scores(vmapped_and_sequential):
    together, _ = vmapped_and_sequential
    back = Evaluation.from_dict(json.loads(json.dumps(together.to_dict())))
    assert back == together
    old = {k: v for k, v in together.to_dict().items() if k != "machine"}
    assert Evaluation.from_dict(old).machine is None  # a record from before machines
    assert back.score_mean == pytest.approx(np.mean(together.seed_scores))
    assert back.score_std == pytest.approx(np.std(together.seed_scores))


def test_old_records_without_per_seed_fields_still_load(vmapped_and_sequential):
    _, alone = vmapped_and_sequential
    old = alone[0].to_dict()
    new = ("compile_wall_seconds", "eval_seconds", "loop_steps_per_second", "seed_mode")
    for name in ("seeds", "seed_scores", "seed_val_scores") + new:
        old.pop(name)
    back = Evaluation.from_dict(old)
    assert back == dataclasses.replace(alone[0], **dict.fromkeys(new))
    assert back.score_mean == back.score


def test_seed_tuple():
    assert evaluate.seed_tuple(5, None) == (5,)
    assert evaluate.seed_tuple(5, 3) == (5, 6, 7)
    assert evaluate.seed_tuple(5, (1, 9)) == (1, 9)
    with pytest.raises(ValueError, match="seeds"):
        evaluate.seed_tuple(5, 0)


def test_stacking_pads_hints_in_time_only():
    a, b = (data.make_task_data("bfs", CFG, seed=s).val_batches[0] for s in (0, 1))
    stacked = seeds.stack_feedback([a, b])
    for got, x, y in zip(stacked.features.hints, a.features.hints, b.features.hints):
        t = max(x.data.shape[0], y.data.shape[0])
        assert got.data.shape == (2, t) + x.data.shape[1:]
        np.testing.assert_array_equal(got.data[0, : x.data.shape[0]], x.data)
        assert not np.any(got.data[0, x.data.shape[0] :])
    np.testing.assert_array_equal(stacked.features.lengths[1], b.features.lengths)


def test_cli_rejects_fewer_than_one_seed(seed_paths, capsys):
    from spark_jax import cli

    assert cli.main(["evaluate", str(seed_paths["mpnn"]), "--preset", "tiny", "--seeds", "0"]) == 2
    assert "--seeds must be >= 1" in capsys.readouterr().err
    assert cli.main(["perf", "--preset", "tiny", "--repeats", "0"]) == 2
    assert "--repeats" in capsys.readouterr().err
