"""The search config's section records: one frozen, validated record per YAML section.

Each record is handed whole to the stage that consumes it: `ArchiveConfig` to
`search.archive.IslandArchive`, `OperatorConfig` to `operator.step.SparkOperator`,
`EditorConfig` to `operator.editor_kinds.make_editor`. The evaluation sections (executor,
feasibility, cascade, fitness) live in `config.evaluation` and are re-exported here.
Bad values raise `ConfigError` (a ValueError) naming the key. Pure Python: importing this
module imports no stage code.
"""

from __future__ import annotations

import dataclasses
import numbers
from typing import Any, Mapping

from spark_jax.config import registry
from spark_jax.config.checks import check_number as _check_number
from spark_jax.config.evaluation import (
    EXECUTOR_KINDS,
    FITNESS_SOURCES,
    CascadeConfig,
    ExecutorConfig,
    FeasibilityConfig,
    FitnessConfig,
)
from spark_jax.config.llm import (
    LLM_CONFIGS,
    CommandLLMConfig,
    OpenAILLMConfig,
    check_prices,
    llm_config_from_dict,
)
from spark_jax.config.protocol import ConfigError

__all__ = [
    "check_int",
    "BASELINE_SIZE_KEYS",
    "ArchiveConfig",
    "CascadeConfig",
    "CommandLLMConfig",
    "EditorConfig",
    "ExecutorConfig",
    "FACTOR_CHOICES",
    "FITNESS_SOURCES",
    "FeasibilityConfig",
    "FitnessConfig",
    "LLM_CONFIGS",
    "MODES",
    "OpenAILLMConfig",
    "OperatorConfig",
    "OperatorConfigError",
    "EDITOR_KINDS",
    "EXECUTOR_KINDS",
    "llm_config_from_dict",
]

FACTOR_CHOICES = ("asr", "random", "OPERATOR", "ACTION")
# The shipped operator modes and editor kinds (`config.registry`, where each is registered
# once; a plug-in on $SPARK_JAX_METHODS adds more, which validation accepts).
MODES = registry.shipped_names("mode")
EDITOR_KINDS = registry.shipped_names("editor kind")


@dataclasses.dataclass(frozen=True)
class ArchiveConfig:
    """Settings of an `IslandArchive` (defaults: the paper's, i.e. OpenEvolve's).

    Attributes:
      num_islands: number of island populations.
      population_size: cap on the members of each island.
      archive_size: cap on the elite list used for exploitation.
      feature_dimensions: descriptors binned into cells: 'ood_acc', 'macs', 'val_score'
        or a key of `Candidate.extra`.
      feature_bins: bins per dimension; an int for all, or a mapping dimension -> bins.
      ood_acc_range, macs_range: fixed (low, high) for binning; None adapts to the observed
        min/max. Values outside a fixed range fall into the end bins.
      migration_interval: island generations between migrations.
      migration_rate: fraction of an island's members copied at a migration (at least 1).
      num_top_inspirations, num_diverse_inspirations: inspirations per sample.
      exploration_ratio, exploitation_ratio: parent-selection probabilities (the rest is
        fitness-weighted).
      seed: seed of the archive's random generator (derived from the search's top-level
        seed).
    """

    num_islands: int = 5
    population_size: int = 100
    archive_size: int = 100
    feature_dimensions: tuple[str, ...] = ("ood_acc", "macs")
    feature_bins: int | Mapping[str, int] = 10
    ood_acc_range: tuple[float, float] | None = (0.0, 1.0)
    macs_range: tuple[float, float] | None = None
    migration_interval: int = 10
    migration_rate: float = 0.1
    num_top_inspirations: int = 5
    num_diverse_inspirations: int = 5
    exploration_ratio: float = 0.2
    exploitation_ratio: float = 0.7
    seed: int = 0

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "feature_dimensions", tuple(self.feature_dimensions))
        if isinstance(self.feature_bins, Mapping):
            set_(self, "feature_bins", dict(self.feature_bins))
        for key, minimum in (
            ("num_islands", 1),
            ("population_size", 1),
            ("archive_size", 1),
            ("migration_interval", 1),
            ("num_top_inspirations", 0),
            ("num_diverse_inspirations", 0),
            ("seed", 0),
        ):
            check_int(f"ArchiveConfig.{key}", getattr(self, key), minimum)
        dims = self.feature_dimensions
        if not dims or len(set(dims)) != len(dims):
            raise ValueError(
                f"ArchiveConfig.feature_dimensions: must be non-empty and distinct (got {dims!r})"
            )
        for dim in dims:
            bins = self.feature_bins
            check_int(
                f"ArchiveConfig.feature_bins[{dim!r}]",
                bins.get(dim) if isinstance(bins, dict) else bins,
                1,
            )
        for key in ("migration_rate", "exploration_ratio", "exploitation_ratio"):
            _check_number(f"ArchiveConfig.{key}", getattr(self, key))
        for key in ("ood_acc_range", "macs_range"):
            value = getattr(self, key)
            if value is not None:
                pair = isinstance(value, (list, tuple)) and len(value) == 2
                if pair:
                    for v in value:
                        _check_number(f"ArchiveConfig.{key}", v)
                if not pair or not float(value[0]) < float(value[1]):
                    raise ValueError(
                        f"ArchiveConfig.{key}: must be None or (low, high) with "
                        f"low < high (got {value!r})"
                    )
                set_(self, key, (float(value[0]), float(value[1])))
        ratios = (self.exploration_ratio, self.exploitation_ratio)
        if not 0.0 <= self.migration_rate <= 1.0 or min(ratios) < 0 or sum(ratios) > 1 + 1e-9:
            raise ValueError(
                "ArchiveConfig: migration_rate must be in [0, 1] and "
                "exploration_ratio/exploitation_ratio >= 0 with a sum <= 1 "
                f"(got {self.migration_rate!r}, {ratios})"
            )

    def bins(self, dim: str) -> int:
        """Number of bins of descriptor `dim`."""
        if isinstance(self.feature_bins, Mapping):
            return self.feature_bins[dim]
        return self.feature_bins

    def feature_range(self, dim: str) -> tuple[float, float] | None:
        """Fixed binning range of `dim`, or None for the observed min/max."""
        return {"ood_acc": self.ood_acc_range, "macs": self.macs_range}.get(dim)

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["feature_dimensions"] = list(self.feature_dimensions)
        for key in ("ood_acc_range", "macs_range"):
            out[key] = None if out[key] is None else list(out[key])
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ArchiveConfig:
        return cls(**dict(data))


def check_int(name: str, value: Any, minimum: int) -> None:
    """Raises ValueError unless `value` is an integer (not a bool) >= `minimum`."""
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{name}: must be an integer >= {minimum} (got {value!r})")


# The baselines' population sizes (OperatorConfig keys; each an integer >= 1).
BASELINE_SIZE_KEYS = (
    "funsearch_islands",
    "funsearch_functions_per_prompt",
    "funsearch_reset_every",
    "evoprompting_children",
    "evoprompting_parents",
    "evoprompting_shots",
    "eoh_pop_size",
    "eoh_parents",
    "sequential_window",
)


class OperatorConfigError(ConfigError):
    """Bad operator configuration; the message names the key."""


@dataclasses.dataclass(frozen=True)
class OperatorConfig:
    """The SPARK operator and its ablations.

    Attributes:
      mode: the method: 'spark' (factor-scoped), 'rewrite' (holistic, no factor), a
        baseline (OpenEvolve, EvoPrompting, FunSearch, EoH) or a sampling control.
      factor_choice: 'asr' (router), 'random', or a fixed 'OPERATOR' / 'ACTION'.
      use_rc: ask RC for a directive (False: SAR gets no directive).
      asr_retries: R_asr, router attempts before falling back to ACTION.
      stagnation_window: k: RC reports stagnation when none of the last k evaluated
        candidates raised the best score.
      failure_window: k': RC's failure rate and dominant failure types are over the last k'
        proposals.
      directive_max_chars: RC sanitization cap.
      seed: RNG seed of random factor choice (derived from the search's top-level seed).
      funsearch_islands, funsearch_functions_per_prompt, funsearch_reset_every: FunSearch's
        island count (its paper: 10), programs shown per prompt (k = 2) and the number of
        evaluated programs between resets of the weaker half of the islands (FunSearch resets
        every 4 hours of wall time; a count keeps small budgets reproducible).
      evoprompting_children, evoprompting_parents, evoprompting_shots: EvoPrompting's children
        per generation, parents kept per generation and few-shot examples per prompt.
      eoh_pop_size, eoh_parents: EoH's population size (its paper: 20 for large budgets) and
        parents shown to E1/E2.
      sequential_window: K, the last attempts the `sequential` control's prompt shows.
    """

    mode: str = "spark"
    factor_choice: str = "asr"
    use_rc: bool = True
    asr_retries: int = 3
    stagnation_window: int = 3
    failure_window: int = 10
    directive_max_chars: int = 600
    seed: int = 0
    funsearch_islands: int = 4
    funsearch_functions_per_prompt: int = 2
    funsearch_reset_every: int = 8
    evoprompting_children: int = 4
    evoprompting_parents: int = 4
    evoprompting_shots: int = 2
    eoh_pop_size: int = 4
    eoh_parents: int = 2
    sequential_window: int = 8

    def __post_init__(self):
        if not registry.is_known("mode", self.mode):
            modes = registry.mode_names()
            raise OperatorConfigError(f"operator.mode: must be one of {modes} (got {self.mode!r})")
        if self.factor_choice not in FACTOR_CHOICES:
            raise OperatorConfigError(
                f"operator.factor_choice: must be one of {FACTOR_CHOICES} "
                f"(got {self.factor_choice!r})"
            )
        if not isinstance(self.use_rc, bool):
            raise OperatorConfigError(
                f"operator.use_rc: must be true or false (got {self.use_rc!r})"
            )
        counts = ("asr_retries", "stagnation_window", "failure_window", "directive_max_chars")
        for key in counts + BASELINE_SIZE_KEYS:
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise OperatorConfigError(
                    f"operator.{key}: must be an integer >= 1 (got {getattr(self, key)!r})"
                )

    @property
    def variant(self) -> str:
        """The paper's name for this configuration."""
        if self.mode == "rewrite":
            return "Global Rewrite"
        if self.mode != "spark":
            return self.mode
        scope = {
            "asr": "ASR",
            "random": "Random-Scope",
            "OPERATOR": "Fixed-OP",
            "ACTION": "Fixed-ACT",
        }[self.factor_choice]
        if self.factor_choice == "asr":
            return "SPARK (ASR+RC+SAR)" if self.use_rc else "ASR+SAR"
        return f"{scope} RC+SAR" if self.use_rc else f"{scope} SAR"


@dataclasses.dataclass(frozen=True)
class EditorConfig:
    """Who plays the three roles: 'offline' (rules, not an LLM) or 'llm'.

    Attributes:
      kind: 'offline' or 'llm'.
      llm: the backend record (`OpenAILLMConfig` or `CommandLLMConfig`) of an 'llm' editor.
      record: wrap the backend in a cassette recorder writing this JSONL file.
      replay: replay this cassette instead of calling any LLM.
      seed: RNG seed of the offline editor (derived from the search's top-level seed).
      prices: optional {model: {prompt_per_mtok, completion_per_mtok}}; the report turns
        each call's token counts into cost with the price of the model that answered it.
      max_consecutive_failures: an LLM editor whose calls fail (no answer: unreachable,
        refused, timed out) on this many proposals in a row stops the search (exit 1,
        resumable). Never unbounded.
      preflight: before the seed trains, one cheap call checks that the backend is
        reachable, accepts the credentials and answers (not for replay cassettes).
    """

    kind: str = "offline"
    llm: OpenAILLMConfig | CommandLLMConfig | None = None
    record: str | None = None
    replay: str | None = None
    seed: int = 0
    prices: Mapping[str, Mapping[str, float]] | None = None
    max_consecutive_failures: int = 5
    preflight: bool = True

    def __post_init__(self) -> None:
        if not registry.is_known("editor kind", self.kind):
            kinds = registry.editor_kind_names()
            raise ConfigError(f"kind: must be one of {kinds} (got {self.kind!r})")
        for key in ("record", "replay"):
            value = getattr(self, key)
            if value is not None and (not isinstance(value, str) or not value):
                raise ConfigError(f"{key}: must be a file path or null (got {value!r})")
        _check_number(
            "max_consecutive_failures", self.max_consecutive_failures, minimum=1, integer=True
        )
        if not isinstance(self.preflight, bool):
            raise ConfigError(f"preflight: must be true or false (got {self.preflight!r})")
        if self.kind == "llm" and self.llm is None and self.replay is None:
            raise ConfigError(
                "llm: an 'llm' editor needs a backend config (or editor.replay: a cassette)"
            )
        if self.prices is not None:
            check_prices(self.prices)
