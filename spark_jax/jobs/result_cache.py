"""Scores of identical evaluation jobs, reused: an executor wrapper over a folder of results.

Every search of a comparison trains the same seed program with the same protocol, task and
search seed (once at its start, once more in its final test): the job is the same, and so,
deterministically, is its result. `ResultCache` answers such a job from the folder where the
first one stored its successful result, so a comparison of M methods trains its seed once per
search seed instead of M times. Keyed by everything that decides a result (the program's
source, task, protocol, seed(s), cascade, family fields) and the versions of the code that
computes it; never by the caller's job id, program name or limits. Only successful results
are stored: a timeout or crash may not repeat. A reused result keeps its original
Evaluation (scores bit-identical, timings those of the run that measured them, so a run's
device hours read as what it would cost alone); its `worker` reads `cache:<original worker>`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import pathlib
from concurrent.futures import Future
from typing import Any

from spark_jax.jobs.contract import EvalJob, EvalResult, Executor
from spark_jax.util import labels
from spark_jax.util.files import write_atomic

__all__ = ["ResultCache", "job_key"]

log = logging.getLogger(__name__)

# The code a result depends on: a result computed by other versions is not reused.
_PACKAGES = ("spark-jax", "jax", "jaxlib", "flax", "optax", "dm-haiku", "dm-clrs")
# Job fields that name or limit a job but do not decide its result.
_NOT_KEYED = ("job_id", "program_name", "timeout_s", "memory_mb")


def _versions() -> dict[str, str]:
    return labels.package_versions(_PACKAGES)


def job_key(job: EvalJob, versions: dict[str, str] | None = None) -> str:
    """The hex digest that identifies `job`'s result (an official processor, whose source is
    empty, is identified by its program name)."""
    fields: dict[str, Any] = {k: v for k, v in job.to_dict().items() if k not in _NOT_KEYED}
    if job.seeds <= 1:
        fields.pop("seed_mode")  # one seed runs alike in every mode: keys from before it hold
    if not job.source:
        fields["program_name"] = job.program_name  # 'official:KIND'
    fields["versions"] = _versions() if versions is None else versions
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ResultCache(Executor):
    """`inner` with a folder of stored results in front of it (see the module doc)."""

    def __init__(self, inner: Executor, directory: str | os.PathLike) -> None:
        self.inner = inner
        self.capacity = inner.capacity
        self.directory = pathlib.Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.hits = 0
        self._versions = _versions()

    def _path(self, job: EvalJob) -> pathlib.Path:
        return self.directory / f"{job_key(job, self._versions)}.json"

    def _load(self, path: pathlib.Path, job: EvalJob) -> EvalResult | None:
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
            result = EvalResult(**stored)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, TypeError, AssertionError) as e:
            log.warning("result cache: ignoring unreadable %s (%s)", path.name, e)
            return None
        if not result.ok:
            return None
        return EvalResult(
            job.job_id, True, result.evaluation, None, "", f"cache:{result.worker}", 0.0
        )

    def _store(self, path: pathlib.Path, future: Future) -> None:
        if future.cancelled() or future.exception() is not None:
            return
        result: EvalResult = future.result()
        if not result.ok:
            return
        try:
            write_atomic(path, json.dumps(result.to_dict(), sort_keys=True))
        except OSError as e:  # a full disk costs the reuse, never the result
            log.warning("result cache: could not store %s (%s)", path.name, e)

    def submit(self, job: EvalJob) -> Future:
        path = self._path(job)
        cached = self._load(path, job)
        if cached is not None:
            self.hits += 1
            done: Future = Future()
            done.set_result(cached)
            return done
        future = self.inner.submit(job)
        future.add_done_callback(lambda f: self._store(path, f))
        return future

    def shutdown(self, wait: bool = True) -> None:
        self.inner.shutdown(wait)
