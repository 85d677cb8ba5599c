"""Equal parameters, equal function: our Flax Triplet-GMPNN port against DeepMind's model.

    write_equivalence(RESULTS_DIR, preset="smoke", tasks="clrs10")
    # python scripts/port_equivalence.py RESULTS_DIR [--preset smoke] [--tasks clrs10]

For each task: both whole models are built as `train_and_score` builds them (same spec, batch,
encoders and decoders), DeepMind's is initialised, its parameters are copied into ours
(`evaluation.port_params`), and the training loss and every gradient leaf are computed on the
same batch with the same key. Writes RESULTS_DIR/equivalence.json (losses, whether they are
bit-identical, the largest absolute gradient difference).
"""

from __future__ import annotations

import json
from pathlib import Path

import jax
import numpy as np

from spark_jax import program as program_lib
from spark_jax.benchmark.plan import CLRS10
from spark_jax.config import assets, protocol
from spark_jax.evaluation import bridge, data, port_params
from spark_jax.evaluation.train import Trainer
from spark_jax.util import labels

__all__ = ["PortMismatch", "check_task", "write_equivalence"]

DATA_SEED, INIT_SEED, LOSS_KEY = 0, 1, 5


class PortMismatch(ValueError):
    """DeepMind's parameter tree does not map onto the port's; the message names the task."""


def check_task(task: str, cfg) -> dict:
    """Loss and gradients of both models on one batch of `task`, at equal parameters."""
    task_data = data.make_task_data(task, cfg, seed=DATA_SEED)
    batch = next(task_data.train)
    program = program_lib.read_program(assets.seed_program_path("triplet_gmpnn"))
    ours = Trainer(
        task_data.spec,
        batch,
        bridge.processor_factory(program, cfg.use_ln, cfg.nb_triplet_fts),
        cfg,
    )
    official = Trainer(
        task_data.spec,
        batch,
        bridge.official_processor_factory("triplet_gmpnn", cfg.use_ln, cfg.nb_triplet_fts),
        cfg,
    )
    ours.init(batch.features, seed=INIT_SEED)  # builds our tree; its values are replaced
    official.init(batch.features, seed=INIT_SEED)
    mapping = port_params.haiku_to_flax_names(triplets=True, gated=True, use_ln=cfg.use_ln)
    theirs = jax.device_get(official.params)
    shared = port_params.official_to_port(theirs, mapping)
    if set(shared) != set(jax.device_get(ours.params)):
        raise PortMismatch(f"{task}: the official tree does not map onto the port's")
    key = jax.random.PRNGKey(LOSS_KEY)
    loss_p, grads_p = jax.value_and_grad(ours.model._loss)(shared, key, batch, 0)
    loss_o, grads_o = jax.value_and_grad(official.model._loss)(theirs, key, batch, 0)
    grads_o = port_params.official_to_port(grads_o, mapping)
    diffs = [
        float(np.max(np.abs(np.asarray(grads_p[name][leaf]) - np.asarray(grads_o[name][leaf]))))
        for name in grads_p
        for leaf in grads_p[name]
    ]
    return dict(
        task=task,
        loss_official=float(loss_o),
        loss_port=float(loss_p),
        max_abs_grad_diff=max(diffs),
        grad_leaves=len(diffs),
    )


def write_equivalence(results: Path, preset: str, tasks: str = "clrs10") -> Path:
    """Checks each task of `tasks` ("clrs10" or comma-separated names; a JSON line per task to
    stdout) and writes RESULTS_DIR/equivalence.json; returns its path.

    Raises:
      PortMismatch: a task whose official tree does not map onto the port's.
    """
    cfg = protocol.get_preset(preset)
    rows = []
    for task in list(CLRS10) if tasks == "clrs10" else tasks.split(","):
        rows.append(check_task(task, cfg))
        print(json.dumps(rows[-1]), flush=True)
    record = dict(
        preset=cfg.name,
        data_seed=DATA_SEED,
        init_seed=INIT_SEED,
        loss_key=LOSS_KEY,
        machine=labels.machine_label(),
        backend=jax.default_backend(),
        versions=labels.package_versions(("jax", "jaxlib", "flax", "dm-haiku", "dm-clrs")),
        tasks=rows,
    )
    results.mkdir(parents=True, exist_ok=True)
    (results / "equivalence.json").write_text(json.dumps(record, indent=1) + "\n")
    return results / "equivalence.json"
