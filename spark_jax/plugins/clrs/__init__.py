"""The CLRS processors as a task family: a thin adapter over the existing CLRS code.

Implements `spark_jax.families.TaskFamily` by delegation: seeds are the shipped processor
ports (`assets/processors/`), the contract is the processor contract of the prompts
(`assets/prompts/task.md` + `contract.md`, templates the operator fills per parent), the
check is `feasibility.check_program` at the preset's processor sizes, and the evaluation is
`evaluate.evaluate_program` (score: the OOD score; the training loop's fields filled, no
`metrics`).
Benchmarks are the CLRS task names; presets the protocol presets.

CLRS's processors train under the search's protocol, so the family answers every optional
member of the contract: a job is evaluated whole under its protocol (`evaluate_job`: task,
cascade, K seeds, DeepMind's official processors), carries no family fields (`job_fields`),
the prompts fill the contract template per parent (`prompt_contract`), the benchmark is the
config's `task` (`benchmark_task`), the sandbox takes the processor stages at the protocol's
sizes (`sandbox_spec` None), and the search config is checked against the protocol
(`check_config`). Its run reports describe the protocol's sets (`report_labels`), carry no
family section (`report_section`), and point to `spark-jax benchmark` for re-measuring a best
program (`remeasure_command`).
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Any, Mapping

from spark_jax import families
from spark_jax import program as program_lib
from spark_jax.config import assets
from spark_jax.config import protocol as protocol_lib
from spark_jax.config.tasks import TASKS, check_task
from spark_jax.families import DEFAULT_FAMILY

__all__ = ["FAMILY", "ClrsFamily"]

# The report's score (`report.spread.Metric`), with the measured example of why one training
# seed per program tells nothing (smoke preset, dfs, triplet_gmpnn).
SCORE_METRIC = dict(
    name="OOD accuracy",
    word="OOD",
    scale=100.0,
    unit="%",
    digits=2,
    diff_unit="pp",
    note="One training seed per program cannot separate them: the same architecture's OOD "
    "varies by several points between initialisations (on the smoke preset, one architecture "
    "scored 18% and 29% OOD on dfs from two seeds). Set `fitness.seeds` to 2 or more to "
    "measure the spread.",
)


@dataclasses.dataclass(frozen=True)
class ClrsFamily:
    """CLRS algorithmic reasoning behind the task-family boundary."""

    name: str = DEFAULT_FAMILY
    benchmarks: tuple[str, ...] = TASKS
    factory: str = program_lib.FACTORY_NAME
    presets: tuple[str, ...] = tuple(protocol_lib.PRESETS)
    default_seed: str = "triplet_gmpnn"
    seed_without_factory: bool = True  # the sandbox's interface stage reports it
    remeasure_command: str = "spark-jax benchmark RUN_DIR"  # fresh training seeds
    score_metric: Mapping[str, Any] = dataclasses.field(default_factory=lambda: dict(SCORE_METRIC))
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
        return evaluate.evaluate_program(program_lib.Program(source=source), benchmark, cfg, seed)

    def evaluate_job(self, job: dict[str, Any]) -> Any:
        """One `EvalJob.to_dict()` under its protocol: `evaluate.evaluate_program` (the job's
        cascade and K seeds), or DeepMind's processor for an 'official:' job without source;
        returns its `families.Evaluation`."""
        from spark_jax.evaluation import evaluate
        from spark_jax.evaluation.training_options import TrainingOptions

        cfg = protocol_lib.from_dict(job["protocol"])
        k = int(job.get("seeds") or 1)  # older jobs carry no `seeds`: one
        seeds = k if k > 1 else None
        seed_mode = job.get("seed_mode") or "vmap"  # older K-seed jobs were vmapped
        training = TrainingOptions(seeds=seeds, seed_mode=seed_mode)
        name, seed = job["program_name"], int(job["seed"])
        if not job["source"] and name.startswith(program_lib.OFFICIAL_PREFIX):
            kind = name[len(program_lib.OFFICIAL_PREFIX) :]  # DeepMind's processor, no source
            return evaluate.evaluate_official(kind, job["task"], cfg, seed, training=training)
        if job.get("cascade") is not None:
            training = dataclasses.replace(training, cascade=tuple(job["cascade"]))
        program = program_lib.Program(source=job["source"], name=name)
        return evaluate.evaluate_program(program, job["task"], cfg, seed, training=training)

    def job_fields(self, benchmark: str, preset: str, split: str) -> dict[str, Any]:
        """{}: a CLRS job names its task and carries the protocol (the selection protocol's
        validation seed for 'val')."""
        return {}

    def prompt_contract(self) -> str:
        """'': the prompts fill the processor contract template per parent."""
        return ""

    def benchmark_task(self, benchmark: str) -> str:
        """The CLRS task `benchmark` names (it is the task); TaskError if it is none."""
        return check_task(benchmark)

    def check_config(self, cfg: Any) -> None:
        """A search config's fitness against the protocol: the OOD validation set (selection
        under `fitness.source: ood_val`) must not be the official test set."""
        from spark_jax.config.protocol import ConfigError

        fit = cfg.fitness
        if fit.source == "ood_val" and fit.ood_val_seed == cfg.protocol.test_seed:
            raise ConfigError(
                f"search.fitness.ood_val_seed: must differ from protocol.test_seed "
                f"({cfg.protocol.test_seed}, the official test set's sampler seed)"
            )

    def sandbox_spec(self, benchmark: str, preset: str) -> None:
        """None: processors take the sandbox's processor stages at the protocol's sizes."""
        return None

    def report_labels(self, source: str, ood_val_seed: int | None) -> dict[str, str]:
        """The run report's words for the protocol's sets: what the search selected on, the
        set it reports on, and that set's column in the seed-spread table."""
        if source == "ood_val":
            selection = f"OOD validation set (`ood_val`, sampler seed {ood_val_seed})"
        else:
            selection = "official OOD test set (`ood_test`, the paper's protocol)"
        return dict(
            selection=selection,
            test_set="official OOD test set",
            test_column="official OOD test (%)",
        )

    def report_section(self, meta: Any, seed: Any, best: Any) -> list[str]:
        """[]: a CLRS run report has no family section (its protocol heads the report)."""
        return []

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
