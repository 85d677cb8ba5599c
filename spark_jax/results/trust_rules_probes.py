"""The probes behind results/trust-rules' copied outputs that are not a `spark-jax` command's:
each prints what its file holds, for the code tree it runs in.

- `run_summary`: per-run attempts, statuses, trainings and best figures of a comparison
  directory, read from its run databases with sqlite alone (a database of any version).
- `vocabulary`: how many distinct baseline prompts carry SPARK's factor vocabulary, rendered
  through a real loopback OpenAI-compatible server (no LLM).
- `scripted_budget`: the scripted budget/duplicate scenario (no training, no LLM), run with
  the scripted executor and operator of the tree's own tests/test_budget_rules.py, printed as
  `FIGURE name=value` lines.

    python -m spark_jax.results.trust_rules_probes run-summary COMPARE_DIR
    python -m spark_jax.results.trust_rules_probes vocabulary [TREE]
    python -m spark_jax.results.trust_rules_probes scripted-budget [TREE]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import pathlib
import sqlite3
import sys
import tempfile
import types
import unittest.mock

REPO = pathlib.Path(__file__).resolve().parents[2]
VOCABULARY = ("factor-scoped", "Factor-scoped", "an OPERATOR edit", "an ACTION edit", "FACTOR:")
MODES = ("openevolve", "openevolve-full", "evoprompting", "funsearch", "eoh")
# The seed's evaluation the baselines observe: the score under both names an evaluation record
# has carried (`ood_score` in the folder's before and after trees, `score` since), so the probe
# runs against either.
_EVALUATION = types.SimpleNamespace(ood_score=0.5, score=0.5, macs=1.0)


def run_summary(compare_dir: pathlib.Path) -> list[str]:
    """One line per run.db of the comparison: attempts, statuses (a duplicate apart), the
    candidates that entered training, scored and failed, the seed's and the best scores."""
    lines = []
    for db in sorted(compare_dir.glob("*/seed-*/run.db")):
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        props = con.execute(
            "SELECT attempt, status, failure_type FROM proposals ORDER BY attempt"
        ).fetchall()
        evs = con.execute(
            "SELECT proposal_attempt, status, ood_score, error_type FROM evaluations ORDER BY id"
        ).fetchall()
        con.close()
        seed = [e for e in evs if e[0] is None]
        cands = [e for e in evs if e[0] is not None]
        ok = [e for e in cands if e[1] == "ok"]
        best_cand = max((e[2] for e in ok), default=None)
        best_incl = max([e[2] for e in ok] + [s[2] for s in seed if s[1] == "ok"], default=None)
        statuses: dict[str, int] = {}
        for _, st, ft in props:
            k = "duplicate" if ft == "duplicate" else st
            statuses[k] = statuses.get(k, 0) + 1
        lines.append(
            f"{db.parent.parent.name}/{db.parent.name}: attempts={len(props)} "
            f"statuses={statuses} evaluated(entered training)={len(cands)} scored={len(ok)} "
            f"errors={len(cands) - len(ok)} seed_ood={seed[0][2] if seed else None:.4f} "
            f"best_incl_seed={best_incl:.4f} "
            f"best_candidate={'—' if best_cand is None else f'{best_cand:.4f}'}"
        )
    return lines


def _mode_prompts(mode: str, seed: str) -> list[str]:
    """The distinct user prompts `mode` sends in its first steps (every EoH strategy)."""
    from spark_jax.config.sections import OperatorConfig
    from spark_jax.llm import OpenAIBackend
    from spark_jax.llm.loopback import LoopbackServer
    from spark_jax.operator.baselines import make_operator
    from spark_jax.operator.editors import LLMEditor, ProgramView, StepContext

    report = types.SimpleNamespace(
        feasible=False, failure_stage="template", failure_type="template", reason="x"
    )
    with LoopbackServer(default_reply="no answer") as srv:
        be = OpenAIBackend(srv.base_url, "loopback", api_key_env=None, max_retries=1)
        op = make_operator(LLMEditor(be), lambda c, p, f: report, OperatorConfig(mode=mode))
        op.observe("s", seed, _EVALUATION, None)
        if mode == "eoh":
            op.plan, op.generation = ["e1", "e2", "m1", "m2", "m3"], 1
        ctx = StepContext(task="bfs", parent=ProgramView("s", seed, {"ood_score": 0.5}))
        for k in range(5 if mode == "eoh" else 1):
            asyncio.run(op.step(ctx, k))
        prompts = [r.body["messages"][-1]["content"] for r in srv.requests if r.body]
    return list(dict.fromkeys(prompts))


def vocabulary(tree: pathlib.Path = REPO) -> list[str]:
    """Per distinct baseline prompt whether it carries SPARK's vocabulary, then the count."""
    seed = (tree / "processors" / "mpnn.py").read_text(encoding="utf-8")
    lines, total, hit = [], 0, 0
    for mode in MODES:
        for prompt in _mode_prompts(mode, seed):
            bad = [v for v in VOCABULARY if v in prompt]
            total, hit = total + 1, hit + bool(bad)
            lines.append(f"{mode} {'carries' if bad else 'clean'} {bad}")
    lines.append(f"{hit} of {total} distinct baseline prompts carry SPARK factor vocabulary")
    return lines


def _budget_test(tree: pathlib.Path):
    """The tree's tests/test_budget_rules.py, loaded as a module (its records helper too)."""
    sys.path.insert(0, str(tree / "tests"))
    path = tree / "tests" / "test_budget_rules.py"
    spec = importlib.util.spec_from_file_location("test_budget_rules", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def scripted_budget(tree: pathlib.Path = REPO) -> list[str]:
    """The test's scripted scenarios as figures: `a` proposed twice (once with whitespace
    only) and the seed once at B=4; then B=3 with a first child whose training gives NaN."""
    test = _budget_test(tree)
    with contextlib.ExitStack() as restore:  # the test's patches are undone on the way out
        patch = types.SimpleNamespace(
            setattr=lambda *a: restore.enter_context(unittest.mock.patch.object(*a))
        )
        return _scripted_scenarios(test, patch)


def _scripted_scenarios(test, patch) -> list[str]:
    from spark_jax.report.accounting import summarize

    a = test._variant("a")
    children = [a, a.replace("# a\n", "# a   \r\n"), test.SEED]
    children += [test._variant(n) for n in "bcd"]
    with tempfile.TemporaryDirectory() as tmp:
        _, executor, db = test._run(pathlib.Path(tmp), children, patch, budget=4, max_attempts=10)
        with db:
            acc = summarize(db)
            dups = sum(p.failure_type == "duplicate" for p in db.proposals())
    lines = [
        f"FIGURE dup_recorded={dups}",
        f"FIGURE a_trainings={executor.trained.count('a')}",
        f"FIGURE best_candidate={acc.best_at_budget}",
        f"FIGURE seed_score={test.SCORES['seed']}",
    ]
    nan = [test._variant(n) for n in "bcd"]
    with tempfile.TemporaryDirectory() as tmp:
        result, executor, db = test._run(pathlib.Path(tmp), nan, patch, budget=3, max_attempts=10)
        db.close()
    lines.append(f"FIGURE nan_attempts={result.attempts}")
    trained = len(set(executor.trained) - {"seed"})
    lines.append(f"FIGURE nan_distinct_candidates_trained={trained}")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Prints one probe's lines (the module's docstring shows the commands)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("probe", choices=("run-summary", "vocabulary", "scripted-budget"))
    ap.add_argument("path", nargs="?", type=pathlib.Path, default=REPO)
    args = ap.parse_args(argv)
    probe = {"run-summary": run_summary, "vocabulary": vocabulary}.get(args.probe)
    print("\n".join((probe or scripted_budget)(args.path)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
