"""The staged feasibility check of a candidate program.

Stages, cheapest first; the first failure stops the check and names its type:

  template   tags present once each, in order (`regions.parse_regions`)
  locality   only with a parent and a factor: every change inside the factor's region
  syntax     parses; passes the static policy (`safety`); imports in the sandbox worker
  interface  class `Processor(nn.Module)`, frozen `__call__` parameters, `make_processor`
             with the parent's signature (the seed contract without a parent)
  semantic   `jax.eval_shape` of init + apply at [B, N, H]; no mutable collections; finite
             outputs and, for processors claiming MASKS_NON_EDGES, the masking invariant,
             on a small concrete batch
  budget     optional caps on parameters and MACs

Everything from `syntax` on runs candidate code only in the sandbox worker
(`spark_jax.sandbox`), so hangs, crashes and memory bombs become classified failures.
`check_program` never raises because of a candidate.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import time
from typing import Any, Mapping

from spark_jax.feasibility import policy as safety
from spark_jax.feasibility.options import CheckOptions
from spark_jax.feasibility.sandbox import SandboxWorker, default_worker
from spark_jax.feasibility.timings import Timings
from spark_jax.program import locality, regions

__all__ = [
    "STAGES",
    "FAILURE_TYPES",
    "RUNTIME_FAILURES",
    "CheckOptions",
    "Timings",
    "FeasibilityReport",
    "TAG_BREAK_ENTANGLEMENT",
    "check_program",
]

# The entanglement of a child whose tag lines are broken: tags are scaffolding.
TAG_BREAK_ENTANGLEMENT = "scaffold"
STAGES: tuple[str, ...] = ("template", "locality", "syntax", "interface", "semantic", "budget")
# Failures of the sandbox itself; any worker stage can end with one of these.
RUNTIME_FAILURES: tuple[str, ...] = (
    "timeout",
    "crash",
    "memory",
    "output_too_large",
    "runtime_error",
    "sandbox_error",
)
# Stage -> the failure types it reports besides RUNTIME_FAILURES.
FAILURE_TYPES: Mapping[str, tuple[str, ...]] = {
    "template": ("template", "parent_template"),
    "locality": ("no_change", "locality", "scaffold_edit"),
    "syntax": ("syntax_error", "unsafe_code", "import_error"),
    "interface": (
        "missing_name",
        "bad_base_class",
        "signature_mismatch",
        "bad_factory",
        "parent_error",
        "unsafe_code",
    ),
    "semantic": (
        "shape_mismatch",
        "dtype_mismatch",
        "mutable_collections",
        "non_finite",
        "mask_leak",
        "unsafe_code",
    ),
    "budget": ("over_budget",),
}


@dataclasses.dataclass(frozen=True)
class FeasibilityReport:
    """The outcome of one check (an immutable record; one JSON object via `to_json`).

    Attributes:
      feasible: True iff every stage passed.
      stages_passed: the stages passed, in order ('locality' only when it ran).
      failure_stage: the stage that failed (None when feasible).
      failure_type: a type from FAILURE_TYPES / RUNTIME_FAILURES (None when feasible).
      reason: human-readable cause ('' when feasible).
      timings: stage -> seconds, for the stages that ran.
      entanglement: `locality.classify_entanglement` kind when a parent was given
        ('none', 'operator', 'action', 'entangled', 'scaffold'), else None; a child whose
        tag lines are broken is 'scaffold' (tags are scaffolding).
      params: parameter count (None when the check failed before it was known).
      macs: MACs of one step on the reference input (batch 1, `macs_nodes`, width H).
      masks_non_edges: the masking claim checked: the parent's when a parent was given
        (a child cannot drop the claim), else the program's own.
      diff: the parent -> child unified diff on normalized lines ('' without a parent; a
        plain line diff when the child's tags are broken), computed once with the
        entanglement and locality.
    """

    feasible: bool
    stages_passed: tuple[str, ...]
    failure_stage: str | None
    failure_type: str | None
    reason: str
    timings: Timings = dataclasses.field(default_factory=Timings)
    entanglement: str | None = None
    params: int | None = None
    macs: int | None = None
    masks_non_edges: bool | None = None
    diff: str = ""

    @property
    def total_seconds(self) -> float:
        return sum(self.timings.values())

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "FeasibilityReport":
        """The report back from `to_dict()` (e.g. read from the run database)."""
        return cls(
            feasible=bool(data["feasible"]),
            stages_passed=tuple(data["stages_passed"]),
            failure_stage=data.get("failure_stage"),
            failure_type=data.get("failure_type"),
            reason=data.get("reason", ""),
            timings=Timings(data.get("timings") or {}),
            entanglement=data.get("entanglement"),
            params=data.get("params"),
            macs=data.get("macs"),
            masks_non_edges=data.get("masks_non_edges"),
            diff=data.get("diff", ""),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "feasible": self.feasible,
            "stages_passed": list(self.stages_passed),
            "failure_stage": self.failure_stage,
            "failure_type": self.failure_type,
            "reason": self.reason,
            "timings": dict(self.timings),
            "total_s": self.total_seconds,
            "entanglement": self.entanglement,
            "params": self.params,
            "macs": self.macs,
            "masks_non_edges": self.masks_non_edges,
            "diff": self.diff,
        }

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), **kwargs)

    def summary_lines(self) -> list[str]:
        """Human-readable lines (what `spark-jax check` prints)."""
        if self.feasible:
            lines = ["feasible"]
        else:
            lines = [
                f"infeasible: {self.failure_stage}/{self.failure_type}",
                f"reason: {self.reason}",
            ]
        lines.append("stages passed: " + (", ".join(self.stages_passed) or "-"))
        if self.entanglement is not None:
            lines.append(f"entanglement: {self.entanglement}")
        if self.params is not None:
            lines.append(f"params: {self.params:,}")
        if self.macs is not None:
            lines.append(f"MACs: {self.macs:,}")
        lines.append(
            "timings: "
            + ", ".join(f"{k} {v * 1e3:.0f} ms" for k, v in self.timings.items())
            + f" (total {self.total_seconds * 1e3:.0f} ms)"
        )
        return lines


class _Run:
    """Accumulates stage outcomes of one check."""

    def __init__(self) -> None:
        self.passed: list[str] = []
        self.timings: dict[str, float] = {}
        self.entanglement: str | None = None
        self.diff = ""
        self.info: dict[str, Any] = {}

    def passes(self, stage: str, seconds: float) -> None:
        self.passed.append(stage)
        self.timings[stage] = self.timings.get(stage, 0.0) + seconds

    def report(self, failure: tuple[str, str, str] | None = None) -> FeasibilityReport:
        stage, failure_type, reason = failure if failure else (None, None, "")
        order = {s: i for i, s in enumerate(STAGES)}
        timings = Timings(tuple(sorted(self.timings.items(), key=lambda kv: order[kv[0]])))
        return FeasibilityReport(
            feasible=failure is None,
            stages_passed=tuple(self.passed),
            failure_stage=stage,
            failure_type=failure_type,
            reason=reason,
            timings=timings,
            entanglement=self.entanglement,
            diff=self.diff,
            params=self.info.get("params"),
            macs=self.info.get("macs"),
            masks_non_edges=self.info.get("masks_non_edges"),
        )

    def fail(self, stage: str, failure_type: str, reason: str, seconds: float) -> FeasibilityReport:
        self.timings[stage] = self.timings.get(stage, 0.0) + seconds
        return self.report((stage, failure_type, reason))


def _template_and_locality(
    run: _Run, child: str, parent: str | None, factor: str | None
) -> FeasibilityReport | None:
    """The template stage (and, with a parent and a factor, the locality stage); a report on
    failure. Sets the run's entanglement and diff when there is a parent."""
    start = time.perf_counter()
    try:
        child_regions = regions.parse_regions(child)
    except regions.TemplateError as e:
        if parent is not None:
            # Tag lines are scaffolding: breaking, dropping or moving one is a scaffold edit.
            run.entanglement = TAG_BREAK_ENTANGLEMENT
            run.diff = "".join(
                difflib.unified_diff(
                    parent.splitlines(keepends=True),
                    child.splitlines(keepends=True),
                    "parent",
                    "child",
                )
            )
        return run.fail("template", "template", e.reason, time.perf_counter() - start)
    diff = None
    if parent is not None:
        try:
            parent_regions = regions.parse_regions(parent)
        except regions.TemplateError as e:
            return run.fail(
                "template", "parent_template", f"parent: {e.reason}", time.perf_counter() - start
            )
        diff = locality.diff_parsed(parent_regions, child_regions)
        run.entanglement = locality.entanglement_of(diff).kind
        run.diff = diff.unified
    run.passes("template", time.perf_counter() - start)

    if diff is not None and factor is not None:
        start = time.perf_counter()
        result = locality.locality_of(diff, factor, parent_regions, child_regions)
        if not result.ok:
            failure_type = (
                "no_change"
                if result.diff.empty
                else "scaffold_edit"
                if regions.SCAFFOLD in result.diff.changed
                else "locality"
            )
            return run.fail("locality", failure_type, result.reason, time.perf_counter() - start)
        run.passes("locality", time.perf_counter() - start)
    return None


def _static_stages(
    run: _Run, child: str, parent: str | None, factor: str | None
) -> FeasibilityReport | None:
    """template, locality and the static half of syntax; a report on failure.

    Each program is parsed once and the parent -> child diff computed once; locality,
    entanglement and the report's diff all read that one diff.
    """
    failed = _template_and_locality(run, child, parent, factor)
    if failed is not None:
        return failed
    start = time.perf_counter()
    verdict = safety.check_source_safety(child)
    if not verdict.ok:
        return run.fail(
            "syntax",
            "syntax_error" if verdict.syntax_error else "unsafe_code",
            verdict.reason,
            time.perf_counter() - start,
        )
    run.timings["syntax"] = time.perf_counter() - start  # Passed once it imports.
    return None


def check_program(
    child_source: str,
    *,
    parent_source: str | None = None,
    factor: str | None = None,
    options: CheckOptions | None = None,
    worker: SandboxWorker | None = None,
) -> FeasibilityReport:
    """Runs the feasibility stages on a candidate program.

    Args:
      child_source: the candidate program text.
      parent_source: the program it was edited from (enables entanglement, the
        parent-signature comparison and, with `factor`, the locality stage).
      factor: 'OPERATOR' or 'ACTION', the region the edit was scoped to.
      options: sizes and limits (default CheckOptions()).
      worker: the sandbox worker to use (default: the shared `sandbox.default_worker()`).

    Returns:
      A FeasibilityReport. Candidate problems never raise.

    Raises:
      ValueError: `factor` is unknown, or given without `parent_source` (caller errors).
    """
    if factor is not None:
        if factor not in regions.FACTORS:
            raise ValueError(f"Unexpected factor {factor!r}; expected one of {regions.FACTORS}")
        if parent_source is None:
            raise ValueError("factor given without parent_source")
    options = options if options is not None else CheckOptions()
    run = _Run()
    failed = _static_stages(run, child_source, parent_source, factor)
    if failed is not None:
        return failed

    worker = worker if worker is not None else default_worker()
    start = time.perf_counter()
    try:
        result = worker.check(child_source, options.to_dict(), parent_source=parent_source)
    except Exception as e:  # noqa: BLE001 - the check must never crash the caller.
        return run.fail(
            "syntax", "sandbox_error", f"{type(e).__name__}: {e}", time.perf_counter() - start
        )
    run.info = {k: result.get(k) for k in ("params", "macs", "masks_non_edges")}
    for stage, seconds in result.get("timings", {}).items():
        run.timings[stage] = run.timings.get(stage, 0.0) + float(seconds)
    run.passed.extend(s for s in result.get("stages_passed", []) if s not in run.passed)
    if not result.get("ok"):
        return run.report(
            (result["failure_stage"], result["failure_type"], result.get("reason", ""))
        )

    return _budget_stage(run, options)


def _budget_stage(run: _Run, options: CheckOptions) -> FeasibilityReport:
    """The optional caps on parameters and MACs (measured in the sandbox); the final report."""
    start = time.perf_counter()
    over = []
    if options.max_params is not None and (run.info["params"] or 0) > options.max_params:
        over.append(f"params {run.info['params']:,} > max_params {options.max_params:,}")
    if options.max_macs is not None and (run.info["macs"] or 0) > options.max_macs:
        over.append(f"MACs {run.info['macs']:,} > max_macs {options.max_macs:,}")
    if over:
        return run.fail("budget", "over_budget", "; ".join(over), time.perf_counter() - start)
    run.passes("budget", time.perf_counter() - start)
    return run.report()
