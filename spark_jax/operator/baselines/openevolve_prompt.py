"""The parts of OpenEvolve's prompt, built as OpenEvolve v0.3.2 builds them, and 0.4.0 (the
same `prompt/sampler.py` and `prompts/defaults/`, byte for byte) (`openevolve/prompt/sampler.py`, `openevolve/prompts/defaults/*.txt`,
`openevolve/process_parallel.py: _run_iteration_worker`), from our island archive's sample:

  previous attempts   the island's top `NUM_TOP_PROGRAMS` (3) programs, never failures
                      (OpenEvolve passes `best_programs_only`, not the latest proposals), shown
                      in reverse ("Attempt 3" first), each with the diff summary that made it,
                      its metrics and its outcome against its own parent's metrics;
  top programs        the same 3 with their code and key features, then up to
                      `NUM_DIVERSE_PROGRAMS` (2) drawn at random from the island's next ranks
                      ("Program D1", ...);
  inspirations        the archive's diverse sample, less programs already shown, each with a
                      type by score and its "unique approach" heuristics;
  focus areas         fitness against the last previous attempt's, the feature coordinates, and
                      the code-length hint (OpenEvolve's default threshold: 500 characters).

The island's programs are the parent plus the archive's top inspirations (its island's fittest,
and the best program so far when it lives on another island, which OpenEvolve would show among
the inspirations instead). Fitness is `ood_score` (the archive's objective, OpenEvolve's
`combined_score`); the feature dimensions are the archive's grid axes (ood_score, macs).
Artifacts: OpenEvolve shows the parent's evaluator artifacts; our evaluator attaches none to a
successfully evaluated program (every parent is one), so the section is empty, as it is in
OpenEvolve for an evaluator that returns a plain metrics dict.
"""

from __future__ import annotations

import random
from typing import Any, Mapping, Sequence

from spark_jax.operator.editors import ProgramView

NUM_TOP_PROGRAMS = 3  # PromptConfig.num_top_programs
NUM_DIVERSE_PROGRAMS = 2  # PromptConfig.num_diverse_programs
SIMPLIFY_AFTER_CHARS = 500  # PromptConfig.suggest_simplification_after_chars
FEATURE_DIMENSIONS = ("ood_score", "macs")
UNKNOWN_CHANGES = "Unknown changes"


def fitness(metrics: Mapping[str, Any]) -> float:
    value = metrics.get("ood_score")
    return float(value) if isinstance(value, (int, float)) else 0.0


def _value(v: Any) -> str:
    return f"{v:.4f}" if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)


def numeric_metrics(metrics: Mapping[str, Any]) -> dict[str, float]:
    return {k: v for k, v in metrics.items() if isinstance(v, (int, float)) and v is not None}


def feature_coords(metrics: Mapping[str, Any]) -> str:
    parts = [
        f"{d}={float(metrics[d]):.2f}" for d in FEATURE_DIMENSIONS if d in numeric_metrics(metrics)
    ]
    return ", ".join(parts)


def diff_summary(blocks: Sequence[tuple[str, str]], max_len: int = 100, max_lines: int = 30):
    """OpenEvolve's `format_diff_summary`: one 'Change k' entry per block."""

    def lines_of(text: str) -> str:
        out = []
        for line in text.split("\n")[:max_lines]:
            s = line.rstrip()
            out.append("  " + (s[: max_len - 3] + "..." if len(s) > max_len else s))
        more = len(text.split("\n")) - max_lines
        return "\n".join(out + ([f"  ... ({more} more lines)"] if more > 0 else [])) or "  (empty)"

    summary = []
    for k, (search, replace) in enumerate(blocks, 1):
        a, b = search.strip().split("\n"), replace.strip().split("\n")
        if len(a) == 1 and len(b) == 1:
            summary.append(f"Change {k}: '{a[0]}' to '{b[0]}'")
        else:
            summary.append(
                f"Change {k}: Replace:\n{lines_of(search.strip())}\nwith:\n{lines_of(replace.strip())}"
            )
    return "\n".join(summary)


def island_programs(parent: ProgramView, top: Sequence[ProgramView]) -> list[ProgramView]:
    """The parent and the sampled top programs, fittest first (ties keep the sample's order)."""
    seen, out = set(), []
    for v in (parent, *top):
        if v.id not in seen:
            seen.add(v.id)
            out.append(v)
    return sorted(out, key=lambda v: -fitness(v.metrics))


def _outcome(metrics: Mapping[str, Any], parent_metrics: Mapping[str, Any]) -> str:
    """OpenEvolve's attempt outcome: every numeric metric above (below) the parent's value,
    a missing parent value counting as 0."""
    pairs = [(v, parent_metrics.get(k, 0)) for k, v in numeric_metrics(metrics).items()]
    pairs = [(v, p) for v, p in pairs if isinstance(p, (int, float))]
    if pairs and all(v > p for v, p in pairs):
        return "Improvement in all metrics"
    if pairs and all(v < p for v, p in pairs):
        return "Regression in all metrics"
    return "Mixed results"


def previous_attempts(best: Sequence[ProgramView], meta: Mapping[str, Mapping[str, Any]]) -> str:
    blocks = []
    for i, v in enumerate(reversed(best)):
        info = meta.get(v.id, {})
        perf = ", ".join(f"{k}: {_value(x)}" for k, x in v.metrics.items() if x is not None)
        blocks.append(
            f"### Attempt {len(best) - i}\n- Changes: {info.get('changes') or UNKNOWN_CHANGES}\n"
            f"- Metrics: {perf}\n- Outcome: {_outcome(v.metrics, info.get('parent_metrics', {}))}"
        )
    return "\n\n".join(blocks)


def _program(label: str, v: ProgramView, features: str) -> str:
    score = f"{fitness(v.metrics):.4f}"
    return f"### Program {label} (Score: {score})\n```python\n{v.source.rstrip()}\n```\nKey features: {features}"


def top_programs(ranked: Sequence[ProgramView], rng: random.Random) -> tuple[str, list[str]]:
    """The top-programs text and the ids it shows."""
    top = list(ranked[:NUM_TOP_PROGRAMS])
    blocks = [
        _program(
            str(k),
            v,
            ", ".join(
                f"Performs well on {n} ({_value(x)})" for n, x in numeric_metrics(v.metrics).items()
            ),
        )
        for k, v in enumerate(top, 1)
    ]
    rest = list(ranked[NUM_TOP_PROGRAMS : NUM_TOP_PROGRAMS + NUM_DIVERSE_PROGRAMS])
    diverse = rng.sample(rest, min(NUM_DIVERSE_PROGRAMS, len(rest))) if rest else []
    text = "\n\n".join(blocks)
    if diverse:
        text += "\n\n## Diverse Programs\n\n" + "\n\n".join(
            _program(
                f"D{k}", v, ", ".join(f"Alternative approach to {n}" for n in list(v.metrics)[:2])
            )
            for k, v in enumerate(diverse, 1)
        )
    return text, [v.id for v in (*top, *diverse)]


def _program_type(score: float) -> str:
    if score >= 0.8:
        return "High-Performer"
    if score >= 0.6:
        return "Alternative"
    return "Experimental" if score >= 0.4 else "Exploratory"


def _unique_features(v: ProgramView) -> str:
    """OpenEvolve's `_extract_unique_features` heuristics (metric extremes, code traits)."""
    features = []
    for name, value in numeric_metrics(v.metrics).items():
        if value >= 0.9:
            features.append(f"Excellent {name} ({value:.3f})")
        elif value <= 0.3:
            features.append(f"Alternative {name} approach")
    code = v.source.lower()
    if "class" in code and "def __init__" in code:
        features.append("Object-oriented approach")
    if "numpy" in code or "np." in code:
        features.append("NumPy-based implementation")
    if "for" in code and "while" in code:
        features.append("Mixed iteration strategies")
    n_lines = len(v.source.split("\n"))
    if n_lines <= 10:
        features.append("Concise implementation")
    elif n_lines >= 50:
        features.append("Comprehensive implementation")
    return ", ".join(features[:NUM_TOP_PROGRAMS]) or "approach to the problem"


def inspirations(views: Sequence[ProgramView], shown: Sequence[str]) -> str:
    """The inspirations section ('' when there is none left after the programs shown)."""
    left = [v for v in views if v.id not in set(shown)]
    if not left:
        return ""
    blocks = [
        f"### Inspiration {k} (Score: {fitness(v.metrics):.4f}, Type: "
        f"{_program_type(fitness(v.metrics))})\n```python\n{v.source.rstrip()}\n```\n"
        f"Unique approach: {_unique_features(v)}"
        for k, v in enumerate(left, 1)
    ]
    return (
        "## Inspiration Programs\n\nThese programs represent diverse approaches and creative "
        "solutions that may inspire new ideas:\n\n" + "\n\n".join(blocks)
    )


def focus_areas(parent: ProgramView, best: Sequence[ProgramView]) -> str:
    current = fitness(parent.metrics)
    areas = []
    if best:
        prev = fitness(best[-1].metrics)
        if current > prev:
            areas.append(f"Fitness improved: {prev:.4f} → {current:.4f}")
        elif current < prev:
            areas.append(
                f"Fitness declined: {prev:.4f} → {current:.4f}. Consider revising recent changes."
            )
        else:
            areas.append(f"Fitness unchanged at {current:.4f}")
    coords = feature_coords(parent.metrics)
    areas.append(
        f"Exploring {coords} region of solution space" if coords else "No feature coordinates"
    )
    if len(parent.source) > SIMPLIFY_AFTER_CHARS:
        areas.append(
            f"Consider simplifying - code length exceeds {SIMPLIFY_AFTER_CHARS} characters"
        )
    return "\n".join(f"- {a}" for a in areas)
