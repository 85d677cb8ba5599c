"""The sizes and limits of one feasibility check (`checker.CheckOptions` re-exports it)."""

from __future__ import annotations

import dataclasses
from typing import Any

from spark_jax.families import DEFAULT_FAMILY

__all__ = ["CheckOptions"]


# The options a config section sets, under the same names there: the processor settings of a
# `config.ProtocolConfig`, the caps and limits of a `config.sections.FeasibilityConfig`.
_PROTOCOL_KEYS = ("hidden_size", "use_ln", "nb_triplet_fts", "macs_nodes")
_FEASIBILITY_KEYS = ("max_params", "max_macs", "timeout_s", "memory_mb")


def _taken(section: Any, keys: tuple[str, ...], overrides: dict[str, Any]) -> dict[str, Any]:
    """`keys` read from a config section, then `overrides` on top."""
    return {**{key: getattr(section, key) for key in keys}, **overrides}


@dataclasses.dataclass(frozen=True)
class CheckOptions:
    """Sizes and limits of one feasibility check.

    Attributes:
      hidden_size: processor width H (inputs [B, N, H]; node output must be [B, N, H]).
      use_ln, nb_triplet_fts: passed to the program's `make_processor`.
      batch, nodes: B and N of the abstract and concrete semantic checks.
      large_nodes: N of the second concrete semantic batch (None: 2 * nodes + 3).
      macs_nodes: N of the MACs reference input (batch 1, width H).
      max_params, max_macs: optional budget caps (None: no cap).
      timeout_s: wall clock for the worker-side stages (warm worker; start-up excluded).
      memory_mb: memory a candidate may add above the warm worker's footprint.
      output_cap_bytes: cap on what a candidate prints and on a worker response.
      family, family_spec: the task family (default CLRS: the processor contract above) and,
        for a family with a sandbox spec, its shapes as JSON (`feasibility.family_checks`).
      warmup_program: the program the sandbox warms up on ('': the CLRS seed).
    """

    hidden_size: int = 128
    use_ln: bool = True
    nb_triplet_fts: int = 8
    batch: int = 2
    nodes: int = 5
    large_nodes: int | None = None
    macs_nodes: int = 16
    max_params: int | None = None
    max_macs: int | None = None
    timeout_s: float = 60.0
    memory_mb: int = 2048
    output_cap_bytes: int = 1 << 16
    family: str = DEFAULT_FAMILY
    family_spec: str = ""
    warmup_program: str = ""

    def __post_init__(self) -> None:
        for key in ("hidden_size", "batch", "nodes", "macs_nodes", "memory_mb", "output_cap_bytes"):
            value = getattr(self, key)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"CheckOptions.{key}: must be a positive integer (got {value!r})")
        if not isinstance(self.nb_triplet_fts, int) or self.nb_triplet_fts < 0:
            raise ValueError(
                f"CheckOptions.nb_triplet_fts: must be an integer >= 0 "
                f"(got {self.nb_triplet_fts!r})"
            )
        if self.large_nodes is not None and (
            not isinstance(self.large_nodes, int) or self.large_nodes <= self.nodes
        ):
            raise ValueError(
                f"CheckOptions.large_nodes: must be an integer > nodes ({self.nodes}) "
                f"(got {self.large_nodes!r})"
            )
        for key in ("max_params", "max_macs"):
            value = getattr(self, key)
            if value is not None and (not isinstance(value, int) or value < 0):
                raise ValueError(
                    f"CheckOptions.{key}: must be None or an integer >= 0 (got {value!r})"
                )
        if not self.timeout_s > 0:
            raise ValueError(f"CheckOptions.timeout_s: must be positive (got {self.timeout_s!r})")

    @classmethod
    def from_protocol(cls, cfg: Any, **overrides: Any) -> "CheckOptions":
        """Options with the processor settings of a `config.ProtocolConfig`."""
        return cls(**_taken(cfg, _PROTOCOL_KEYS, overrides))

    @classmethod
    def from_config(cls, protocol: Any, feasibility: Any, **overrides: Any) -> "CheckOptions":
        """Options for a search: the processor settings of a `ProtocolConfig` and the caps
        and limits of a `config.sections.FeasibilityConfig`."""
        return cls.from_protocol(protocol, **_taken(feasibility, _FEASIBILITY_KEYS, overrides))

    @property
    def semantic_sizes(self) -> tuple[int, int]:
        """The two graph sizes N of the concrete semantic check."""
        return self.nodes, self.large_nodes or 2 * self.nodes + 3

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
