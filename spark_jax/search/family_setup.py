"""The search's side of the task-family boundary: what a run needs from its family.

`check_family` validates the family, benchmark, preset and seed program (one-line
`SearchUsageError`s naming the key, before anything is written) and returns the family's
data record for the run database. `check_options` gives the sandbox check's options (the
protocol's sizes, or the family's shapes), `job_fields` the `EvalJob` fields that route an
evaluation to the family (and the part it scores: the validation part under
`fitness.source: ood_val`, the default; the test part under 'ood_test'), and `contract` the
contract text for the prompts. Each asks the family: its optional `job_fields` and
`prompt_contract` (CLRS: none, its jobs carry the task and protocol; '', the prompts fill
its contract template per parent) stand in for the defaults here.
"""

from __future__ import annotations

import ast
import pathlib
from typing import Any

from spark_jax import families
from spark_jax.config.search import SearchConfig
from spark_jax.search.stops import SearchUsageError

__all__ = ["check_family", "check_options", "contract", "job_fields"]


def _defined_functions(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}


def check_family(cfg: SearchConfig) -> dict[str, Any]:
    """Raises SearchUsageError unless the family has the benchmark and preset and the seed
    program is one of the family's programs; returns the family's data record."""
    from spark_jax.jobs import family_jobs

    try:
        family = family_jobs.get(cfg.family)
    except ValueError as e:
        raise SearchUsageError(f"search.family: {e}") from None
    try:
        family_jobs.check_benchmark(family, cfg.target, cfg.preset)
    except ValueError as e:
        key = "search.preset" if "preset" in str(e) else "search.benchmark"
        raise SearchUsageError(f"{key}: {e}") from None
    source = pathlib.Path(cfg.seed_program).read_text(encoding="utf-8")
    defined = _defined_functions(source)
    others = {family_jobs.get(n).factory for n in families.names()} - {family.factory}
    lenient = getattr(family, "seed_without_factory", False)  # CLRS: the sandbox says so
    if family.factory not in defined and (not lenient or defined & others):
        raise SearchUsageError(
            f"search.seed_program: {cfg.seed_program} defines no {family.factory}(): not a "
            f"program of the task family {cfg.family!r}"
        )
    try:
        return family_jobs.data_record(cfg.family, cfg.target, cfg.preset)
    except ValueError as e:  # e.g. a dataset that is not cached (classify_data.DataError)
        raise SearchUsageError(f"search.benchmark: {' '.join(str(e).split())}") from None


def check_options(cfg: SearchConfig):
    """The sandbox feasibility options of this run's family (`feasibility.CheckOptions`)."""
    from spark_jax.feasibility import checker as feasibility
    from spark_jax.jobs import family_jobs

    extra = family_jobs.check_options(cfg.family, cfg.target, cfg.preset)  # {}: no spec
    return feasibility.CheckOptions.from_config(cfg.protocol, cfg.feasibility, **extra)


def job_fields(cfg: SearchConfig, split: str | None = None) -> dict[str, Any]:
    """The `EvalJob` fields that send an evaluation to the run's family, scored on `split`
    (default: the selection part, 'val' under `fitness.source: ood_val`, else 'test')."""
    if split is None:
        split = "val" if cfg.fitness.source == "ood_val" else "test"
    family = families.get(cfg.family)
    own = getattr(family, "job_fields", None)  # optional in the family contract
    if own is not None:
        return dict(own(cfg.target, cfg.preset, split))
    return dict(
        family=cfg.family, benchmark=cfg.target, family_preset=cfg.preset, family_split=split
    )


def contract(cfg: SearchConfig) -> str:
    """The family's candidate contract for the prompts: its optional `prompt_contract()`
    (CLRS: '', the template the prompts fill per parent), else its `contract_text()`."""
    family = families.get(cfg.family)
    own = getattr(family, "prompt_contract", None)
    return own() if own is not None else family.contract_text()
