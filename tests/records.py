"""Builders of the pipeline's records for tests that store or report them without running
an editor, a sandbox or a trainer."""

from __future__ import annotations

import dataclasses
from typing import Any

from spark_jax.families import Evaluation
from spark_jax.feasibility.checker import FeasibilityReport
from spark_jax.jobs.executors import EvalJob, EvalResult
from spark_jax.operator.editors import CallRecord
from spark_jax.operator.step import Proposal


def call(role: str = "sar", **fields: Any) -> CallRecord:
    values = dict(
        role=role,
        prompt=f"{role} prompt",
        prompt_sha256="0" * 64,
        response=f"{role} answer",
        reasoning="",
        parse_outcome="ok",
        backend="offline",
        model="",
        is_llm=False,
        ok=True,
    )
    values.update(fields)
    return CallRecord(**values)


def report(feasible: bool = True, **fields: Any) -> FeasibilityReport:
    values = dict(
        feasible=feasible,
        stages_passed=("template", "locality", "syntax") if feasible else (),
        failure_stage=None if feasible else "syntax",
        failure_type=None if feasible else "syntax_error",
        reason="" if feasible else "bad",
        entanglement="operator",
        diff="--- parent\n+++ child\n",
        params=10,
        macs=100,
    )
    values.update(fields)
    return FeasibilityReport(**values)


def proposal(
    attempt: int,
    status: str = "feasible",
    child_source: str | None = None,
    calls: tuple[CallRecord, ...] | None = None,
    **fields: Any,
) -> Proposal:
    """A proposal of `status`; a feasible one gets a child program and a passing report."""
    feasible = status == "feasible"
    values = dict(
        attempt=attempt,
        parent_id=None,
        mode="spark",
        factor="OPERATOR",
        factor_source="asr",
        directive="widen",
        status=status,
        child_source=child_source
        if child_source is not None or not feasible
        else f"y = {attempt}\n",
        failure_stage=None if feasible else ("edit" if status == "failed" else "syntax"),
        failure_type=None if feasible else ("llm_error" if status == "failed" else "syntax_error"),
        reason="" if feasible else "bad",
        feasibility=None if status == "failed" else report(feasible),
        calls=calls if calls is not None else (call("sar", prompt_tokens=10),),
        editor="offline-rules",
        is_llm=False,
        island=attempt % 5,
    )
    values.update(fields)
    return Proposal(**values)


def evaluation(ood: float = 0.5, **fields: Any) -> Evaluation:
    values = dict(
        task="dfs",
        preset="smoke",
        seed=0,
        program="p",
        program_sha256="",
        score=ood,
        val_score=ood,
        best_step=0,
        params=10,
        model_params=20,
        macs=100,
        macs_nodes=16,
        train_seconds=1.0,
        compile_seconds=2.0,
        init_seconds=0.1,
        steps=10,
        final_loss=0.5,
        steps_per_second=10.0,
        peak_rss_mb=None,
        device_peak_mb=None,
        n_devices=1,
    )
    values.update(fields)
    return Evaluation(**values)


def job(
    job_id: str = "seed",
    task: str = "dfs",
    preset: str = "smoke",
    seed: int = 0,
    source: str = "x = 1\n",
) -> EvalJob:
    return EvalJob(
        job_id=job_id,
        source=source,
        program_name=job_id,
        task=task,
        protocol={"name": preset},
        seed=seed,
    )


def result(
    ood: float | None = 0.5, error_type: str = "error", job_id: str = "seed", **fields: Any
) -> EvalResult:
    """An ok result with OOD `ood`, or a failed one (`ood` None) of `error_type`."""
    if ood is None:
        return EvalResult(job_id, False, None, error_type, "Traceback ...", "test", 1.0)
    return EvalResult(job_id, True, evaluation(ood, **fields), None, "", "test", 1.0)


def replace(record: Any, **fields: Any) -> Any:
    return dataclasses.replace(record, **fields)
