"""The `proposal_only` config key: measure proposals without training them.

    proposal_only:
      pool: results/llm-reliability/parents/pool.json   # the fixed parent pool
      jobs: 4                                            # attempts in flight at once

A proposal-only search never trains: each attempt draws its parent from the fixed pool by
its attempt index (`search.parent_pool`), proposes, checks feasibility and records the
proposal (validity and entanglement). Null (the default): a normal search.
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Any, Mapping

from spark_jax.config.protocol import ConfigError

__all__ = ["ProposalOnlyConfig", "proposal_only_from"]


@dataclasses.dataclass(frozen=True)
class ProposalOnlyConfig:
    """Proposal-only mode: attempts from a fixed parent pool, proposed and checked, never trained.

    Attributes:
      pool: the parent pool file (a JSON path; stored absolute).
      jobs: attempts in flight at once (each attempt's parent and prompts do not depend on
        the others, so what is recorded does not depend on `jobs`).
    """

    pool: str
    jobs: int = 1


def proposal_only_from(values: Any) -> ProposalOnlyConfig | None:
    """Validates the `proposal_only` mapping (None: off)."""
    if values is None or values is False:
        return None
    where = "search.proposal_only"
    if not isinstance(values, Mapping):
        raise ConfigError(f"{where}: expected a mapping with 'pool' (and 'jobs'), or null")
    unknown = sorted(set(values) - {"pool", "jobs"})
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; known: jobs, pool")
    pool = values.get("pool")
    if not isinstance(pool, str) or not pool:
        raise ConfigError(f"{where}.pool: the parent pool file is required (a JSON path)")
    path = pathlib.Path(pool).expanduser().resolve()
    if not path.is_file():
        raise ConfigError(f"{where}.pool: file not found: {path}")
    jobs = values.get("jobs", 1)
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ConfigError(f"{where}.jobs: must be an integer >= 1 (got {jobs!r})")
    return ProposalOnlyConfig(pool=str(path), jobs=jobs)
