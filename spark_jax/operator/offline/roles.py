"""The three SPARK roles done by rules: the embedded default editor when no LLM is configured.

This is NOT an LLM. Every object here says so (`is_llm = False`, `name = 'offline-rules'`):
- ASR: `BanditRouter`, Thompson sampling over Beta posteriors of each factor's success
  (feasible and improved), restricted to factors that still have an applicable transform.
- RC: `RuleDirector`, a fixed rule table over the paper's signals (stagnation over the last
  k=3 evaluated candidates, failure rate and dominant failure types over the last k'=10
  proposals) -> a prose directive and a preferred edit magnitude.
- SAR: `CatalogueEditor`, draws a scoped libcst transform of the chosen factor from the
  catalogue (weighted towards the directive's magnitude), never repeating one on a parent.
`OfflineEditor` wires the three into the search operator's `editors.Editor` contract.
"""

from __future__ import annotations

import collections
import dataclasses
import hashlib
import random
from typing import Any, Sequence

from spark_jax.operator.editors import CallRecord, Editor, RoleOutput, StepContext
from spark_jax.operator.offline.base import Transform, TransformNotApplicable
from spark_jax.operator.offline.transforms import CATALOGUE
from spark_jax.operator.signals import StepSignals
from spark_jax.program import regions
from spark_jax.util import rngstate

__all__ = [
    "EDITOR_NAME",
    "FALLBACK_FACTOR",
    "StepSignals",
    "Directive",
    "OfflineEdit",
    "NoApplicableTransform",
    "BanditRouter",
    "RuleDirector",
    "CatalogueEditor",
    "OfflineEditor",
]

EDITOR_NAME = "offline-rules"
FALLBACK_FACTOR = "ACTION"  # The paper's ASR fallback.
FAILURE_RATE_HIGH = 0.5


class NoApplicableTransform(LookupError):
    """No catalogue transform of the factor applies to the parent that was not tried on it."""


def _key(source: str) -> str:
    return hashlib.sha256(regions.normalize(source).encode()).hexdigest()


class BanditRouter:
    """ASR by Thompson sampling: one Beta(successes + a, failures + b) posterior per factor."""

    name = EDITOR_NAME
    is_llm = False

    def __init__(
        self,
        seed: int = 0,
        factors: Sequence[str] = regions.FACTORS,
        prior: tuple[float, float] = (1.0, 1.0),
    ) -> None:
        if not factors or any(f not in regions.FACTORS for f in factors):
            raise ValueError(f"Unexpected factors {factors!r}; expected some of {regions.FACTORS}")
        self.factors = tuple(factors)
        self._rng = random.Random(seed)
        self._ab = {f: [float(prior[0]), float(prior[1])] for f in self.factors}

    def choose(self, available: Sequence[str] | None = None) -> str:
        """Samples a factor among `available` (default: all); none available -> ACTION."""
        pool = [f for f in self.factors if available is None or f in available]
        if not pool:
            return FALLBACK_FACTOR
        draws = {f: self._rng.betavariate(*self._ab[f]) for f in pool}
        return max(pool, key=lambda f: draws[f])

    def update(self, factor: str, success: bool) -> None:
        """Records one outcome (success = feasible and improved the best score)."""
        if factor not in self._ab:
            raise ValueError(f"Unexpected factor {factor!r}; expected one of {self.factors}")
        self._ab[factor][0 if success else 1] += 1.0

    def posterior(self, factor: str) -> tuple[float, float]:
        """The (alpha, beta) of `factor`'s Beta posterior."""
        a, b = self._ab[factor]
        return a, b

    def describe(self) -> str:
        return ", ".join(f"{f} Beta({a:g}, {b:g})" for f, (a, b) in self._ab.items())


@dataclasses.dataclass(frozen=True)
class Directive:
    """RC's output.

    Attributes:
      text: Plain-prose directive (no code).
      magnitude: Preferred edit size, 'small' or 'large'.
      prefer_tags: Transform tags to favour (see `Transform.tags`).
      avoid_tags: Transform tags to avoid while anything else applies.
    """

    text: str
    magnitude: str
    prefer_tags: frozenset[str] = frozenset()
    avoid_tags: frozenset[str] = frozenset()


_FACTOR_SCOPE = {
    "OPERATOR": "which modules exist in setup and how they are parameterized",
    "ACTION": "how the existing modules are invoked, wired, masked and aggregated",
}
_WIDTH = frozenset({"width", "depth"})
_SCOPE = "Stay strictly inside the {factor} region and keep the tag lines untouched."
# Failure type -> (advice, prefer tags, avoid tags). Types as in `feasibility`.
FAILURE_RULES: dict[str, tuple[str, frozenset[str], frozenset[str]]] = {
    "mask_leak": (
        "Prefer masking-preserving edits: every sum, mean or max over senders "
        "must stay behind the adjacency mask.",
        frozenset({"masking"}),
        frozenset(),
    ),
    "timeout": (
        "Avoid width or depth increases; keep compute close to the parent.",
        frozenset(),
        _WIDTH,
    ),
    "memory": (
        "Avoid width or depth increases; keep activations the parent size.",
        frozenset(),
        _WIDTH,
    ),
    "over_budget": (
        "Avoid width or depth increases; the parent is near the budget.",
        frozenset(),
        _WIDTH,
    ),
    "output_too_large": ("Avoid width increases.", frozenset(), _WIDTH),
    "locality": (_SCOPE, frozenset(), frozenset()),
    "scaffold_edit": (_SCOPE, frozenset(), frozenset()),
    "template": (_SCOPE, frozenset(), frozenset()),
    "no_change": (
        "Make a real change that was not tried on this parent.",
        frozenset(),
        frozenset(),
    ),
    "duplicate": (
        "Make a change that gives a program not trained before (repeats are not retrained).",
        frozenset(),
        frozenset(),
    ),
    "shape_mismatch": (
        "Keep tensor shapes: node output [B, N, H], edge output per node pair or none.",
        frozenset(),
        frozenset({"width"}),
    ),
    "dtype_mismatch": ("Keep float outputs.", frozenset(), frozenset()),
    "non_finite": (
        "Prefer stabilizing edits (normalization, gates, residual paths) over new "
        "interaction terms.",
        frozenset({"norm", "gate", "residual"}),
        frozenset({"interaction"}),
    ),
    "runtime_error": (
        "Prefer simple, well-trodden edits.",
        frozenset({"norm", "activation"}),
        frozenset(),
    ),
    "crash": ("Prefer simple, well-trodden edits.", frozenset({"norm", "activation"}), frozenset()),
}
_GENERIC_FAILURE = (
    "Use only jax, flax.linen and the helpers already in the program; keep the "
    "interface and avoid mutable state.",
    frozenset(),
    frozenset(),
)


class RuleDirector:
    """RC as a rule table over `StepSignals`; the directive is plain prose."""

    name = EDITOR_NAME
    is_llm = False

    def __init__(self, failure_rate_high: float = FAILURE_RATE_HIGH, max_chars: int = 600) -> None:
        self.failure_rate_high = failure_rate_high
        self.max_chars = max_chars

    def direct(self, signals: StepSignals) -> Directive:
        """Bigger edits when stagnating, conservative ones after failures (which win)."""
        factor = signals.factor
        scope = _FACTOR_SCOPE.get(factor, "the selected region")
        parts = [f"Edit the {factor} region: {scope}."]
        failing = signals.failure_rate >= self.failure_rate_high
        if failing:
            magnitude = "small"
            parts.append(
                f"{signals.failure_rate:.0%} of recent proposals failed: make one "
                "small, conservative change."
            )
        elif signals.stagnating:
            magnitude = "large"
            parts.append(
                "The search is stagnating: make a bigger structural change "
                "(aggregation, widths, new paths) rather than a tweak."
            )
        else:
            magnitude = "small"
            parts.append("The search is not stagnating: refine what works with one focused change.")
        prefer: set[str] = set()
        avoid: set[str] = set()
        dominant = signals.dominant_failures[:2]
        if dominant:
            parts.append(f"Dominant recent failures: {', '.join(dominant)}.")
        for failure in dominant:
            advice, more, fewer = FAILURE_RULES.get(failure, _GENERIC_FAILURE)
            if advice.format(factor=factor) not in parts:
                parts.append(advice.format(factor=factor))
            prefer |= more
            avoid |= fewer
        text = " ".join(parts)
        if len(text) > self.max_chars:
            text = text[: self.max_chars].rsplit(" ", 1)[0]
        return Directive(text, magnitude, frozenset(prefer), frozenset(avoid - prefer))


@dataclasses.dataclass(frozen=True)
class OfflineEdit:
    """SAR's output: a complete program made by one catalogue transform.

    Attributes:
      source: The child program.
      transform: The transform's catalogue name.
      factor: The region it edited.
      magnitude: The transform's magnitude.
      description: The transform's rationale.
      editor: Always 'offline-rules'; is_llm: always False.
    """

    source: str
    transform: str
    factor: str
    magnitude: str
    description: str = ""
    editor: str = EDITOR_NAME
    is_llm: bool = False


class CatalogueEditor:
    """SAR by catalogue: applies one untried applicable transform of the factor."""

    name = EDITOR_NAME
    is_llm = False

    def __init__(
        self,
        seed: int = 0,
        catalogue: Sequence[Transform] = CATALOGUE,
        magnitude_weight: float = 3.0,
        tag_weight: float = 2.0,
    ) -> None:
        self.catalogue = tuple(catalogue)
        self.magnitude_weight = magnitude_weight
        self.tag_weight = tag_weight
        self._rng = random.Random(seed)
        self._tried: dict[str, set[str]] = collections.defaultdict(set)

    def tried(self, parent_source: str) -> frozenset[str]:
        """Names of the transforms already applied (or found inapplicable) on this parent."""
        return frozenset(self._tried.get(_key(parent_source), ()))

    def candidates(self, parent_source: str, factor: str) -> tuple[Transform, ...]:
        """Applicable transforms of `factor` not yet tried on this parent, catalogue order."""
        done = self._tried.get(_key(parent_source), set())
        return tuple(
            t
            for t in self.catalogue
            if t.factor == factor and t.name not in done and t.applies(parent_source)
        )

    def _weights(
        self, pool: Sequence[Transform], directive: Directive | None, magnitude: str | None
    ) -> list[float]:
        weights = []
        for t in pool:
            w = 1.0
            if magnitude is not None and t.magnitude == magnitude:
                w *= self.magnitude_weight
            if directive is not None and t.tags & directive.prefer_tags:
                w *= self.tag_weight
            weights.append(w)
        return weights

    def edit(
        self,
        parent_source: str,
        factor: str,
        directive: Directive | str | None = None,
        magnitude: str | None = None,
        rng: random.Random | None = None,
    ) -> OfflineEdit:
        """Applies one transform; raises NoApplicableTransform when none is left."""
        if factor not in regions.FACTORS:
            raise ValueError(f"Unexpected factor {factor!r}; expected one of {regions.FACTORS}")
        rng = self._rng if rng is None else rng
        if isinstance(directive, str):
            directive = None  # Prose from another director carries no structured hints.
        if magnitude is None and directive is not None:
            magnitude = directive.magnitude
        done = self._tried[_key(parent_source)]
        pool = list(self.candidates(parent_source, factor))
        if directive is not None and directive.avoid_tags:
            kept = [t for t in pool if not t.tags & directive.avoid_tags]
            pool = kept or pool
        while pool:
            transform = rng.choices(pool, self._weights(pool, directive, magnitude))[0]
            pool.remove(transform)
            done.add(transform.name)
            try:
                child = transform.apply(parent_source, rng)
            except TransformNotApplicable:
                continue
            return OfflineEdit(
                child, transform.name, factor, transform.magnitude, transform.description
            )
        raise NoApplicableTransform(
            f"no untried {factor} transform applies to this parent "
            f"({len(self.tried(parent_source))} tried)"
        )


def _call(
    role: str,
    prompt: str,
    response: str,
    model: str,
    ok: bool = True,
    outcome: str = "ok",
    error: str = "",
) -> CallRecord:
    return CallRecord.not_llm(role, prompt, response, EDITOR_NAME, model, outcome, ok, error)


class OfflineEditor(Editor):
    """The rule-based editor behind the `editors.Editor` contract. Not an LLM."""

    def __init__(self, seed: int = 0, catalogue: Sequence[Transform] = CATALOGUE) -> None:
        self.name = EDITOR_NAME
        self.is_llm = False
        self.router = BanditRouter(seed)
        self.director = RuleDirector()
        self.sar = CatalogueEditor(seed + 1, catalogue)
        self._directives: dict[str, Directive] = {}

    @property
    def catalogue(self) -> tuple[Transform, ...]:
        """The transforms this editor draws from (the task family's catalogue)."""
        return self.sar.catalogue

    async def route(self, ctx: StepContext) -> RoleOutput:
        source = ctx.parent.source
        available = [f for f in regions.FACTORS if self.sar.candidates(source, f)]
        factor = self.router.choose(available)
        prompt = (
            f"thompson sampling over {self.router.describe()}; factors with untried "
            f"applicable transforms: {', '.join(available) or 'none'}"
        )
        return RoleOutput(factor, _call("route", prompt, factor, "thompson-bandit"))

    async def direct(self, ctx: StepContext, factor: str, signals: StepSignals) -> RoleOutput:
        directive = self.director.direct(dataclasses.replace(signals, factor=factor))
        self._directives[directive.text] = directive
        prompt = (
            f"rule table: factor={factor}, stagnating={signals.stagnating}, "
            f"failure_rate={signals.failure_rate:.2f}, "
            f"dominant_failures={','.join(signals.dominant_failures) or 'none'}"
        )
        return RoleOutput(
            directive.text,
            _call("directive", prompt, directive.text, f"rules:{directive.magnitude}"),
        )

    async def edit(self, ctx: StepContext, factor: str | None, directive: str) -> RoleOutput:
        directive_rec = self._directives.get(directive)
        source = ctx.parent.source
        prompt = f"catalogue edit: factor={factor or 'BOTH'}; directive={directive!r}"
        try:
            if factor is not None:
                edits = [self.sar.edit(source, factor, directive_rec)]
            else:  # An unscoped rewrite: one transform per factor, entangled on purpose.
                first = self.sar.edit(source, "OPERATOR", directive_rec)
                edits = [first, self.sar.edit(first.source, "ACTION", directive_rec)]
        except NoApplicableTransform as e:
            return RoleOutput(
                None,
                _call(
                    "edit",
                    prompt,
                    "",
                    "catalogue",
                    ok=False,
                    outcome="no_applicable_transform",
                    error=str(e),
                ),
            )
        names = "+".join(e.transform for e in edits)
        return RoleOutput(
            edits[-1].source, _call("edit", prompt, edits[-1].source, f"catalogue:{names}")
        )

    def observe(self, factor: str | None, success: bool, detail: Any = None) -> None:
        if factor in regions.FACTORS:
            self.router.update(factor, success)

    def state(self) -> dict[str, Any]:
        """Bandit posteriors, tried transforms and RNG states (for run snapshots)."""
        return dict(
            router_rng=rngstate.dump(self.router._rng),
            router_ab={f: list(ab) for f, ab in self.router._ab.items()},
            sar_rng=rngstate.dump(self.sar._rng),
            sar_tried={k: sorted(v) for k, v in self.sar._tried.items()},
        )

    def load_state(self, state: dict[str, Any]) -> None:
        rngstate.load(self.router._rng, state["router_rng"])
        ab = state["router_ab"]  # snapshots store keys sorted: keep the router's own order
        self.router._ab = {f: [float(ab[f][0]), float(ab[f][1])] for f in self.router.factors}
        rngstate.load(self.sar._rng, state["sar_rng"])
        self.sar._tried = collections.defaultdict(
            set, {k: set(v) for k, v in state["sar_tried"].items()}
        )
