"""The search's YAML configuration, validated into typed, frozen records.

Unknown keys and bad values are `ConfigError`s naming the key path (`search.executor.kind`).
With no file, `default_config()` is the embedded default: dfs, `smoke` protocol, the offline
(rule-based, non-LLM) editor, a small budget, one local CPU worker, 1 evaluation in flight.

Example (every key optional):

    task: dfs
    preset: smoke
    protocol: {train_steps: 200}        # overrides of the preset's fields
    seed: 0
    seed_program: processors/triplet_gmpnn.py
    budget: 4                           # evaluated candidates, the seed included
    max_attempts: 12                    # proposals, feasible or not
    editor: {kind: llm, llm: {kind: openai, base_url: http://127.0.0.1:8000/v1,
             model: qwen3, api_key_env: OPENAI_API_KEY}, record: calls.jsonl}
    operator: {mode: spark, factor_choice: asr, use_rc: true, asr_retries: 3}
    archive: {num_islands: 5, population_size: 100, archive_size: 100}
    executor: {kind: local, num_workers: 1, in_flight: 1, timeout_s: 3600}
    feasibility: {max_params: null, max_macs: null, timeout_s: 60, memory_mb: 2048}
    cascade: {threshold: -100, fraction: 0.25}
"""
from __future__ import annotations

import dataclasses
import pathlib
from typing import Any, Mapping

import yaml

from spark_jax.util import resources

from spark_jax.config import protocol as config_lib
from spark_jax.search.archive import ArchiveConfig
from spark_jax.config.protocol import ConfigError, ProtocolConfig
from spark_jax.operator.step import OperatorConfig
from spark_jax.config.tasks import TaskError, check_task

DEFAULT_SEED_PROGRAM = str(resources.seed_program_path("triplet_gmpnn"))
EDITOR_KINDS = ("offline", "llm")
EXECUTOR_KINDS = ("local", "ray")


@dataclasses.dataclass(frozen=True)
class EditorConfig:
    """Who edits: 'offline' (rules, no LLM) or 'llm' (`llm` is a spark_jax.llm backend config;
    `record` wraps it in a cassette recorder, `replay` replays a cassette with no LLM)."""

    kind: str = "offline"
    llm: Mapping[str, Any] | None = None
    record: str | None = None
    replay: str | None = None
    seed: int = 0


@dataclasses.dataclass(frozen=True)
class ExecutorConfig:
    """Where candidates train: 'local' worker processes or 'ray'.

    in_flight: evaluations running while the next proposals are made (1 = the paper's
    strictly sequential loop). devices: GPU ids to pin local workers to (round-robin).
    """

    kind: str = "local"
    num_workers: int = 1
    in_flight: int = 1
    timeout_s: float | None = None
    memory_mb: int | None = None
    devices: tuple[str, ...] | None = None
    address: str | None = None
    num_gpus_per_job: float = 0.0
    num_cpus_per_job: float = 1.0


@dataclasses.dataclass(frozen=True)
class FeasibilityConfig:
    max_params: int | None = None
    max_macs: int | None = None
    timeout_s: float = 60.0
    memory_mb: int = 2048


@dataclasses.dataclass(frozen=True)
class CascadeConfig:
    """Cascade evaluation: a short first-stage training (`fraction` of the steps) must reach
    validation score `threshold` before the full protocol runs. Scores live in [0, 1], so the
    paper's threshold of -100 can never reject: the first stage is then skipped, not run."""

    threshold: float = -100.0
    fraction: float = 0.25

    @property
    def active(self) -> bool:
        return self.threshold > 0.0


@dataclasses.dataclass(frozen=True)
class SearchConfig:
    task: str = "dfs"
    preset: str = "smoke"
    protocol: ProtocolConfig = dataclasses.field(
        default_factory=lambda: config_lib.get_preset("smoke"))
    seed: int = 0
    seed_program: str = DEFAULT_SEED_PROGRAM
    budget: int = 4
    max_attempts: int | None = 12
    editor: EditorConfig = EditorConfig()
    operator: OperatorConfig = OperatorConfig()
    archive: ArchiveConfig = ArchiveConfig()
    executor: ExecutorConfig = ExecutorConfig()
    feasibility: FeasibilityConfig = FeasibilityConfig()
    cascade: CascadeConfig = CascadeConfig()

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["protocol"] = self.protocol.to_dict()
        d["archive"] = self.archive.to_dict()
        d["protocol"]["train_lengths"] = list(self.protocol.train_lengths)
        if self.executor.devices is not None:
            d["executor"]["devices"] = list(self.executor.devices)
        return d


def default_config() -> SearchConfig:
    """The embedded default search (see module docstring)."""
    return SearchConfig()


def with_seed(cfg: SearchConfig, seed: int) -> SearchConfig:
    """`cfg` with a new top-level seed, and the archive, editor and operator seeds derived
    from it (what `--seed` does)."""
    _int("--seed", seed, 0)
    return dataclasses.replace(
        cfg, seed=seed, archive=dataclasses.replace(cfg.archive, seed=seed),
        editor=dataclasses.replace(cfg.editor, seed=seed),
        operator=dataclasses.replace(cfg.operator, seed=seed))


def _section(cls, values: Any, path: str, **fixed: Any):
    if values is None:
        values = {}
    if not isinstance(values, Mapping):
        raise ConfigError(f"{path}: expected a mapping, got {type(values).__name__}")
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise ConfigError(f"{path}: unknown key(s) {', '.join(unknown)}; "
                          f"known keys: {', '.join(sorted(names))}")
    try:
        return cls(**{**dict(values), **fixed})
    except ConfigError:
        raise
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{path}: {e}") from None


def _resolve_program(path: str) -> str:
    """An absolute path: as given, else relative to the working directory, else to the repo."""
    p = pathlib.Path(path)
    for candidate in ([p] if p.is_absolute() else [pathlib.Path.cwd() / p, resources.asset_dir('processors') / p.name]):
        if candidate.is_file():
            return str(candidate.resolve())
    raise ConfigError(f"search.seed_program: file not found: {path}")


def _int(path: str, value: Any, minimum: int, optional: bool = False) -> int | None:
    if value is None and optional:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ConfigError(f"{path}: must be an integer >= {minimum} (got {value!r})")
    return value


def from_dict(values: Mapping[str, Any]) -> SearchConfig:
    """Validates a parsed YAML mapping into a SearchConfig."""
    if not isinstance(values, Mapping):
        raise ConfigError("search: the config file must be a YAML mapping")
    names = {f.name for f in dataclasses.fields(SearchConfig)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise ConfigError(f"search: unknown key(s) {', '.join(unknown)}; "
                          f"known keys: {', '.join(sorted(names))}")
    task = values.get("task", "dfs")
    try:
        check_task(task)
    except TaskError as e:
        raise ConfigError(f"search.task: {e}") from None
    preset = values.get("preset", "smoke")
    base = config_lib.get_preset(preset)
    overrides = values.get("protocol") or {}
    if not isinstance(overrides, Mapping):
        raise ConfigError("search.protocol: expected a mapping of preset overrides")
    protocol = config_lib.from_dict(dict(overrides), base=base) if overrides else base
    seed_program = _resolve_program(str(values.get("seed_program", DEFAULT_SEED_PROGRAM)))
    editor = _section(EditorConfig, values.get("editor"), "search.editor")
    if editor.kind not in EDITOR_KINDS:
        raise ConfigError(f"search.editor.kind: must be one of {EDITOR_KINDS} "
                          f"(got {editor.kind!r})")
    if editor.kind == "llm" and editor.llm is None and editor.replay is None:
        raise ConfigError("search.editor.llm: an 'llm' editor needs a backend config "
                          "(or editor.replay: a cassette)")
    executor = _section(ExecutorConfig, values.get("executor"), "search.executor")
    if executor.kind not in EXECUTOR_KINDS:
        raise ConfigError(f"search.executor.kind: must be one of {EXECUTOR_KINDS} "
                          f"(got {executor.kind!r})")
    _int("search.executor.num_workers", executor.num_workers, 1)
    _int("search.executor.in_flight", executor.in_flight, 1)
    if executor.devices is not None:
        executor = dataclasses.replace(executor, devices=tuple(str(d) for d in executor.devices))
    archive_values = dict(values.get("archive") or {})
    archive_values.setdefault("seed", values.get("seed", 0))
    cascade = _section(CascadeConfig, values.get("cascade"), "search.cascade")
    if not 0.0 < cascade.fraction <= 1.0:
        raise ConfigError(f"search.cascade.fraction: must be in (0, 1] (got {cascade.fraction})")
    return SearchConfig(
        task=task, preset=preset, protocol=protocol,
        seed=_int("search.seed", values.get("seed", 0), 0),
        seed_program=seed_program,
        budget=_int("search.budget", values.get("budget", 4), 1),
        max_attempts=_int("search.max_attempts", values.get("max_attempts", 12), 1,
                          optional=True),
        editor=editor,
        operator=_section(OperatorConfig, values.get("operator"), "search.operator"),
        archive=_section(ArchiveConfig, archive_values, "search.archive"),
        executor=executor,
        feasibility=_section(FeasibilityConfig, values.get("feasibility"), "search.feasibility"),
        cascade=cascade)


def load(path: str | pathlib.Path) -> SearchConfig:
    """Reads and validates a YAML search config; errors name the file and the key."""
    p = pathlib.Path(path)
    if not p.is_file():
        raise ConfigError(f"config file not found: {p}")
    try:
        values = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as e:
        raise ConfigError(f"{p}: not valid YAML: {e}") from None
    try:
        return from_dict(values or {})
    except ConfigError as e:
        raise ConfigError(f"{p}: {e}") from None
