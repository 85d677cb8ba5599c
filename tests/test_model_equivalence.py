"""Whole-model equivalence: our Flax triplet_gmpnn inside BaselineModel vs DeepMind's.

Both models are built as `train_and_score` builds them (same spec, batch, encoders/decoders);
the official model's parameters are copied into ours (processor weights mapped as in
test_ports), and the training loss and every gradient leaf must agree. With equal
parameters the two models train identically, so any score gap comes from initialisation.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

from spark_jax import program as program_lib
from spark_jax.config import protocol as config
from spark_jax.evaluation import bridge, data
from spark_jax.evaluation.port_params import PORT_SCOPE as FLAX_SCOPE
from spark_jax.evaluation.port_params import haiku_to_flax_names
from spark_jax.evaluation.port_params import official_to_port as _to_ours
from spark_jax.evaluation.train import Trainer


@pytest.fixture(scope="module")
def both(seed_paths):
    cfg = config.get_preset("tiny")
    task_data = data.make_task_data("dfs", cfg, seed=0)
    fb = next(task_data.train)
    prog = program_lib.read_program(seed_paths["triplet_gmpnn"])
    ours = Trainer(
        task_data.spec, fb, bridge.processor_factory(prog, cfg.use_ln, cfg.nb_triplet_fts), cfg
    )
    official = Trainer(
        task_data.spec,
        fb,
        bridge.official_processor_factory("triplet_gmpnn", cfg.use_ln, cfg.nb_triplet_fts),
        cfg,
    )
    ours.init(fb.features, seed=1)
    official.init(fb.features, seed=1)
    mapping = haiku_to_flax_names(triplets=True, gated=True, use_ln=cfg.use_ln)
    return ours, official, fb, mapping


def test_param_trees_match_and_encoders_draw_alike(both):
    ours, official, _, mapping = both
    theirs = jax.device_get(official.params)
    mine = jax.device_get(ours.params)
    assert set(_to_ours(theirs, mapping)) == set(mine)
    # Encoders are created before the processor, so the same seed draws the same weights.
    for name in (k for k in mine if "_enc_" in k):
        np.testing.assert_array_equal(mine[name]["w"], theirs[name]["w"], err_msg=name)


def test_loss_and_gradients_match_given_equal_params(both):
    ours, official, fb, mapping = both
    theirs = jax.device_get(official.params)
    shared = _to_ours(theirs, mapping)
    key = jax.random.PRNGKey(5)
    loss_o, grads_o = jax.value_and_grad(ours.model._loss)(shared, key, fb, 0)
    loss_f, grads_f = jax.value_and_grad(official.model._loss)(theirs, key, fb, 0)
    assert np.isfinite(float(loss_f))
    np.testing.assert_allclose(float(loss_o), float(loss_f), rtol=1e-5)
    grads_f = _to_ours(grads_f, mapping)
    assert set(grads_o) == set(grads_f)
    for name in grads_o:
        for leaf in grads_o[name]:
            np.testing.assert_allclose(
                grads_o[name][leaf],
                grads_f[name][leaf],
                rtol=1e-4,
                atol=1e-6,
                err_msg=f"{name}/{leaf}",
            )
    proc = [k for k in grads_o if k.startswith(FLAX_SCOPE)]
    assert proc and all(np.any(g != 0) for k in proc for g in grads_o[k].values())
