"""The search's YAML configuration, validated into typed, frozen records.

Unknown keys and bad values are `ConfigError`s naming the key path (`search.executor.kind`,
`search.editor.llm.temprature`). With no file, `default_config()` is the embedded default:
dfs, `smoke` protocol, the offline (rule-based, non-LLM) editor, a small budget, one local
CPU worker, 1 evaluation in flight.

Example (every key optional):

    task: dfs
    preset: smoke
    protocol: {train_steps: 200}        # overrides of the preset's fields
    seed: 0                             # the one seed: archive, editor and operator derive theirs
    seed_program: processors/triplet_gmpnn.py   # a file, or a shipped seed's name
    family: clrs                        # task family; others: classify, cartpole
    benchmark: null                     # the family's benchmark (clrs: the task)
    budget: 4                           # evaluated candidates, the seed included
    max_attempts: 12                    # proposals, feasible or not
    editor: {kind: llm, llm: {kind: openai, base_url: http://127.0.0.1:8000/v1,
             model: qwen3, api_key_env: OPENAI_API_KEY}, record: calls.jsonl,
             max_consecutive_failures: 5, preflight: true}
    operator: {mode: spark, factor_choice: asr, use_rc: true, asr_retries: 3}
    archive: {num_islands: 5, population_size: 100, archive_size: 100}
    executor: {kind: local, num_workers: 1, in_flight: 1, timeout_s: 3600}
    feasibility: {max_params: null, max_macs: null, timeout_s: 60, memory_mb: 2048}
    cascade: {threshold: -100, fraction: 0.25}
    fitness: {seeds: 1, source: ood_val, ood_val_seed: 1003}

Seeds: the top-level `seed` is the evaluation seed of every candidate, and the archive's
(parent sampling), the operator's (random factor choice) and the offline editor's RNGs are
seeded with it too; the sections take no seed of their own. `--seed` does the same
(`with_seed`).

Fitness: `fitness.seeds` training seeds per candidate (mean OOD over them ranks it; 1 is the
paper's protocol); `fitness.source` 'ood_val' (default) selects on a separate OOD-size set
drawn with `fitness.ood_val_seed` (another family: on its validation split), the official test
set (test split) then scoring only the final programs; 'ood_test' is the paper's protocol,
selecting on the test set it reports (the report says so).

Task families: `family` (default 'clrs') and `benchmark` (required for another family, e.g.
`family: classify, benchmark: mnist1d`; for 'clrs' the CLRS task, same as `task`). For another
family `preset` names the family's preset (tiny, smoke), `seed_program` a file or one of the
family's shipped seeds (`mlp`, default), and the CLRS-only cascade is refused. Whether the
family has the benchmark is checked at the search's start.

Section records live in `config.sections`; this module assembles and loads them.
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Any, Mapping

import yaml

from spark_jax import families
from spark_jax.config import assets
from spark_jax.config import protocol as protocol_lib
from spark_jax.config.proposal_only import ProposalOnlyConfig, proposal_only_from
from spark_jax.config.protocol import ConfigError, ProtocolConfig
from spark_jax.config.sections import (
    EDITOR_KINDS,
    EXECUTOR_KINDS,
    ArchiveConfig,
    CascadeConfig,
    CommandLLMConfig,
    EditorConfig,
    ExecutorConfig,
    FeasibilityConfig,
    FitnessConfig,
    OpenAILLMConfig,
    OperatorConfig,
    llm_config_from_dict,
)
from spark_jax.config.tasks import TaskError, check_task
from spark_jax.families import DEFAULT_FAMILY

__all__ = [
    "DEFAULT_SEED_PROGRAM",
    "family_names",
    "EDITOR_KINDS",
    "EXECUTOR_KINDS",
    "ArchiveConfig",
    "CascadeConfig",
    "CommandLLMConfig",
    "ConfigError",
    "EditorConfig",
    "ExecutorConfig",
    "FeasibilityConfig",
    "FitnessConfig",
    "OpenAILLMConfig",
    "OperatorConfig",
    "SearchConfig",
    "default_config",
    "from_dict",
    "load",
    "read_mapping",
    "with_family",
    "with_seed",
]

DEFAULT_SEED_PROGRAM = str(assets.seed_program_path("triplet_gmpnn"))
# Sections whose RNG seed derives from the top-level seed.
_SEEDED_SECTIONS = ("archive", "editor", "operator")


@dataclasses.dataclass(frozen=True)
class SearchConfig:
    """One search: what to evolve, on which task and protocol, with which editor, where.

    Attributes:
      task: the CLRS task (for the clrs family; `benchmark` names it too).
      preset: protocol preset name (a CLRS preset, or the family's preset).
      protocol: the preset with overrides (YAML: a mapping of the preset's fields to change).
      seed: the one seed (evaluation seed of every candidate; archive, operator and editor
        RNGs are seeded from it).
      seed_program: the program the search starts from (a file, or a shipped seed's name;
        stored as an absolute path).
      budget: evaluated candidates, the seed included.
      max_attempts: proposals (feasible or not), or null for no cap.
      editor, operator, archive, executor, feasibility, cascade, fitness: the section
        records (`config.sections`).
      family: task family ('clrs', or another family's plug-in: `spark_jax.families.names()`).
      benchmark: the family's benchmark (null for 'clrs': `task`).
      proposal_only: a fixed parent pool whose attempts are proposed and checked, never
        trained (null: off).
    """

    task: str = "dfs"
    preset: str = "smoke"
    protocol: ProtocolConfig = dataclasses.field(
        default_factory=lambda: protocol_lib.get_preset("smoke")
    )
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
    fitness: FitnessConfig = FitnessConfig()
    family: str = DEFAULT_FAMILY
    benchmark: str | None = None
    proposal_only: ProposalOnlyConfig | None = None  # never trains (config.proposal_only)

    @property
    def target(self) -> str:
        """What is evaluated: the family's benchmark, or the CLRS task."""
        return self.benchmark or self.task

    def to_dict(self) -> dict[str, Any]:
        """Plain data that `from_dict` reads back to an equal config (the run's snapshot)."""
        d = dataclasses.asdict(self)
        d["protocol"] = self.protocol.to_dict()
        d["protocol"]["train_lengths"] = list(self.protocol.train_lengths)
        d["archive"] = self.archive.to_dict()
        for section in _SEEDED_SECTIONS:
            d[section].pop("seed", None)
        if self.executor.devices is not None:
            d["executor"]["devices"] = list(self.executor.devices)
        llm = d["editor"]["llm"]
        if llm is not None:
            if isinstance(llm.get("command"), tuple):
                llm["command"] = list(llm["command"])
            if llm.get("extra_body") is not None:
                llm["extra_body"] = dict(llm["extra_body"])
        return d


def default_config() -> SearchConfig:
    """The embedded default search (see module docstring)."""
    return SearchConfig()


def with_seed(cfg: SearchConfig, seed: int) -> SearchConfig:
    """`cfg` with a new top-level seed and the archive, editor and operator seeds derived
    from it (what `--seed` does)."""
    _int("--seed", seed, 0)
    return dataclasses.replace(
        cfg,
        seed=seed,
        archive=dataclasses.replace(cfg.archive, seed=seed),
        editor=dataclasses.replace(cfg.editor, seed=seed),
        operator=dataclasses.replace(cfg.operator, seed=seed),
    )


def _section(cls, values: Any, path: str, **fixed: Any):
    """`cls(**values)`, with unknown keys and bad values reported under `path`."""
    if values is None:
        values = {}
    if not isinstance(values, Mapping):
        raise ConfigError(f"{path}: expected a mapping, got {type(values).__name__}")
    names = {f.name for f in dataclasses.fields(cls)}
    if "seed" in values and path.rpartition(".")[2] in _SEEDED_SECTIONS:
        raise ConfigError(
            f"{path}.seed: not a section key; set the top-level `seed` (the "
            f"archive, editor and operator seeds derive from it)"
        )
    unknown = sorted(set(values) - names)
    if unknown:
        raise ConfigError(
            f"{path}: unknown key(s) {', '.join(f'{path}.{k}' for k in unknown)}; "
            f"known keys: {', '.join(sorted(names - {'seed'}))}"
        )
    try:
        return cls(**{**dict(values), **fixed})
    except ConfigError as e:
        message = str(e)
        section = path.rpartition(".")[2]
        if message.startswith(f"{section}."):
            message = message[len(section) + 1 :]
        raise ConfigError(f"{path}.{message}") from None
    except (TypeError, ValueError) as e:
        raise ConfigError(f"{path}: {e}") from None


def family_names() -> tuple[str, ...]:
    """Every task family's name: the default first, then the registry's others
    (`spark_jax.families`)."""
    return (DEFAULT_FAMILY,) + tuple(n for n in families.names() if n != DEFAULT_FAMILY)


def _family(name: str) -> families.TaskFamily:
    """The task family `name` (its plug-in imported on first use); ConfigError if unknown."""
    try:
        return families.get(name)
    except ValueError as e:
        raise ConfigError(f"search.family: {e}") from None


def _benchmark_task(family: str) -> Any:
    """The family's optional `benchmark_task(benchmark)`: the CLRS task its benchmark names
    (CLRS: the benchmark is the `task`); None for a family whose benchmarks are its own."""
    return getattr(_family(family), "benchmark_task", None)


def _family_seeds(family: str) -> dict[str, pathlib.Path]:
    """The shipped seed programs of `family`, by name."""
    return {k: pathlib.Path(v) for k, v in _family(family).seed_programs().items()}


def with_family(cfg: SearchConfig, family: str | None, benchmark: str | None) -> SearchConfig:
    """`cfg` pointed at another family and/or benchmark (what `--family`/`--benchmark` do),
    validated like the file keys; the CLRS default seed gives way to the family's."""
    values = cfg.to_dict()
    if family is not None and family != cfg.family:
        values["family"] = family
        values["benchmark"] = None
        seed = pathlib.Path(cfg.seed_program).resolve()
        shipped = {p.resolve() for p in _family_seeds(cfg.family).values()}
        if seed.is_relative_to(assets.asset_dir("processors").resolve()) or seed in shipped:
            values["seed_program"] = None  # a shipped seed of the old family: the new default
    if benchmark is not None:
        values["benchmark"] = benchmark
    if _benchmark_task(values["family"]) is not None and values["benchmark"] is not None:
        values["task"] = values["benchmark"]
    return from_dict(values)


def _resolve_program(path: str, family: str = DEFAULT_FAMILY) -> str:
    """An absolute path: as given, else relative to the working directory, else the family's
    shipped seed of that name (a bare name, `.py` or not), else a shipped processor file."""
    p = pathlib.Path(path)
    candidates = [p] if p.is_absolute() else [pathlib.Path.cwd() / p]
    if not p.is_absolute() and p.suffix in ("", ".py") and len(p.parts) == 1:
        shipped = _family_seeds(family).get(p.stem)
        candidates += [shipped] if shipped is not None else []
    if not p.is_absolute():
        candidates.append(assets.asset_dir("processors") / p.name)
    for candidate in candidates:
        if candidate.is_file():
            return str(candidate.resolve())
    raise ConfigError(f"search.seed_program: file not found: {path}")


def _int(path: str, value: Any, minimum: int, optional: bool = False) -> int | None:
    if value is None and optional:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ConfigError(f"{path}: must be an integer >= {minimum} (got {value!r})")
    return value


def _editor(values: Any, seed: int) -> EditorConfig:
    if isinstance(values, Mapping) and values.get("llm") is not None:
        llm = llm_config_from_dict(values["llm"], "search.editor.llm")
        values = {**values, "llm": llm}
    return _section(EditorConfig, values, "search.editor", seed=seed)


def _family_benchmark_task(values: Mapping[str, Any]) -> tuple[str, str | None, str]:
    """The config's task family, benchmark (None: the family's default) and CLRS task."""
    family = values.get("family", DEFAULT_FAMILY)
    if family not in family_names():
        raise ConfigError(
            f"search.family: unknown task family {family!r}; known: {', '.join(family_names())}"
        )
    benchmark = values.get("benchmark")
    if benchmark is not None and (not isinstance(benchmark, str) or not benchmark):
        raise ConfigError(f"search.benchmark: must be a benchmark name (got {benchmark!r})")
    task = values.get("task", "dfs")
    to_task = _benchmark_task(family)
    if to_task is not None and benchmark is not None:
        try:
            to_task(benchmark)
        except TaskError as e:
            raise ConfigError(f"search.benchmark: {e}") from None
        if "task" in values and values["task"] != benchmark:
            raise ConfigError(
                f"search.benchmark: {benchmark!r} differs from search.task {task!r} "
                f"(for the {family} family the benchmark is the task)"
            )
        task = benchmark
    try:
        check_task(task)
    except TaskError as e:
        raise ConfigError(f"search.task: {e}") from None
    return family, benchmark, task


def _preset_protocol(values: Mapping[str, Any]) -> tuple[str, protocol_lib.ProtocolConfig]:
    """The preset's name and the protocol: the preset with the config's overrides."""
    preset = values.get("preset", "smoke")
    overrides = values.get("protocol") or {}
    if not isinstance(overrides, Mapping):
        raise ConfigError("search.protocol: expected a mapping of preset overrides")
    try:
        base = protocol_lib.get_preset(preset)
    except ConfigError as e:
        raise ConfigError(f"search.preset: {e}") from None
    try:
        protocol = protocol_lib.from_dict(dict(overrides), base=base) if overrides else base
    except ConfigError as e:
        raise ConfigError(f"search.{e}") from None
    return preset, protocol


def from_dict(values: Mapping[str, Any]) -> SearchConfig:
    """Validates a parsed YAML mapping into a SearchConfig."""
    if not isinstance(values, Mapping):
        raise ConfigError("search: the config file must be a YAML mapping")
    names = {f.name for f in dataclasses.fields(SearchConfig)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise ConfigError(
            f"search: unknown key(s) {', '.join(unknown)}; known keys: {', '.join(sorted(names))}"
        )
    family, benchmark, task = _family_benchmark_task(values)
    preset, protocol = _preset_protocol(values)
    seed = _int("search.seed", values.get("seed", 0), 0)
    cfg = SearchConfig(
        task=task,
        preset=preset,
        protocol=protocol,
        seed=seed,
        seed_program=_seed_program(values.get("seed_program"), family),
        budget=_int("search.budget", values.get("budget", 4), 1),
        max_attempts=_int("search.max_attempts", values.get("max_attempts", 12), 1, optional=True),
        editor=_editor(values.get("editor"), seed),
        operator=_section(OperatorConfig, values.get("operator"), "search.operator", seed=seed),
        archive=_section(ArchiveConfig, values.get("archive"), "search.archive", seed=seed),
        executor=_section(ExecutorConfig, values.get("executor"), "search.executor"),
        feasibility=_section(FeasibilityConfig, values.get("feasibility"), "search.feasibility"),
        cascade=_section(CascadeConfig, values.get("cascade"), "search.cascade"),
        fitness=_section(FitnessConfig, values.get("fitness"), "search.fitness"),
        family=family,
        benchmark=benchmark,
        proposal_only=proposal_only_from(values.get("proposal_only")),
    )
    _check_fitness(cfg)
    _check_family(cfg)
    return cfg


def _seed_program(value: Any, family: str) -> str:
    if value is None:
        value = _family_seeds(family)[_family(family).default_seed]
    return _resolve_program(str(value), family)


def _check_family(cfg: SearchConfig) -> None:
    """What a family without its own `check_config` cannot take (the contract's default): a
    missing benchmark, the cascade."""
    if getattr(_family(cfg.family), "check_config", None) is not None:
        return
    if cfg.benchmark is None:
        raise ConfigError(f"search.benchmark: required for the task family {cfg.family!r}")
    if cfg.cascade.active:
        raise ConfigError(f"search.cascade: CLRS-only; not available for {cfg.family!r}")


def _check_fitness(cfg: SearchConfig) -> None:
    """The fitness section against the family's own checks (its optional `check_config`;
    CLRS: the validation set's seed against the protocol's) and the cascade."""
    fit = cfg.fitness
    own = getattr(_family(cfg.family), "check_config", None)
    if own is not None:
        own(cfg)
    if fit.seeds > 1 and cfg.cascade.active:
        raise ConfigError(
            f"search.fitness.seeds: {fit.seeds} seeds per candidate cannot be combined with "
            "an active cascade (search.cascade.threshold > 0)"
        )


def load(path: str | pathlib.Path) -> SearchConfig:
    """Reads and validates a YAML search config; errors name the file and the key."""
    values = read_mapping(path)
    try:
        return from_dict(values)
    except ConfigError as e:
        raise ConfigError(f"{pathlib.Path(path)}: {e}") from None


def read_mapping(path: str | pathlib.Path) -> dict[str, Any]:
    """A YAML config file's mapping, not yet validated (what `load` validates; `compare`
    derives one config per method from it). Errors name the file and what is wrong."""
    p = pathlib.Path(path)
    if not p.is_file():
        raise ConfigError(f"config file not found: {p}")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{p}: not a text file (not UTF-8): expected a YAML mapping") from None
    except OSError as e:
        raise ConfigError(f"{p}: cannot read: {e.strerror or e}") from None
    if "\x00" in text:
        raise ConfigError(f"{p}: not a text file (NUL bytes): expected a YAML mapping")
    try:
        values = yaml.safe_load(text)
    except yaml.YAMLError as e:
        where = getattr(e, "problem_mark", None)
        at = f" at line {where.line + 1}, column {where.column + 1}" if where else ""
        problem = getattr(e, "problem", None) or type(e).__name__
        raise ConfigError(f"{p}: not valid YAML{at}: {problem}") from None
    if values is None:
        raise ConfigError(
            f"{p}: the config file is empty; give at least one key (e.g. `task: dfs`), or run "
            "`spark-jax search` without --config for the embedded default"
        )
    if not isinstance(values, Mapping):
        raise ConfigError(f"{p}: search: the config file must be a YAML mapping")
    return dict(values)
