"""Scripted budget/duplicate scenario (issue 24): no training, no LLM.

A scripted executor assigns each program a fixed score by name (seed 0.9, a 0.4, b NaN
(training_diverged), c 0.6, d 0.7) and a scripted operator proposes a fixed list of children.
Usage: PYTHONPATH=TREE python dup_demo.py TREE  (run with the cwd at TREE). Adapted from the
engineers' /tmp/demo/dup_demo.py: ROOT from argv, FIGURE lines added for trust_rules_table.py.
"""
import concurrent.futures
import dataclasses
import pathlib
import re
import sys
import tempfile

ROOT = pathlib.Path(sys.argv[1]).resolve()
sys.path.insert(0, str(ROOT / "tests"))
import records

from spark_jax.config import search as search_config
from spark_jax.evaluation.executors import EvalResult
from spark_jax.report.accounting import summarize
from spark_jax.search import loop
from spark_jax.search.rundb import RunDB


class _MP:
    def setattr(self, obj, name, value): setattr(obj, name, value)

SEED = (ROOT / "processors" / "mpnn.py").read_text(encoding="utf-8")


def _variant(name: str) -> str:
    """The seed with one OPERATOR line added (a distinct program named `name`)."""
    anchor = "        # SPARK:END OPERATOR\n"
    return SEED.replace(anchor, f"        self.{name} = 1  # {name}\n{anchor}")


# What each program scores: a float, or an error type (training failed / NaN).
SCORES = {"seed": 0.9, "a": 0.4, "b": "training_diverged", "c": 0.6, "d": 0.7}


def _name(source: str) -> str:
    names = [n for n in SCORES if n != "seed" and re.search(rf"# {n}\s*$", source, re.M)]
    return names[0] if names else "seed"


class _Executor:
    """Scores by program name, instantly; records every job it trains."""

    capacity = 1

    def __init__(self):
        self.trained: list[str] = []

    def submit(self, job):
        name = _name(job.source)
        self.trained.append(name)
        score = SCORES[name]
        ok = not isinstance(score, str)
        future = concurrent.futures.Future()
        future.set_result(
            EvalResult(
                job_id=job.job_id,
                ok=ok,
                error_type=None if ok else score,
                error="" if ok else "loss is NaN",
                worker="scripted",
                wall_seconds=0.0,
                evaluation=records.evaluation(score, macs=100) if ok else None,
            )
        )
        return future

    def shutdown(self, wait=True):
        pass


class _Operator:
    """Proposes the given children in order, each feasible (no checker)."""

    def __init__(self, children):
        self.children, self.history = list(children), None

    async def step(self, ctx, attempt):
        return records.proposal(
            attempt, child_source=self.children.pop(0), parent_id=ctx.parent.id, island=ctx.island
        )

    def observe(self, *args):
        pass

    def rng_state(self):
        return None

    def load_rng_state(self, state):
        pass


def _run(tmp_path, children, monkeypatch, **overrides):
    monkeypatch.setattr(loop, "make_operator", lambda *a: _Operator(children))
    cfg = search_config.load(ROOT / "configs" / "tiny.yaml")
    cfg = dataclasses.replace(cfg, seed_program=str(ROOT / "processors" / "mpnn.py"), **overrides)
    executor = _Executor()
    result = loop.run_search(cfg, tmp_path / "run", executor=executor, checker=lambda *a: None)
    return result, executor, RunDB.open(tmp_path / "run" / loop.DB_NAME)



tmp = pathlib.Path(tempfile.mkdtemp())
a = _variant("a")
spaced = a.replace("# a\n", "# a   \r\n")
children = [a, spaced, SEED, _variant("b"), _variant("c"), _variant("d")]
result, executor, db = _run(tmp, children, _MP(), budget=4, max_attempts=10)
with db:
    acc = summarize(db)
    rows = [(p.attempt, p.status, p.failure_type) for p in db.proposals()]
print("proposals:", rows, "old-style best candidate (accounting.best_candidate):", acc.best_candidate and acc.best_candidate["ood_score"])
print("trained:", executor.trained)
n_dup = sum(1 for r in rows if r[2] == "duplicate")
best_cand = getattr(acc, "best_at_budget", None)
if best_cand is None:
    best_cand = acc.best_candidate and acc.best_candidate["ood_score"]
print(f"FIGURE dup_recorded={n_dup}")
print(f"FIGURE a_trainings={executor.trained.count('a')}")
print(f"FIGURE best_candidate={best_cand}")
print(f"FIGURE seed_score={SCORES['seed']}")
print(f"attempts={result.attempts} evaluated(result)={result.evaluated} best_ood={result.best_ood} "
      f"best_candidate={getattr(result, 'best_candidate_ood', 'n/a')} acc.evaluated={acc.evaluated} "
      f"eval_errors={acc.eval_errors} failed={acc.failed} duplicates={getattr(acc, 'duplicates', 'n/a')} "
      f"evaluated_budget={getattr(acc, 'evaluated_budget', 'n/a')} best_at_budget={getattr(acc, 'best_at_budget', 'n/a')}")

tmp = pathlib.Path(tempfile.mkdtemp())
result, executor, db = _run(tmp, [_variant("b"), _variant("c"), _variant("d")], _MP(), budget=3, max_attempts=10)
print("NaN scenario (budget 3, children b=NaN, c, d): trained", executor.trained, "attempts", result.attempts, "evaluated", result.evaluated)
print(f"FIGURE nan_attempts={result.attempts}")
print(f"FIGURE nan_distinct_candidates_trained={len(set(executor.trained) - {'seed'})}")
