"""Proposal-only search: propose, check feasibility, record validity and entanglement; never
train (config key `proposal_only`).

Every attempt is independent of the others, so a slow model can answer several at once:
attempt i proposes from the pool's parent `i mod n` (inspirations: the other pool programs,
best first), with a fresh operator seeded from (seed, i) that has seen the pool programs
and nothing else, and an empty search history (there is no training feedback to report).
A feasible child equal to a pool program or to an earlier attempt's child is a duplicate (the
duplicate rule of `search.budget`), for every method. Up to `proposal_only.jobs` attempts are
in flight; each is recorded in attempt order, so
the database does not depend on `jobs` or on which answer came first. The LLM calls go to
an attempt-keyed cassette (`llm.attempt_cassette`), so a replay gives each attempt
its own answers. A killed run resumes at the first unrecorded attempt, and answers already
in its cassette are not asked again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import pathlib
import threading
from typing import Callable

from spark_jax.config.search import SearchConfig
from spark_jax.llm import make_backend
from spark_jax.llm.attempt_cassette import ATTEMPT, AttemptCassetteBackend
from spark_jax.operator.baselines import make_operator
from spark_jax.operator.editors import Editor, LLMEditor
from spark_jax.operator.signals import SearchHistory
from spark_jax.operator.step import Proposal
from spark_jax.search import pipeline, preflight, startup
from spark_jax.search.outcome import Progress, SearchResult
from spark_jax.search.parent_pool import load_pool
from spark_jax.search.parents import PoolSource
from spark_jax.search.rundb import RunDB
from spark_jax.search.stops import SearchUsageError

__all__ = ["driver", "run_proposals", "start_editor"]


def start_editor(cfg: SearchConfig, run_dir: pathlib.Path, resume: bool) -> Editor:
    """The run's editor, its LLM calls through an attempt-keyed cassette (`editor.record`,
    or `editor.replay` with no model); the same checks as a normal search first."""
    if cfg.editor.kind == "offline":
        return startup.start_editor(cfg, run_dir, resume)
    offline = dataclasses.replace(cfg.editor, kind="offline", replay=None, record=None)
    startup.start_editor(dataclasses.replace(cfg, editor=offline), run_dir, resume)  # checks
    try:
        if cfg.editor.replay:
            backend = AttemptCassetteBackend(cfg.editor.replay)
        else:
            backend = make_backend(cfg.editor.llm)
            if cfg.editor.record:
                backend = AttemptCassetteBackend(cfg.editor.record, backend)
    except (OSError, ValueError, RuntimeError) as e:
        raise SearchUsageError(f"search.editor: {' '.join(str(e).split())}") from None
    preflight.preflight(cfg.editor)
    return LLMEditor(backend, directive_max_chars=cfg.operator.directive_max_chars)


def _one_at_a_time(checker):
    """`checker` behind a lock: one feasibility sandbox, so checks run one at a time."""
    lock = threading.Lock()

    def locked_checker(child, parent, factor):
        with lock:
            return checker(child, parent, factor)

    return locked_checker


class _Attempts:
    """The attempts of a proposal-only run: each proposes from the pool through a fresh
    operator that has seen the pool programs only, and an empty search history."""

    def __init__(self, cfg: SearchConfig, db: RunDB, editor: Editor, checker):
        self.cfg, self.editor, self.checker = cfg, editor, _one_at_a_time(checker)
        self.source = PoolSource(cfg, db)
        self.pipeline = pipeline.Pipeline(cfg, db, self.source)

    async def propose(self, attempt: int) -> Proposal:
        cfg = self.cfg
        history = SearchHistory(cfg.operator.stagnation_window, cfg.operator.failure_window)
        history.seed(self.source.candidates[0].ood_acc)
        digest = hashlib.sha256(f"{cfg.operator.seed}:{attempt}".encode()).hexdigest()
        op_cfg = dataclasses.replace(cfg.operator, seed=int(digest[:12], 16))
        operator = make_operator(self.editor, self.checker, op_cfg, history)
        self.source.observe_into(operator)  # each with its lineage, as in a search
        ATTEMPT.set(attempt)  # this task's own context: its calls are keyed by it
        # router_signals None: the route prompt says "no proposals yet"
        return await operator.step(self.pipeline.context(attempt, history, None), attempt)


async def run_proposals(cfg: SearchConfig, db: RunDB, editor: Editor, checker, progress) -> None:
    """Runs attempts from the first unrecorded one to `max_attempts`, `jobs` at a time,
    recording each in attempt order."""
    if cfg.max_attempts is None:
        raise SearchUsageError("a proposal-only search needs max_attempts (its budget)")
    attempts = _Attempts(cfg, db, editor, checker)
    if db.get_meta("proposal_only") is None:
        db.set_meta("proposal_only", attempts.source.meta())
    first = db.next_attempt_index()
    tasks: dict[int, asyncio.Task] = {}
    try:
        for attempt in range(first, cfg.max_attempts):
            while len(tasks) < cfg.proposal_only.jobs and attempt + len(tasks) < cfg.max_attempts:
                i = attempt + len(tasks)
                tasks[i] = asyncio.create_task(attempts.propose(i))
            proposal = attempts.pipeline.unless_duplicate(await tasks.pop(attempt))
            attempts.pipeline.record(proposal)
            progress(attempt, proposal)
    finally:
        for task in tasks.values():
            task.cancel()


def _progress(on_progress: Callable[[Progress], None] | None):
    """The run's progress callback: (attempt, proposal) -> `on_progress(Progress)`."""
    statuses: list[str] = []

    def progress(attempt: int, proposal: Proposal) -> None:
        statuses.append(proposal.status)
        if on_progress is not None:
            on_progress(
                Progress(
                    attempt=attempt + 1,
                    evaluated=0,
                    valid_rate=statuses.count("feasible") / len(statuses),
                    best_ood=None,
                    stage=f"attempt {attempt}: {proposal.status} (proposal-only)",
                )
            )

    return progress


def _result(cfg: SearchConfig, run_dir: pathlib.Path, db: RunDB) -> SearchResult:
    """A proposal-only run's result: nothing trained, the best pool program."""
    pool = load_pool(cfg.proposal_only.pool, cfg.target)
    scores = [p.score for p in pool.programs]
    best = pool.programs[scores.index(max(scores))]
    return SearchResult(
        run_dir=str(run_dir),
        attempts=db.attempt_count(),
        evaluated=0,
        seed_ood=scores[0],
        best_ood=max(scores),
        best_program_id=db.program_id(best.source) or "",
        best_path="(proposal-only: nothing trained; the best pool program)",
    )


def driver(cfg: SearchConfig, on_progress: Callable[[Progress], None] | None) -> pipeline.Drive:
    """The proposal-only search's `pipeline.Drive` (`run_search` frames it): no executor, no
    training; attempts up to `max_attempts`, then the best pool program as the result."""

    def drive(run_dir: pathlib.Path, db: RunDB, editor: Editor, checker) -> SearchResult:
        async def main() -> None:
            try:
                await run_proposals(cfg, db, editor, checker, _progress(on_progress))
            finally:
                await editor.aclose()

        asyncio.run(main())
        return _result(cfg, run_dir, db)

    return drive
