"""Feasibility, before any training: the staged checker and the isolation it runs in.

  checker        `check_program` -> `FeasibilityReport` (template, locality, syntax,
                 interface, semantic, budget)
  policy         the static safety policy (no os/subprocess/network/file writes)
  sandbox        `SandboxWorker`: the warm, recyclable process that runs candidate code
  sandbox_child  the worker-side stages (runs in the child process)
  stage_checks   the semantic and budget stages' checks and failure helpers (child side)

May import: `workers`, `program`, `config`, `util`.
"""

from spark_jax.feasibility.checker import (
    FAILURE_TYPES,
    STAGES,
    CheckOptions,
    FeasibilityReport,
    check_program,
)
from spark_jax.feasibility.sandbox import SandboxWorker

__all__ = [
    "FAILURE_TYPES",
    "STAGES",
    "CheckOptions",
    "FeasibilityReport",
    "SandboxWorker",
    "check_program",
]
