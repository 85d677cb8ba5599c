"""The search loop (paper Algorithm 1) with persistence, resume and bounded overlap.

    seed -> evaluate -> archive
    until `budget` evaluated candidates (seed included) or `max_attempts` proposals:
        island -> parent + inspirations -> SPARK step (or a baseline's) -> feasibility
        a program that entered training before (by source, or `fitness.duplicates: function`
        by function) -> `duplicate` (not trained again)
        feasible -> evaluate on an executor (up to `in_flight` at once) -> archive

Budget and duplicates follow `search.budget`, the same rules for every method: a candidate
counts toward `budget` once it is feasible and enters training, whatever training gives;
rejected proposals and duplicates count as attempts only.

Every proposal is committed to the run database together with a snapshot of the whole
search state (archive with its RNG, signal history, operator and editor state); every
evaluation likewise. After a crash or kill -9, `resume` restores the latest snapshot and
re-submits the feasible proposals whose evaluation never landed: nothing is lost and
nothing is recorded twice. With `in_flight == 1` and a deterministic editor (offline rules
or a replay cassette) the run is deterministic.
"""

from __future__ import annotations

import asyncio
import dataclasses
import pathlib
from typing import Any, Callable

from spark_jax.config.search import SearchConfig
from spark_jax.families import Evaluation
from spark_jax.jobs.executors import EvalJob, EvalResult, make_executor
from spark_jax.operator.baselines import make_operator
from spark_jax.operator.editors import Editor
from spark_jax.operator.signals import Outcome, SearchHistory
from spark_jax.operator.step import Proposal
from spark_jax.search import best_program, budget, final_test, pipeline, proposal_only, startup
from spark_jax.search.archive import Candidate, IslandArchive
from spark_jax.search.function_duplicates import FunctionIndex
from spark_jax.search.intensify import Intensifier
from spark_jax.search.outcome import Progress, SearchResult
from spark_jax.search.parents import ArchiveSource
from spark_jax.search.rundb import RunDB, program_sha256
from spark_jax.search.startup import CONFIG_NAME, DB_NAME
from spark_jax.search.stops import EditorFailing, FailureStreak, SearchError, SearchUsageError

__all__ = [
    "CONFIG_NAME",
    "DB_NAME",
    "EditorFailing",
    "Progress",
    "SearchError",
    "SearchResult",
    "SearchUsageError",
    "run_search",
]


class _Run:
    """One search run's live state; all mutation happens on the event-loop thread."""

    def __init__(
        self,
        cfg: SearchConfig,
        run_dir: pathlib.Path,
        db: RunDB,
        editor: Editor,
        executor,
        checker,
        on_progress: Callable[[Progress], None] | None,
    ):
        self.cfg, self.run_dir, self.db = cfg, run_dir, db
        self.editor, self.executor, self.checker = editor, executor, checker
        self.on_progress = on_progress or (lambda p: None)
        self.source = ArchiveSource(cfg, db)
        self.pipeline = pipeline.Pipeline(cfg, db, self.source)
        self.history = SearchHistory(cfg.operator.stagnation_window, cfg.operator.failure_window)
        self.operator = make_operator(editor, checker, cfg.operator, self.history)
        cascade = cfg.cascade
        self._cascade = (cascade.threshold, cascade.fraction) if cascade.active else None
        self.streak = FailureStreak(cfg.editor.max_consecutive_failures, editor.is_llm)
        self.functions = FunctionIndex.for_run(cfg, db, self.pipeline.family_fields)
        self.intensifier = Intensifier(cfg, db, executor, self._job)
        # attempt -> (future, proposal, child program id, job)
        self.in_flight: dict[int, tuple[asyncio.Future, Proposal, str, EvalJob]] = {}

    # -- state ------------------------------------------------------------------------------
    @property
    def archive(self) -> IslandArchive:
        """The island archive (the parent source's; a resume replaces it)."""
        return self.source.archive

    def state(self) -> dict[str, Any]:
        return dict(
            archive=self.archive.to_state(),
            history=self.history.to_state(),
            operator_rng=self.operator.rng_state(),
            editor=self.editor.state(),
        )

    def restore(self, state: dict[str, Any]) -> None:
        self.source.archive = IslandArchive.from_state(state["archive"])
        self.history = SearchHistory.from_state(state["history"])
        self.operator.history = self.history
        self.operator.load_rng_state(state["operator_rng"])
        self.editor.load_state(state["editor"])

    def progress(self, stage: str) -> None:
        statuses = self.db.proposal_statuses()
        best = self.archive.best()
        self.on_progress(
            Progress(
                attempt=len(statuses),
                evaluated=self.db.evaluated_count(),
                valid_rate=statuses.count("feasible") / len(statuses) if statuses else 0.0,
                best_ood=best.ood_acc if best else None,
                stage=stage,
            )
        )

    # -- evaluation -------------------------------------------------------------------------
    def _job(self, job_id: str, source: str, name: str) -> EvalJob:
        return EvalJob(
            job_id=job_id,
            source=source,
            program_name=name,
            task=self.cfg.target,
            protocol=self.cfg.fitness.selection_protocol(self.cfg.protocol).to_dict(),
            seed=self.cfg.seed,
            timeout_s=self.cfg.executor.timeout_s,
            memory_mb=self.cfg.executor.memory_mb,
            cascade=self._cascade,
            seeds=self.cfg.fitness.seeds,
            **self.pipeline.family_fields,
        )

    def _add(
        self,
        program_id: str,
        source: str,
        ev: Evaluation,
        island: int,
        parent_id: str | None,
        iteration: int,
    ) -> None:
        self.archive.add(
            Candidate(
                id=program_id,
                source_sha=program_sha256(source),
                ood_acc=ev.score_mean,  # the mean over the candidate's seeds
                macs=ev.macs,
                val_score=ev.val_score,
                island=island,
                parent_id=parent_id,
                iteration=iteration,
            )
        )

    async def evaluate_seed(self) -> None:
        source = pathlib.Path(self.cfg.seed_program).read_text(encoding="utf-8")
        program_id = self.db.insert_program(source)
        self.progress("evaluating seed")
        job = dataclasses.replace(self._job("seed", source, "seed"), cascade=None)  # trains fully
        result = await asyncio.wrap_future(self.executor.submit(job))
        if not result.ok:
            raise SearchError(
                f"seed program failed to evaluate ({result.error_type}): {result.error}"
            )
        self._add(program_id, source, result.evaluation, 0, None, 0)
        await self.functions.note_seed(program_id, source)
        self.operator.observe(program_id, source, result.evaluation, None)
        self.history.seed(result.evaluation.score_mean)
        self.db.record_evaluation(program_id, None, job, result, archive_state=self.state())

    def submit(self, proposal: Proposal, program_id: str) -> None:
        job = self._job(str(proposal.attempt), proposal.child_source, f"attempt-{proposal.attempt}")
        fut = asyncio.wrap_future(self.executor.submit(job))
        self.in_flight[proposal.attempt] = (fut, proposal, program_id, job)

    async def wait_one(self) -> None:
        futures = {f: a for a, (f, *_) in self.in_flight.items()}
        done, _ = await asyncio.wait(futures, return_when=asyncio.FIRST_COMPLETED)
        # Land results in attempt order for determinism when several finish together.
        for fut in sorted(done, key=lambda f: futures[f]):
            _, proposal, program_id, job = self.in_flight.pop(futures[fut])
            self.land(proposal, program_id, job, fut.result())

    def land(self, proposal: Proposal, program_id: str, job: EvalJob, result: EvalResult) -> None:
        if result.ok:
            ev = result.evaluation
            if program_id not in self.archive:  # a program proposed twice is archived once
                self._add(
                    program_id,
                    proposal.child_source,
                    ev,
                    proposal.island,
                    proposal.parent_id,
                    proposal.attempt,
                )
                self.operator.observe(program_id, proposal.child_source, ev, proposal)
                self.intensifier.consider(program_id, ev.score_mean)
            if self.archive.should_migrate():
                self.archive.migrate()
            outcome = self.history.record(
                Outcome(
                    proposal.attempt,
                    proposal.factor,
                    "evaluated",
                    ood_score=ev.score_mean,
                    val_score=ev.val_score,
                )
            )
            self.editor.observe(proposal.factor, outcome.improved)
        else:
            # Feasible (PASS already in the proposal window): an evaluation failure.
            self.history.record(
                Outcome(
                    proposal.attempt,
                    proposal.factor,
                    "eval_failed",
                    failure_type=f"train_{result.error_type}",
                )
            )
            self.editor.observe(proposal.factor, False)
        self.db.record_evaluation(
            program_id, proposal.attempt, job, result, archive_state=self.state()
        )
        self.progress("evaluated" if result.ok else f"evaluation failed: {result.error_type}")

    # -- proposals --------------------------------------------------------------------------
    async def propose(self, attempt: int) -> None:
        ctx = self.pipeline.context(attempt, self.history, self.history.signals("ACTION"))
        self.progress(f"proposing attempt {attempt} (island {ctx.island})")
        proposal = self.pipeline.unless_duplicate(await self.operator.step(ctx, attempt))
        proposal, fingerprint = await self.functions.check(proposal)

        def state(child_id: str | None) -> None:
            # Algorithm 1: the feasibility verdict (PASS included) enters the window now.
            self.history.record(
                Outcome(
                    attempt,
                    proposal.factor,
                    proposal.status,
                    failure_type=proposal.failure_type,
                    summary=proposal.change_summary(),
                    parent_id=proposal.parent_id,
                )
            )
            if not proposal.feasible:
                self.editor.observe(proposal.factor, False)
            self.functions.remember(fingerprint, child_id)
            self.db.save_archive_snapshot(attempt, self.state())

        child_id = self.pipeline.record(proposal, state)
        if proposal.feasible:
            self.submit(proposal, child_id)
        self.progress(
            f"attempt {attempt}: {proposal.status}"
            + (f" ({proposal.failure_type})" if proposal.failure_type else "")
        )
        # A duplicate is a program, not an editor failure: it does not extend the streak.
        streak_status = "duplicate" if budget.is_duplicate(proposal) else proposal.status
        self.streak.note(streak_status, proposal.reason or "", str(self.run_dir))

    async def loop(self) -> None:
        cfg = self.cfg
        while True:
            evaluated = self.db.evaluated_count()
            attempts = self.db.next_attempt_index()
            budget_left = evaluated + len(self.in_flight) < cfg.budget
            attempts_left = cfg.max_attempts is None or attempts < cfg.max_attempts
            if len(self.in_flight) >= cfg.executor.in_flight or (
                self.in_flight and not (budget_left and attempts_left)
            ):
                await self.wait_one()
                continue
            if not (budget_left and attempts_left):
                return
            await self.intensifier.drain()  # challengers confirmed before the next proposal
            await self.propose(attempts)


def _write_outputs(run: _Run) -> SearchResult:
    """Writes `best/` (what every output calls best: the best evaluated candidate, the seed
    apart; `search.best_program`) and returns the run's result."""
    best = best_program.best_program(run.db)
    if best is None or best.seed_ood is None:
        raise SearchError("the seed program was not evaluated: no result to write")
    best_path = best_program.write_best(run.run_dir, run.db)
    candidate = None if best.is_seed else best.ood_score
    return SearchResult(
        run_dir=str(run.run_dir),
        attempts=run.db.attempt_count(),
        evaluated=run.db.evaluated_count(),
        seed_ood=best.seed_ood,
        best_ood=best.seed_ood if best.ood_score is None else best.ood_score,
        best_program_id=best.program_id,
        best_path=str(best_path),
        best_candidate_ood=candidate,
    )


async def _search(run: _Run) -> SearchResult:
    """The seed's evaluation (or the stored archive and pending evaluations, on a resume),
    the loop, the final programs' test scoring, the outputs."""
    cfg, db = run.cfg, run.db
    snapshot = db.latest_archive_snapshot()
    if snapshot is None:
        await run.evaluate_seed()
    else:
        run.restore(snapshot[1])
        for proposal in db.pending_evaluations():
            run.submit(proposal, db.program_id(proposal.child_source))
    try:
        await run.loop()
        await run.intensifier.drain()
    finally:
        run.functions.close()
    if cfg.fitness.source == "ood_val":  # the official test set: final programs only
        await final_test.score_final_programs(cfg, db, run.executor, run.archive.best())
    await run.editor.aclose()
    return _write_outputs(run)


def _driver(
    cfg: SearchConfig, on_progress: Callable[[Progress], None] | None, executor
) -> pipeline.Drive:
    """The archive-driven search's `pipeline.Drive`: the config's executor unless one is given
    (then its owner shuts it down)."""

    def drive(run_dir: pathlib.Path, db: RunDB, editor: Editor, checker) -> SearchResult:
        own = executor is None
        ex = make_executor(cfg.executor, run_dir) if own else executor
        interrupted = False
        try:
            return asyncio.run(_search(_Run(cfg, run_dir, db, editor, ex, checker, on_progress)))
        except BaseException as e:
            interrupted = not isinstance(e, Exception)  # KeyboardInterrupt (SIGINT or SIGTERM)
            raise
        finally:
            if own:
                # On an interrupt the in-flight evaluation is abandoned (its worker killed), not
                # awaited: its proposal stays recorded and a resume evaluates it again.
                ex.shutdown(wait=not interrupted)

    return drive


def run_search(
    cfg: SearchConfig,
    run_dir: str | pathlib.Path,
    *,
    resume: bool = False,
    command: list[str] | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    executor=None,
    checker=None,
) -> SearchResult:
    """Runs (or resumes) a search in `run_dir`; returns where the best program is.

    `executor` and `checker` default to the config's executor and a sandboxed feasibility
    check at the protocol's sizes; tests may pass their own. A proposal-only config
    (`proposal_only`) proposes and checks only: nothing trains, no executor is started.
    """
    if cfg.proposal_only is not None:  # the parent source is a fixed pool
        start_editor, drive = proposal_only.start_editor, proposal_only.driver(cfg, on_progress)
    else:  # the parent source is the archive; the sandbox warms up while the seed trains
        start_editor, drive = startup.start_editor, _driver(cfg, on_progress, executor)
    return pipeline.run(
        cfg,
        run_dir,
        resume=resume,
        command=command,
        checker=checker,
        start_editor=start_editor,
        drive=drive,
        warm_in_background=cfg.proposal_only is None,
    )
