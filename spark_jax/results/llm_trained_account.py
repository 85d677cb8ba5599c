"""The account of results/llm-trained: every method's best at budget, test score, valid and
entanglement rates with and without the flagged attempts, which sessions answered each method,
the Label and the Answer."""

from __future__ import annotations

import json
import pathlib
import statistics
from typing import Any

from spark_jax.compare.figures import best_at_budget, collect
from spark_jax.compare.runner import PLAN_FILE, ComparePlan
from spark_jax.report.accounting import ENTANGLED_KINDS
from spark_jax.results.llm_account_lines import account_block, machines
from spark_jax.results.llm_calls import (
    Call,
    Session,
    agent_names,
    flagged,
    query,
    ranges,
    run_dbs,
    versions,
)
from spark_jax.search.rundb import RunDB
from spark_jax.stats import significance
from spark_jax.util import markdown


def _window_best(path: pathlib.Path, budget: int, drop: set[int]) -> float | None:
    """Best at budget B (the seed counts: the first B - 1 candidates evaluated after it, in
    storage order), over the candidates whose attempt is not in `drop`."""
    rows = query(
        path,
        "SELECT proposal_attempt, status, ood_score FROM evaluations "
        "WHERE proposal_attempt IS NOT NULL ORDER BY id",
    )
    window = rows[: max(budget - 1, 0)]
    scores = [s for a, st, s in window if a not in drop and st == "ok" and s is not None and s == s]
    return max(scores) if scores else None


def _best_attempt(path: pathlib.Path, program_id: str) -> int | None:
    rows = query(
        path, "SELECT MIN(proposal_attempt) FROM evaluations WHERE program_id = ?", (program_id,)
    )
    return rows[0][0] if rows else None


def mean_std(values: list[float | None], scale: float = 100.0) -> str:
    vals = [v * scale for v in values if v is not None]
    if not vals:
        return "—"
    note = "" if len(vals) == len(values) else f" (n={len(vals)})"
    if len(vals) == 1:
        return f"{vals[0]:.2f}{note}"
    return f"{statistics.mean(vals):.2f} ± {statistics.stdev(vals):.2f}{note}"


def trained_rows(folder: pathlib.Path, marked) -> tuple[ComparePlan, list[dict[str, Any]]]:
    data = folder / "data"
    plan = ComparePlan.from_dict(json.loads((data / PLAN_FILE).read_text(encoding="utf-8")))
    figures = collect(data, plan)
    paths = {(m, s): p for m, s, p in run_dbs(folder)}
    runs = []
    for f in figures:
        path = paths[(f.method, f.seed)]
        drop = marked.get((f.method, f.seed), set())
        with RunDB.open(path) as db:
            proposals = db.proposals()
        kept = [p for p in proposals if p.attempt not in drop]
        best_attempt = _best_attempt(path, f.best_program) if f.best_program else None
        runs.append(
            dict(
                method=f.method, seed=f.seed, attempts=len(proposals), flagged=len(drop),
                best=best_at_budget(f.acc, plan.budget),
                best_without=_window_best(path, plan.budget, drop),
                best_check=_window_best(path, plan.budget, set()),
                test=f.test_best,
                test_without=None if best_attempt in drop else f.test_best,
                valid=f.acc.valid_rate,
                tangled=f.acc.entanglement_rate,
                tangled_without=(
                    sum(p.entanglement in ENTANGLED_KINDS for p in kept) / len(kept)
                    if kept
                    else None
                ),
                valid_without=(sum(p.status == "feasible" for p in kept) / len(kept))
                if kept else None,
            )
        )  # fmt: skip
    return plan, runs


def _method_sessions(method: str, calls: list[Call]) -> str:
    mine = [c for c in calls if c.method == method]
    parts = []
    for s in dict.fromkeys(c.session for c in mine):
        attempts = sorted({c.attempt for c in mine if c.session is s})
        name = s.name if s else "outside every recorded session"
        version = f"brief version {s.version}" if s else "brief not recorded"
        word = "attempt" if len(attempts) == 1 else "attempts"
        parts.append(f"{word} {ranges(attempts)} in {name} ({version})")
    return f"`{method}` " + ", ".join(parts)


def _reported_sentence(sessions: list[Session], calls: list[Call]) -> str:
    hit = [s for s in sessions if s.tool_built and any(c.session is s for c in calls)]
    return "; ".join(f"in {s.name} {s.reported.split(';')[0]}" for s in hit)


def _table(plan: ComparePlan, by: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Every method with and without the flagged attempts (mean ± sample std over seeds)."""
    head = [
        "method", "flagged attempts", f"best at budget B={plan.budget} (seed counted): all",
        "without flagged", "best candidate: test OOD %: all", "without flagged",
        "valid rate: all", "without flagged", "entanglement rate: all", "without flagged",
    ]  # fmt: skip
    body = []
    for m, rs in by.items():
        body.append([
            f"`{m}`", f"{sum(r['flagged'] for r in rs)} of {sum(r['attempts'] for r in rs)}",
            mean_std([r["best"] for r in rs]), mean_std([r["best_without"] for r in rs]),
            mean_std([r["test"] for r in rs]), mean_std([r["test_without"] for r in rs]),
            mean_std([r["valid"] for r in rs], 1.0),
            mean_std([r["valid_without"] for r in rs], 1.0),
            mean_std([r["tangled"] for r in rs], 1.0),
            mean_std([r["tangled_without"] for r in rs], 1.0),
        ])  # fmt: skip
    return markdown.table(head, body)


def _answer(runs, by, sessions, calls, bound, floor: float) -> str:
    """The README's Answer: no verdict at these seeds, the flags, the test scores."""
    n_seeds = len({r["seed"] for r in runs})
    lost = [
        f"`{r['method']}` seed {r['seed']}" for r in runs if r["test"] is not None
        and r["test_without"] is None
    ]  # fmt: skip
    n_flag = sum(len(v) for v in flagged(calls).values())
    total = len({(c.method, c.seed, c.attempt) for c in calls})
    per_method = ", ".join(
        f"`{m}` {sum(r['flagged'] for r in rs)}/{sum(r['attempts'] for r in rs)}"
        for m, rs in by.items()
    )
    test_means = ", ".join(f"`{m}` {mean_std([r['test'] for r in rs])}" for m, rs in by.items())
    return (
        f"Cannot tell, for every pair: with {n_seeds} search seeds per method the exact test's "
        f"smallest p is {floor:g}, above Holm's threshold, so this run cannot say whether SPARK's "
        "or OpenEvolve's search machinery adds anything over sampling the same stand-in from "
        "the seed. The stand-in was language-model agents with a shell and memory across prompts, "
        f"not stateless API calls, and {n_flag} of {total} attempts ({per_method}) hold an answer "
        f"that came faster than {bound:g} characters per second or that its agents reported "
        f"building with tools ({_reported_sentence(sessions, calls)}), so every figure is given "
        "with and without them (table below). "
        f"Trained again on seeds the searches never used, the validation-selected bests scored "
        f"{test_means} on the test set (mean ± std, %); without the flagged attempts the test "
        "column keeps only searches whose best was not flagged ("
        + (", ".join(lost) + " lose theirs" if lost else "none is lost")
        + "), and the verdicts cannot change at these seeds. Differences of a few points are "
        "within what one smoke training moves under a 1e-7 nudge of its initial parameters "
        "([chaos-at-smoke](../chaos-at-smoke/README.md))."
    )


def _label(folder: pathlib.Path, calls: list[Call]) -> str:
    """The README's Label: the preset, the machine and what answered."""
    agents = agent_names(calls)
    n_sessions = len({c.session.name for c in calls if c.session and c.session.agents})
    n_flag = sum(len(v) for v in flagged(calls).values())
    total = len({(c.method, c.seed, c.attempt) for c in calls})
    return (
        f"`smoke`; the 2-core x86_64 CPU VM, contended (records: `{machines(folder)}`); **the "
        f"stand-in model: language-model agents ({agents[0]}-{agents[-1]} in {n_sessions} "
        "sessions) with "
        "a shell and memory across prompts (which LLM is not recorded), answering a file queue "
        f"through the command backend under brief {versions(calls)}; not stateless API "
        f"calls; {n_flag} of {total} attempts flagged as possibly tool-built, every table given "
        "with and without them.**"
    )


def trained_account(folder: pathlib.Path, kind: str, sessions, calls, bound) -> dict[str, Any]:
    """results/llm-trained's Label, Answer and account block (`dict(label, answer, block)`)."""
    plan, runs = trained_rows(folder, flagged(calls))
    for r in runs:  # the window read here is the one compare's figures read
        if r["best"] != r["best_check"]:
            raise SystemExit(
                f"{r['method']} seed {r['seed']}: best at budget differs from figures'"
            )
    methods = list(dict.fromkeys(r["method"] for r in runs))
    by = {m: [r for r in runs if r["method"] == m] for m in methods}
    n_seeds = len(plan.seeds)
    floor = significance.min_exact_p(n_seeds, n_seeds, paired=True)
    pools = [
        "- **Not one pool for every method.** Which agents answered, under which brief, "
        "depended on when a method's searches ran: "
        + "; ".join(_method_sessions(m, calls) for m in methods)
        + "."
    ]
    body = [
        "",
        "Every method with and without the flagged attempts (mean ± sample std over the search "
        "seeds; best at budget on the selection set, in %; the test column only where the "
        "search's best candidate was not flagged: another candidate's test score was never "
        "measured; n = the seeds left):",
        "",
        *_table(plan, by),
        "",
        f"- With {n_seeds} search seeds the exact test's smallest p is {floor:g}: no comparison "
        "with or without the flagged attempts can be a win or a loss.",
        "- OpenEvolve's entanglement rate ("
        + mean_std([r["tangled"] for r in by.get("openevolve", [])], 1.0)
        + ") counts edits across the region rule, which its prompt does not state (OpenEvolve's "
        "own prompt, `operator/baselines/openevolve.py`); the controls' full rewrites are not "
        "told it either.",
    ]
    ran = "the sessions above and the final tests' rescoring"
    block = account_block(folder, kind, sessions, calls, bound, ran=ran, after_who=pools, body=body)
    answer = _answer(runs, by, sessions, calls, bound, floor)
    return dict(label=_label(folder, calls), answer=answer, block=block)
