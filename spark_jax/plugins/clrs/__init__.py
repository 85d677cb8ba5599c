"""The CLRS processors as a task family: a thin adapter over the existing CLRS code.

Implements `spark_jax.families.TaskFamily` by delegation, with no behaviour of its own: seeds
are the shipped processor ports (`assets/processors/`), the contract is the processor
contract of the prompts (`assets/prompts/task.md` + `contract.md`, templates the operator fills per
parent), the check is `feasibility.check_program` at the preset's processor sizes, and the
evaluation is `evaluate.evaluate_program` (score: OOD score; metrics: OOD and validation
scores). Benchmarks are the CLRS task names; presets the protocol presets. The search's CLRS
path calls the same functions directly (the sandbox check and `evaluation.evaluate`).
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Any

from spark_jax import families
from spark_jax import program as program_lib
from spark_jax.config import assets
from spark_jax.config import protocol as protocol_lib
from spark_jax.config.tasks import TASKS, check_task

__all__ = ["FAMILY", "ClrsFamily"]


@dataclasses.dataclass(frozen=True)
class ClrsFamily:
    """CLRS algorithmic reasoning behind the task-family boundary."""

    name: str = "clrs"
    benchmarks: tuple[str, ...] = TASKS
    factory: str = program_lib.FACTORY_NAME
    presets: tuple[str, ...] = tuple(protocol_lib.PRESETS)
    default_seed: str = "triplet_gmpnn"
    hosted: bool = False  # the search's own processor path (see `spark_jax.families`)
    test_part: str = "official OOD test set"
    val_part: str = "a separate OOD validation set"

    def seed_programs(self) -> dict[str, pathlib.Path]:
        return assets.seed_programs()

    def contract_text(self) -> str:
        prompts = assets.asset_dir("prompts")  # the task description, then SPARK's part
        parts = [(prompts / f"{n}.md").read_text("utf-8").strip() for n in ("task", "contract")]
        return "\n\n".join(parts)

    def check(self, source: str, benchmark: str, preset: str) -> str | None:
        from spark_jax.feasibility import checker

        check_task(benchmark)
        options = checker.CheckOptions.from_protocol(protocol_lib.get_preset(preset))
        report = checker.check_program(source, options=options)
        return None if report.feasible else f"{report.failure_type}: {report.reason}"

    def evaluate(
        self, source: str, benchmark: str, preset: str, seed: int, split: str = "test"
    ) -> families.Evaluation:
        """'test': the official OOD test set; 'val': the OOD validation set a search selects
        on by default (`FitnessConfig.ood_val_seed`)."""
        from spark_jax.config.sections import FitnessConfig
        from spark_jax.evaluation import evaluate

        cfg = protocol_lib.get_preset(preset)
        if split == "val":
            cfg = FitnessConfig().selection_protocol(cfg)
        ev = evaluate.evaluate_program(program_lib.Program(source=source), benchmark, cfg, seed)
        metrics = {"ood_score": ev.ood_score, "val_score": ev.val_score}
        return families.Evaluation(ev.ood_score, metrics, ev.macs, ev.params, ev.train_seconds)

    def offline_transforms(self) -> tuple:
        """The processor catalogue of the rule-based editor (OPERATOR and ACTION transforms)."""
        from spark_jax.operator.offline.transforms import CATALOGUE

        return CATALOGUE

    def data_record(self, benchmark: str, preset: str) -> dict[str, Any]:
        cfg = protocol_lib.get_preset(preset)
        return dict(
            source="clrs.build_sampler (generated, no download)",
            task=check_task(benchmark),
            train_lengths=list(cfg.train_lengths),
            val_length=cfg.validation_length,
            val_samples=cfg.val_samples,
            test_length=cfg.test_length,
            test_samples=cfg.test_samples,
            test_seed=cfg.test_seed,
        )


FAMILY = ClrsFamily()
