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

A search cannot compare every child with every trained program pair by pair, so it uses a
*function fingerprint* (`IdentityWorker.fingerprint`): the same probes on one program, hashed
over the parameter arrays that receive a non-zero gradient on some probe (their path, shape,
values and gradients) and the probe losses. Two programs with one fingerprint pass the check
above, except that a parameter array with a zero gradient on every probe is left out on both
sides: at initialisation it moves nothing (a parameter gated by another that starts at zero
still shows, through that gate's own gradient), and gradient training leaves it where it is.

Candidate code runs only in the child process `python -m spark_jax.evaluation.identity`
(`IdentityWorker` starts and supervises it through `spark_jax.workers`), never in the caller's.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
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


class IdentityWorker:
    """One supervised child process that runs the probes (jax and clrs imported once, each
    task's probe batches built once); restarted after any failure. Not thread-safe."""

    def __init__(self, timeout_s: float = 1800.0) -> None:
        self.timeout_s = timeout_s
        self._child = None

    def _ask(self, request: dict[str, Any]) -> list[dict[str, Any]]:
        from spark_jax.workers import supervisor

        if self._child is None or self._child.poll() is not None:
            argv = [sys.executable, "-m", "spark_jax.evaluation.identity"]
            self._child = supervisor.ChildProcess(argv, env=supervisor.python_env())
        deadline = time.monotonic() + self.timeout_s
        try:
            self._child.wait_ready(deadline)
            self._child.send(request)
            frames = []
            while True:
                frame = self._child.read(deadline)
                if frame.get("type") == "done":
                    return frames
                frames.append(frame)
        except (supervisor.ChildFailed, ValueError) as e:
            self._child = None
            reason = getattr(e, "failure", None)
            raise IdentityCheckFailed(str(reason.reason if reason else e)[:200]) from None

    def same_function(self, a, b, tasks: Sequence[str], protocol) -> tuple[IdentityReport, ...]:
        """`same_function` in this worker."""
        if _normalised(a[0]) == _normalised(b[0]) and a[1] == b[1]:
            return tuple(IdentityReport(t, True, "the same program source") for t in tasks)
        if not a[0] or not b[0]:
            why = "an official processor against another program: parameter trees not comparable"
            return tuple(IdentityReport(t, False, why) for t in tasks)
        try:
            frames = self._ask(
                {
                    "type": "same",
                    "a": list(a),
                    "b": list(b),
                    "tasks": list(tasks),
                    "protocol": protocol,
                }
            )
        except IdentityCheckFailed as e:
            return tuple(IdentityReport(t, False, f"check failed: {e}") for t in tasks)
        by_task = {
            f["task"]: IdentityReport(f["task"], f["identical"], f["reason"]) for f in frames
        }
        return tuple(
            by_task.get(t, IdentityReport(t, False, "check gave no answer")) for t in tasks
        )

    def fingerprint(self, source: str, name: str, task: str, protocol) -> str | None:
        """The program's function fingerprint on `task` (module docstring); None when the
        probes fail (the program is then trained as any other)."""
        try:
            frames = self._ask(
                {
                    "type": "fingerprint",
                    "source": source,
                    "name": name,
                    "task": task,
                    "protocol": protocol,
                }
            )
        except IdentityCheckFailed:
            return None
        return frames[0].get("fingerprint") if frames else None

    def close(self) -> None:
        if self._child is not None:
            self._child.kill()
            self._child = None


class IdentityCheckFailed(RuntimeError):
    """The probe process failed (crash, timeout, memory); the message says how."""


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
    worker = IdentityWorker(timeout_s)
    try:
        return worker.same_function(a, b, tasks, protocol)
    finally:
        worker.close()


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


def _trainer(source: str, name: str, spec, batch, cfg):
    """The whole CLRS model of a program, as the evaluation builds it."""
    from spark_jax import program as program_lib
    from spark_jax.evaluation import bridge
    from spark_jax.evaluation.train import Trainer

    program = program_lib.Program(source=source, name=name)
    return Trainer(
        spec, batch, bridge.processor_factory(program, cfg.use_ln, cfg.nb_triplet_fts), cfg
    )


def _probe_task(a, b, task: str, cfg, cache: dict) -> IdentityReport:
    import jax
    import numpy as np

    spec, batches = _batches(task, cfg, cache)
    trainers = [_trainer(source, name, spec, batches[0], cfg) for source, name in (a, b)]
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


def _fingerprint(source: str, name: str, task: str, cfg, cache: dict) -> str:
    import hashlib

    import jax
    import numpy as np

    spec, batches = _batches(task, cfg, cache)
    trainer = _trainer(source, name, spec, batches[0], cfg)
    grad_fn = _loss_and_grad(trainer.model)
    key = jax.random.PRNGKey(LOSS_KEY)
    digest = hashlib.sha256()
    for seed in INIT_SEEDS:
        trainer.init(batches[0].features, seed=seed)
        params = _flat(jax.device_get(trainer.params))
        losses, grads = [], []
        for batch in batches:
            loss, grad = grad_fn(trainer.params, key, batch)
            losses.append(np.asarray(loss))
            grads.append(_flat(jax.device_get(grad)))
        live = sorted(p for p in params if any(np.any(g[p] != 0) for g in grads))
        for path in live:
            leaf = np.asarray(params[path])
            digest.update(f"{path}|{leaf.dtype}|{leaf.shape}".encode())
            digest.update(leaf.tobytes())
            for g in grads:
                digest.update(np.asarray(g[path]).tobytes())
        for loss in losses:
            digest.update(loss.tobytes())
    return digest.hexdigest()[:32]


def _batches(task: str, cfg, cache: dict):
    from spark_jax.evaluation import data

    key = (task, json.dumps(cfg.to_dict(), sort_keys=True, default=str))
    if key not in cache:
        spec, train = data.train_batches(task, cfg, DATA_SEED)
        cache[key] = (spec, [next(train) for _ in range(PROBE_BATCHES)])
    return cache[key]


def _handle(request: dict[str, Any], send, cache: dict) -> None:
    from spark_jax.config import protocol as protocol_lib

    cfg = protocol_lib.from_dict(request["protocol"])
    if request["type"] == "fingerprint":
        try:
            found = _fingerprint(request["source"], request["name"], request["task"], cfg, cache)
        except Exception as e:  # a program that fails here is trained; the probe only skips work
            send(
                {
                    "type": "fingerprint",
                    "fingerprint": None,
                    "error": f"{type(e).__name__}: {e}"[:300],
                }
            )
        else:
            send({"type": "fingerprint", "fingerprint": found})
    else:
        a, b = tuple(request["a"]), tuple(request["b"])
        for task in request["tasks"]:
            try:
                report = _probe_task(a, b, task, cfg, cache)
            except Exception as e:  # as above: a failed check trains both programs
                report = IdentityReport(task, False, f"check failed: {type(e).__name__}: {e}"[:300])
            send({"type": "same", **report.to_dict()})
    send({"type": "done"})


def _main() -> int:
    from spark_jax.workers import child

    cache: dict = {}

    def prepare() -> None:
        import clrs  # noqa: F401 - the slow imports, once
        import jax  # noqa: F401

    return child.serve(lambda request, send: _handle(request, send, cache), prepare=prepare)


if __name__ == "__main__":
    sys.exit(_main())
