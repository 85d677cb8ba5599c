"""Identity before training: do two programs compute the same function on a task?

Two programs whose training on a task would give the same figures need not both be trained.
The check builds both whole CLRS models (`Trainer`, the evaluation's own) on the task under
the protocol and, for each of `INIT_SEEDS`:

1. initialises both from the same key: every parameter array the two trees share (same path,
   shape and dtype) must be bit-identical;
2. on `PROBE_BATCHES` training batches of the task (every training length once, a fixed data
   seed), computes the training loss and its gradient with respect to every parameter
   (`jax.value_and_grad` of CLRS's own loss, as a training step does): the losses and the
   shared parameters' gradients must be bit-identical, and every parameter array only one
   program has must receive a gradient of exactly zero.

What that proves, and no more: at initialisation from those keys, on those batches, the two
models have the same parameters where it matters and the same loss and gradients, so the
first optimizer step moves them alike (the optimiser sees only gradients; parameters with a
zero gradient do not enter the global-norm clip). It is evidence, not a proof for every input
or for the parameters training reaches later; a program whose extra parameters act only on
inputs the probes never show would pass. Identical sources are identical without a probe.

Candidate code runs only in the child process `python -m spark_jax.evaluation.identity`
(`same_function` starts it), never in the caller's.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from typing import Any, Sequence

__all__ = ["IdentityReport", "INIT_SEEDS", "PROBE_BATCHES", "same_function"]

INIT_SEEDS = (0, 1)
PROBE_BATCHES = 3
DATA_SEED = 12345
LOSS_KEY = 7


@dataclasses.dataclass(frozen=True)
class IdentityReport:
    """One task's answer.

    Attributes:
      task: the CLRS task.
      identical: the two programs passed every probe (or have the same source).
      reason: what was shown, or the first difference found.
    """

    task: str
    identical: bool
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _normalised(source: str) -> str:
    return "\n".join(line.rstrip() for line in source.replace("\r\n", "\n").split("\n")).strip()


def same_function(
    a: tuple[str, str],
    b: tuple[str, str],
    tasks: Sequence[str],
    protocol: dict[str, Any],
    timeout_s: float = 1800.0,
) -> tuple[IdentityReport, ...]:
    """Per task, whether programs a and b ((source, program name); '' source and an
    'official:KIND' name for DeepMind's processor) compute the same function (module
    docstring). Runs the probes in a child process; a crash or timeout there answers 'not
    shown identical' with the reason, never an exception."""
    if _normalised(a[0]) == _normalised(b[0]) and a[1] == b[1]:
        return tuple(IdentityReport(t, True, "the same program source") for t in tasks)
    if not a[0] or not b[0]:
        why = "an official processor against another program: parameter trees not comparable"
        return tuple(IdentityReport(t, False, why) for t in tasks)
    request = json.dumps({"a": a, "b": b, "tasks": list(tasks), "protocol": protocol})
    try:
        done = subprocess.run(
            [sys.executable, "-m", "spark_jax.evaluation.identity"],
            input=request,
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
    except subprocess.TimeoutExpired:
        return tuple(
            IdentityReport(t, False, f"check timed out after {timeout_s:.0f} s") for t in tasks
        )
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("{")]
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1][:200]
        return tuple(IdentityReport(t, False, f"check failed: {tail}") for t in tasks)
    found = [IdentityReport(**json.loads(line)) for line in lines]
    by_task = {r.task: r for r in found}
    return tuple(by_task.get(t, IdentityReport(t, False, "check gave no answer")) for t in tasks)


# -- child side -----------------------------------------------------------------------------


def _flat(tree) -> dict[str, Any]:
    import jax

    leaves = jax.tree_util.tree_flatten_with_path(tree)[0]
    return {jax.tree_util.keystr(path): leaf for path, leaf in leaves}


def _loss_and_grad(model):
    import jax

    return jax.jit(
        lambda params, key, batch: jax.value_and_grad(model._loss)(params, key, batch, 0)
    )


def _probe_task(a, b, task: str, cfg) -> IdentityReport:
    import jax
    import numpy as np

    from spark_jax import program as program_lib
    from spark_jax.evaluation import bridge, data
    from spark_jax.evaluation.train import Trainer

    spec, train = data.train_batches(task, cfg, DATA_SEED)
    batches = [next(train) for _ in range(PROBE_BATCHES)]
    trainers = []
    for source, name in (a, b):
        program = program_lib.Program(source=source, name=name)
        factory = bridge.processor_factory(program, cfg.use_ln, cfg.nb_triplet_fts)
        trainers.append(Trainer(spec, batches[0], factory, cfg))
    grad_fns = [_loss_and_grad(t.model) for t in trainers]
    key = jax.random.PRNGKey(LOSS_KEY)
    extra = 0
    for seed in INIT_SEEDS:
        for t in trainers:
            t.init(batches[0].features, seed=seed)
        pa, pb = (_flat(jax.device_get(t.params)) for t in trainers)
        shared = sorted(set(pa) & set(pb))
        for path in shared:
            if pa[path].shape != pb[path].shape or not np.array_equal(pa[path], pb[path]):
                return IdentityReport(
                    task, False, f"parameter {path} differs at init (seed {seed})"
                )
        extra = len(set(pa) ^ set(pb))
        for i, batch in enumerate(batches):
            (la, ga), (lb, gb) = (f(t.params, key, batch) for f, t in zip(grad_fns, trainers))
            if not np.array_equal(np.asarray(la), np.asarray(lb)):
                return IdentityReport(
                    task, False, f"training loss differs on probe batch {i} (init seed {seed})"
                )
            ga, gb = _flat(jax.device_get(ga)), _flat(jax.device_get(gb))
            for path in shared:
                if not np.array_equal(ga[path], gb[path]):
                    return IdentityReport(task, False, f"gradient of {path} differs (batch {i})")
            for grads, own in ((ga, set(pa) - set(pb)), (gb, set(pb) - set(pa))):
                for path in sorted(own):
                    if np.any(grads[path] != 0):
                        return IdentityReport(
                            task, False, f"{path} (one program only) has a non-zero gradient"
                        )
    note = f"; the {extra} parameter arrays only one program has get zero gradient" if extra else ""
    return IdentityReport(
        task,
        True,
        f"same parameters from init seeds {list(INIT_SEEDS)}, bit-identical loss and gradients "
        f"on {PROBE_BATCHES} probe training batches{note}: shown on these probes at "
        "initialisation, not proven for every input",
    )


def _main() -> int:
    from spark_jax.config import protocol as protocol_lib

    request = json.loads(sys.stdin.read())
    cfg = protocol_lib.from_dict(request["protocol"])
    a, b = tuple(request["a"]), tuple(request["b"])
    for task in request["tasks"]:
        try:
            report = _probe_task(a, b, task, cfg)
        except Exception as e:  # a program that fails here is trained; the check only skips work
            report = IdentityReport(task, False, f"check failed: {type(e).__name__}: {e}"[:300])
        print(json.dumps(report.to_dict()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_main())
