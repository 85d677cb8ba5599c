"""The CLRS bridge: Flax programs train and evaluate inside the official BaselineModel."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from spark_jax import program as program_lib
from spark_jax.config import protocol as config
from spark_jax.config.tasks import TASK_IO
from spark_jax.evaluation import bridge, data, evaluate
from spark_jax.evaluation.train import Trainer, count_params

# Cheap but real: a couple of steps through encoders, processor, decoders, losses, evaluation.
FAST = config.get_preset("tiny").replace(train_steps=2, eval_every=100)

# CI covers graph, sorting (permutations), pred-as-input and string tasks; all 30 run under -m slow.
CI_TASKS = ("bfs", "insertion_sort", "minimum", "naive_string_matcher")


@pytest.fixture(scope="session")
def dfs_trainer(seed_paths):
    cfg = config.get_preset("tiny")
    task_data = data.make_task_data("dfs", cfg, seed=0)
    fb = next(task_data.train)
    prog = program_lib.read_program(seed_paths["triplet_gmpnn"])
    trainer = Trainer(
        task_data.spec, fb, bridge.processor_factory(prog, cfg.use_ln, cfg.nb_triplet_fts), cfg
    )
    trainer.init(fb.features, seed=1)
    return trainer, task_data, fb


def test_processor_params_carry_clrs_tag(dfs_trainer):
    trainer, _, _ = dfs_trainer
    names = [k for k in trainer.params if "clrs_processor" in k]
    assert names and all(k.split("/")[1].startswith("spark_flax_clrs_processor") for k in names)
    assert count_params(trainer.params, processor_only=True) > 0


def test_processor_receives_gradients(dfs_trainer):
    trainer, task_data, fb = dfs_trainer
    before = {k: v for k, v in trainer.snapshot().items() if "clrs_processor" in k}
    metrics = trainer.step(jax.random.PRNGKey(0), fb)
    after = trainer.snapshot()
    assert np.isfinite(metrics["loss"]) and metrics["grad_norm"] > 0
    changed = [
        k
        for k in before
        if not all(
            np.array_equal(a, b)
            for a, b in zip(
                jax.tree_util.tree_leaves(before[k]), jax.tree_util.tree_leaves(after[k])
            )
        )
    ]
    assert len(changed) == len(before), sorted(set(before) - set(changed))


def test_evaluate_returns_scores_in_range(dfs_trainer):
    trainer, task_data, _ = dfs_trainer
    scores = trainer.evaluate(jax.random.PRNGKey(1), task_data.val_batches)
    assert 0.0 <= scores["score"] <= 1.0


def _train_task(task: str, path):
    prog = program_lib.read_program(path)
    metrics, _ = evaluate.train_and_score(
        bridge.processor_factory(prog, FAST.use_ln, FAST.nb_triplet_fts), task, FAST, seed=0
    )
    assert np.isfinite(metrics["final_loss"])
    assert 0.0 <= metrics["ood_score"] <= 1.0
    assert 0.0 <= metrics["val_score"] <= 1.0


@pytest.mark.parametrize("task", CI_TASKS)
def test_task_trains_through_bridge(task, seed_paths):
    _train_task(task, seed_paths["mpnn"])


@pytest.mark.slow
@pytest.mark.parametrize("task", data.TASKS)
def test_every_clrs_task_trains_through_bridge(task, seed_paths):
    _train_task(task, seed_paths["triplet_gmpnn"])


def test_unknown_task_is_named():
    with pytest.raises(data.TaskError, match="unknown CLRS task 'dfz'"):
        data.check_task("dfz")


def test_wrong_output_width_is_a_clear_program_error(seed_paths, tmp_path):
    src = (
        seed_paths["pgn"]
        .read_text()
        .replace(
            "self.o1 = linear(h)\n        self.o2 = linear(h)",
            "self.o1 = linear(h + 1)\n        self.o2 = linear(h + 1)",
        )
    )
    assert src != seed_paths["pgn"].read_text()
    bad = tmp_path / "wide.py"
    bad.write_text(src)
    with pytest.raises(program_lib.ProgramError, match="width 17, expected 16"):
        evaluate.evaluate_program(program_lib.read_program(bad), "dfs", config.get_preset("tiny"))


def test_static_task_list_matches_clrs():
    import clrs

    assert set(data.TASKS) == set(clrs.CLRS_30_ALGS_SETTINGS) and len(data.TASKS) == 30
    for task in data.TASKS:  # the prompts' description of what is decoded
        spec = clrs.SPECS[task]
        inputs, outputs = (
            tuple((k, v[1], v[2]) for k, v in spec.items() if v[0] == stage)
            for stage in ("input", "output")
        )
        hints = sum(v[0] == "hint" for v in spec.values())
        assert TASK_IO[task] == (inputs, outputs, hints), task
