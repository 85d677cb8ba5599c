"""How far one training run moves when its initial parameters move by 1e-7
(results/chaos-at-smoke).

`run_chaos` evaluates, for each task, the program as it is (perturbation 0), then once per
perturbation k = 1..P, each the same evaluation (same program, task, preset, training seed,
data) with N(0, scale^2) noise, drawn from PRNGKey(k), added to every initial parameter (the
optimizer state is initialised from the perturbed parameters). Every row lands in OUT/runs.csv
as it finishes; a rerun skips the rows already there (resumable). The compiled executables
are shared through a persistent XLA cache in OUT/.xla-cache (same scores with and without it).
scripts/chaos_at_smoke.py runs it; `spark_jax.results.chaos_at_smoke` writes the tables.
"""

from __future__ import annotations

import csv
import pathlib
import time

import jax

from spark_jax.config.protocol import get_preset
from spark_jax.evaluation.evaluate import evaluate_program
from spark_jax.evaluation.train import Trainer
from spark_jax.program import read_program
from spark_jax.util.labels import measured_on

__all__ = ["FIELDS", "run_chaos", "run_one"]

FIELDS = (
    "task",
    "perturbation",
    "scale",
    "seed",
    "preset",
    "program",
    "ood_test",
    "val_score",
    "max_param_change",
    "train_seconds",
    "wall_seconds",
    "machine",
)


def _done(path: pathlib.Path) -> set[tuple[str, int]]:
    if not path.is_file():
        return set()
    with path.open(newline="", encoding="utf-8") as f:
        return {(r["task"], int(r["perturbation"])) for r in csv.DictReader(f)}


def _perturbing_init(scale: float, index: int, changes: list[float]):
    """`Trainer.init` followed by N(0, scale^2) noise from PRNGKey(index) on every leaf;
    appends the largest change of any parameter, as stored (float32), to `changes`."""
    original = Trainer.init

    def init(self, features, seed):
        original(self, features, seed)
        leaves, tree = jax.tree_util.tree_flatten(self.params)
        keys = jax.random.split(jax.random.PRNGKey(index), len(leaves))
        noisy = [
            leaf + scale * jax.random.normal(key, leaf.shape, leaf.dtype)
            for leaf, key in zip(leaves, keys)
        ]
        changes.append(max(float(abs(n - leaf).max()) for n, leaf in zip(noisy, leaves)))
        params = jax.tree_util.tree_unflatten(tree, noisy)
        self.params = jax.device_put(params, self._replicated)
        self.opt_state = jax.device_put(self.model.opt.init(params), self._replicated)

    return init


def run_one(program, task: str, preset: str, seed: int, scale: float, index: int) -> dict:
    """One evaluation; `index` 0 is the unperturbed run."""
    original, changes = Trainer.init, [0.0]
    if index:
        Trainer.init = _perturbing_init(scale, index, changes)
    start = time.perf_counter()
    try:
        ev = evaluate_program(program, task, get_preset(preset), seed=seed)
    finally:
        Trainer.init = original
    return {
        "task": task,
        "perturbation": index,
        "scale": scale if index else 0.0,
        "seed": seed,
        "preset": preset,
        "program": program.name,
        "ood_test": f"{ev.score:.6f}",
        "val_score": f"{ev.val_score:.6f}",
        "max_param_change": f"{changes[-1]:.3g}",
        "train_seconds": f"{ev.train_seconds:.1f}",
        "wall_seconds": f"{time.perf_counter() - start:.1f}",
        "machine": measured_on(),
    }


def _append_row(runs: pathlib.Path, row: dict) -> None:
    new = not runs.is_file()
    with runs.open("a", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        if new:
            writer.writeheader()
        writer.writerow(row)


def run_chaos(
    out: pathlib.Path,
    tasks: list[str],
    perturbations: int,
    scale: float,
    seed: int,
    preset: str,
    program_path: str,
) -> None:
    """Runs every (task, perturbation) not yet in OUT/runs.csv, appending each row as it
    lands (and a line to stdout)."""
    out.mkdir(parents=True, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", str(out / ".xla-cache"))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    program = read_program(program_path)
    runs = out / "runs.csv"
    done = _done(runs)
    for task in tasks:
        for index in range(perturbations + 1):
            if (task, index) in done:
                continue
            row = run_one(program, task, preset, seed, scale, index)
            _append_row(runs, row)
            print(f"{task} perturbation {index}: OOD {float(row['ood_test']):.2%}", flush=True)
