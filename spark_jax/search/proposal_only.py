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
import time
from typing import Callable

from spark_jax.config.search import SearchConfig
from spark_jax.llm import make_backend
from spark_jax.llm.attempt_cassette import ATTEMPT, AttemptCassetteBackend
from spark_jax.operator.baselines import make_operator
from spark_jax.operator.editors import Editor, LLMEditor, ProgramView, StepContext
from spark_jax.operator.signals import SearchHistory
from spark_jax.operator.step import Proposal
from spark_jax.search import budget, family_setup, preflight, prompt_context, startup
from spark_jax.search.archive import Candidate
from spark_jax.search.outcome import Progress, SearchResult
from spark_jax.search.parent_pool import ParentPool, load_pool
from spark_jax.search.rundb import RunDB, program_sha256
from spark_jax.search.stops import SearchUsageError

__all__ = ["run_proposal_search", "run_proposals", "start_editor"]


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


class _Attempts:
    """The pool, its programs' ids in the run database, and one attempt's context."""

    def __init__(self, cfg: SearchConfig, db: RunDB, editor: Editor, checker):
        self.cfg, self.db, self.editor = cfg, db, editor
        self.pool: ParentPool = load_pool(cfg.proposal_only.pool, cfg.target)
        self.ids = [db.insert_program(p.source) for p in self.pool.programs]
        lock = threading.Lock()  # one feasibility sandbox: checks run one at a time

        def locked_checker(child, parent, factor):
            with lock:
                return checker(child, parent, factor)

        self.checker = locked_checker
        self.parent_ids = [
            None if (j := self.pool.parent_of(i)) is None else self.ids[j]
            for i in range(len(self.ids))
        ]
        self.candidates = [
            Candidate(
                id=pid,
                source_sha=program_sha256(p.source),
                ood_acc=p.score,
                macs=p.evaluation.macs,
                val_score=p.evaluation.val_score,
                island=0,
                parent_id=parent_id,
                iteration=p.attempt or 0,
            )
            for pid, parent_id, p in zip(self.ids, self.parent_ids, self.pool.programs)
        ]
        self.best = max(self.candidates, key=lambda c: c.ood_acc)

    def meta(self) -> dict:
        data = pathlib.Path(self.pool.path).read_bytes()
        return dict(
            pool=self.pool.path,
            pool_sha256=hashlib.sha256(data).hexdigest(),
            jobs=self.cfg.proposal_only.jobs,
            rule="attempt i proposes from pool program i mod n",
            programs=[
                dict(name=p.name, id=pid, score=p.score)
                for pid, p in zip(self.ids, self.pool.programs)
            ],
        )

    def view(self, i: int) -> ProgramView:
        c = self.candidates[i]
        metrics = dict(ood_score=c.ood_acc, val_score=c.val_score, macs=c.macs)
        return ProgramView(c.id, self.pool.programs[i].source, metrics, self.parent_ids[i])

    def context(self, attempt: int, history: SearchHistory) -> StepContext:
        cfg, index = self.cfg, self.pool.parent_index(attempt)
        return StepContext(
            task=cfg.target,
            parent=self.view(index),
            top=tuple(self.view(i) for i in self.pool.inspirations(index)),
            diverse=(),
            outcomes=history.recent_outcomes(),
            router_signals=None,  # the route prompt says "no proposals yet"
            island=0,
            origin=prompt_context.origin(self.candidates[index], self.best, 0),
            split=prompt_context.task_split(cfg.protocol),
            io_task=cfg.task,
            signals=history.signals(""),
            macs_nodes=cfg.protocol.macs_nodes,
            fitness_seeds=cfg.fitness.seeds,
        )

    def unless_duplicate(self, proposal: Proposal) -> Proposal:
        """The duplicate rule every method shares (`search.budget`), with the pool standing for
        the programs that entered training: a child equal (normalized source) to a pool program
        or to an earlier attempt's feasible child is a duplicate, not a valid new candidate."""
        if proposal.child_source is None or proposal.status != "feasible":
            return proposal
        sha = program_sha256(proposal.child_source)
        twin = next((c.id for c in self.candidates if c.source_sha == sha), None)
        twin = twin or self.db.entered_training(proposal.child_source)
        return proposal if twin is None else budget.as_duplicate(proposal, twin)

    async def propose(self, attempt: int) -> Proposal:
        cfg = self.cfg
        history = SearchHistory(cfg.operator.stagnation_window, cfg.operator.failure_window)
        history.seed(self.candidates[0].ood_acc)
        digest = hashlib.sha256(f"{cfg.operator.seed}:{attempt}".encode()).hexdigest()
        op_cfg = dataclasses.replace(cfg.operator, seed=int(digest[:12], 16))
        operator = make_operator(self.editor, self.checker, op_cfg, history)
        for i, p in enumerate(self.pool.programs):  # each with its lineage, as in a search
            j = self.pool.parent_of(i)
            parent = None if j is None else self.view(j)
            operator.observe_pool(self.ids[i], p.source, p.evaluation, parent, p.description)
        ATTEMPT.set(attempt)  # this task's own context: its calls are keyed by it
        return await operator.step(self.context(attempt, history), attempt)


async def run_proposals(cfg: SearchConfig, db: RunDB, editor: Editor, checker, progress) -> None:
    """Runs attempts from the first unrecorded one to `max_attempts`, `jobs` at a time,
    recording each in attempt order."""
    if cfg.max_attempts is None:
        raise SearchUsageError("a proposal-only search needs max_attempts (its budget)")
    attempts = _Attempts(cfg, db, editor, checker)
    if db.get_meta("proposal_only") is None:
        db.set_meta("proposal_only", attempts.meta())
    first = db.next_attempt_index()
    tasks: dict[int, asyncio.Task] = {}
    try:
        for attempt in range(first, cfg.max_attempts):
            while len(tasks) < cfg.proposal_only.jobs and attempt + len(tasks) < cfg.max_attempts:
                i = attempt + len(tasks)
                tasks[i] = asyncio.create_task(attempts.propose(i))
            proposal = attempts.unless_duplicate(await tasks.pop(attempt))
            db.record_proposal(proposal)
            progress(attempt, proposal)
    finally:
        for task in tasks.values():
            task.cancel()


def _sandbox_checker(cfg: SearchConfig):
    """The sandboxed feasibility check at the protocol's sizes (as a normal search's)."""
    from spark_jax.feasibility import checker as feasibility
    from spark_jax.feasibility.sandbox import SandboxWorker

    options = family_setup.check_options(cfg)
    worker = SandboxWorker()
    worker.start(options.to_dict())

    def check(child, parent, factor):
        return feasibility.check_program(
            child, parent_source=parent, factor=factor, options=options, worker=worker
        )

    return check, worker


def run_proposal_search(
    cfg: SearchConfig,
    run_dir: str | pathlib.Path,
    *,
    resume: bool = False,
    command: list[str] | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    checker=None,
) -> SearchResult:
    """`run_search` for a proposal-only config: no executor, no training."""
    run_dir = pathlib.Path(run_dir)
    editor = start_editor(cfg, run_dir, resume)
    data = family_setup.check_family(cfg)
    lock, db = startup.open_run(cfg, run_dir, resume, command, data)
    worker = None
    try:
        if checker is None:
            checker, worker = _sandbox_checker(cfg)
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

        async def main() -> None:
            try:
                await run_proposals(cfg, db, editor, checker, progress)
            finally:
                await editor.aclose()

        asyncio.run(main())
        db.set_meta("finished_at", time.time())
        pool = load_pool(cfg.proposal_only.pool, cfg.target)
        scores = [p.score for p in pool.programs]
        return SearchResult(
            run_dir=str(run_dir),
            attempts=db.attempt_count(),
            evaluated=0,
            seed_ood=scores[0],
            best_ood=max(scores),
            best_program_id=db.program_id(pool.programs[scores.index(max(scores))].source) or "",
            best_path="(proposal-only: nothing trained; the best pool program)",
        )
    except BaseException as e:
        startup.record_stop(db, e)
        raise
    finally:
        if worker is not None:
            worker.close()
        db.close()
        lock.release()
