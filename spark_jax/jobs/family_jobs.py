"""Task families on the search's path: registry, check options and evaluation jobs.

The families themselves are plug-ins found by name (`spark_jax.families.get`). The search
asks this module for a family's sandbox check options (`check_options`) and its data record
(`data_record`), and the worker hands every `EvalJob` to its family (`evaluate_job`): the
family's own `evaluate_job` where it has one (CLRS: the protocol's training loop), else
`run_family_job`, which trains the job's seeds one `evaluate` call each and merges their
`families.Evaluation` records into one (mean score and metrics, per-seed scores, summed
training time).
"""

from __future__ import annotations

import dataclasses
import json
import math
import pathlib
from typing import Any

from spark_jax import families
from spark_jax import program as program_lib
from spark_jax.families import DEFAULT_FAMILY, Evaluation
from spark_jax.util import labels

__all__ = [
    "check_benchmark",
    "check_options",
    "data_record",
    "evaluate_job",
    "get",
    "resolve_seed",
    "run_family_job",
]


def get(name: str) -> families.TaskFamily:
    """The registered family `name`; ValueError naming the known ones."""
    return families.get(name)


def check_benchmark(family: families.TaskFamily, benchmark: str, preset: str) -> None:
    """Raises ValueError unless `family` runs `benchmark` at `preset`."""
    if benchmark not in family.benchmarks:
        raise ValueError(
            f"task family {family.name!r} has no benchmark {benchmark!r}; "
            f"known: {', '.join(family.benchmarks)}"
        )
    if preset not in family.presets:
        raise ValueError(
            f"task family {family.name!r} has no preset {preset!r}; "
            f"known: {', '.join(family.presets)}"
        )


def resolve_seed(family: families.TaskFamily, seed_program: str | None) -> pathlib.Path | None:
    """A shipped seed of `family` by name (or the family default for None); None if the
    name is not one of its seeds (then it is a file path)."""
    seeds = family.seed_programs()
    name = family.default_seed if seed_program is None else seed_program
    return pathlib.Path(seeds[name]) if name in seeds else None


def check_options(family: str, benchmark: str, preset: str) -> dict[str, Any]:
    """CheckOptions fields for a family's sandbox check: its shapes (as JSON) and its default
    seed as the warm-up program (a classification family loads its data here); {} for a
    family without a sandbox spec (CLRS: the protocol's sizes, `CheckOptions.from_config`)."""
    fam = get(family)
    spec = fam.sandbox_spec(benchmark, preset)
    if spec is None:
        return {}
    warmup = resolve_seed(fam, None)
    return dict(
        family=family,
        family_spec=json.dumps(spec, sort_keys=True),
        warmup_program=str(warmup) if warmup else "",
    )


def data_record(family: str, benchmark: str, preset: str) -> dict[str, Any]:
    """The family's fixed data split and seeds, JSON-able, with the family and benchmark."""
    record = dict(get(family).data_record(benchmark, preset))
    return {**record, "family": family, "benchmark": benchmark, "preset": preset}


def evaluate_job(job: dict[str, Any]) -> Evaluation:
    """Evaluates one `EvalJob.to_dict()` by its family: the family's own `evaluate_job` (CLRS:
    the job's protocol, task, cascade and seeds), else `run_family_job`."""
    family = get(job.get("family") or DEFAULT_FAMILY)
    own = getattr(family, "evaluate_job", None)  # optional in the family contract
    return own(job) if own is not None else run_family_job(job)


def run_family_job(job: dict[str, Any]) -> Evaluation:
    """Trains and scores one `EvalJob.to_dict()` of a family (all its seeds) on the
    job's `family_split` only ('val' or 'test')."""
    fam = get(job["family"])
    benchmark, preset = job["benchmark"], job["family_preset"]
    split = job.get("family_split") or "test"
    if split not in families.SPLITS:
        raise ValueError(f"unknown family split {split!r}; known: {', '.join(families.SPLITS)}")
    k = int(job.get("seeds") or 1)
    seeds = tuple(int(job["seed"]) + i for i in range(k))
    results = [fam.evaluate(job["source"], benchmark, preset, s, split) for s in seeds]
    first = results[0]
    scores = tuple(float(r.score) for r in results)
    metrics = {
        name: math.fsum(float(r.metrics[name]) for r in results) / len(results)
        for name in first.metrics or {}
    }
    program = program_lib.Program(source=job["source"], name=job["program_name"])
    return dataclasses.replace(
        first,
        task=benchmark,
        preset=preset,
        seed=seeds[0],
        program=program.name,
        program_sha256=program.sha256,
        score=math.fsum(scores) / len(scores),
        params=int(first.params),
        macs=int(first.macs),
        train_seconds=math.fsum(r.train_seconds for r in results),
        seeds=seeds if k > 1 else None,
        seed_scores=scores if k > 1 else None,
        family=fam.name,
        metrics=metrics,
        machine=labels.measured_on(),
    )
