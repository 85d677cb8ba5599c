"""pjit training: 2 host devices give the same losses as 1 device."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np

SCRIPT = textwrap.dedent("""
    import json, jax
    from spark_jax.evaluation import bridge
    from spark_jax.config import protocol as config
    from spark_jax.evaluation import data
    from spark_jax import program as program_lib
    from spark_jax.evaluation.train import Trainer
    assert len(jax.local_devices()) == 2, jax.local_devices()
    cfg = config.get_preset("tiny")
    task_data = data.make_task_data("bfs", cfg, seed=0)
    batches = [next(task_data.train) for _ in range(3)]
    prog = program_lib.read_program("processors/triplet_gmpnn.py")
    out = {}
    for n in (1, 2):
        factory = bridge.processor_factory(prog, cfg.use_ln, cfg.nb_triplet_fts)
        trainer = Trainer(task_data.spec, batches[0], factory, cfg,
                          devices=jax.local_devices()[:n])
        trainer.init(batches[0].features, seed=1)
        key = jax.random.PRNGKey(0)
        losses = []
        for fb in batches:
            key, sub = jax.random.split(key)
            losses.append(trainer.step(sub, fb)["loss"])
        devices = min(len(l.sharding.device_set) for l in jax.tree_util.tree_leaves(trainer.params))
        val = trainer.evaluate(jax.random.PRNGKey(1), task_data.val_batches)["score"]
        # The batch itself is split over the devices: rows (axis 0) of inputs, lengths and
        # outputs, axis 1 of the time-major hints; each device holds 1/n of them.
        fb = trainer.shard_feedback(batches[0])
        leaves = jax.tree_util.tree_leaves
        rows = leaves((fb.features.inputs, fb.features.lengths, fb.outputs))
        hints = leaves(fb.features.hints)
        def split(leaf, axis):
            return (len(leaf.sharding.device_set) == n
                    and leaf.sharding.shard_shape(leaf.shape)[axis] * n == leaf.shape[axis])
        batch_split = n > 1 and bool(rows and hints) and all(
            split(l, 0) for l in rows) and all(split(l, 1) for l in hints)
        out[n] = dict(losses=losses, val=val, param_devices=devices, batch_split=batch_split,
                      batch_rows=int(rows[0].shape[0]))
    print("RESULT" + json.dumps(out))
""")


def test_two_devices_match_one_device(seed_paths):
    env = dict(
        os.environ,
        XLA_FLAGS="--xla_force_host_platform_device_count=2",
        JAX_PLATFORMS="cpu",
        TF_CPP_MIN_LOG_LEVEL="3",
    )
    root = seed_paths["triplet_gmpnn"].parents[1]
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT")][-1]
    out = json.loads(line[len("RESULT") :])
    one, two = out["1"], out["2"]
    np.testing.assert_allclose(two["losses"], one["losses"], rtol=1e-4, atol=1e-5)
    assert abs(two["val"] - one["val"]) < 1e-6
    assert one["param_devices"] == 1 and two["param_devices"] == 2
    assert two["batch_rows"] % 2 == 0 and two["batch_split"] is True
