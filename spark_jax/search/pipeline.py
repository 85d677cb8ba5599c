"""One search pipeline: propose -> check -> record, from a pluggable parent source.

    draw parents (archive or fixed pool, `search.parents`) -> step context -> operator step
    (the editor proposes, the sandboxed feasibility check judges) -> the duplicate rule ->
    record the proposal (with the caller's search state, in one transaction)

Both ways of running a search use it: the archive-driven search (`search.loop`, which also
trains what passes) and the proposal-only mode (`search.proposal_only`, a fixed pool, nothing
trained). `run` is their shared frame: the checks before anything is written, the run
directory's lock and database, the sandbox, the stop record and the clean-up.
"""

from __future__ import annotations

import pathlib
import threading
import time
from typing import Callable

from spark_jax.config.search import SearchConfig
from spark_jax.operator.editors import Editor, StepContext
from spark_jax.operator.signals import SearchHistory, StepSignals
from spark_jax.operator.step import Proposal
from spark_jax.search import budget, family_setup, prompt_context, startup
from spark_jax.search.outcome import SearchResult
from spark_jax.search.parents import ParentSource
from spark_jax.search.rundb import RunDB

__all__ = ["Pipeline", "run", "sandbox_checker"]

# (child source, parent source, factor) -> FeasibilityReport
Checker = Callable[[str, str, str], object]


class Pipeline:
    """propose -> check -> record for one run: the step context of an attempt drawn from the
    run's parent source, the duplicate rule, the proposal's record."""

    def __init__(self, cfg: SearchConfig, db: RunDB, source: ParentSource):
        self.cfg, self.db, self.source = cfg, db, source
        self.family_fields = family_setup.job_fields(cfg)  # {} for CLRS
        self.contract = family_setup.contract(cfg)
        self.split, self.family = prompt_context.task_split(cfg.protocol), None
        if self.family_fields:  # another family: its fixed data split, from the run's record
            self.split = prompt_context.family_split(db.get_meta("data") or {})
            self.family = cfg.family

    def context(
        self, attempt: int, history: SearchHistory, router_signals: StepSignals | None
    ) -> StepContext:
        """The step context H_t of `attempt`: parents drawn from the source, `history`'s
        outcomes and signals (`router_signals`: the route prompt's, None before any)."""
        cfg, draw = self.cfg, self.source.draw(attempt)
        return StepContext(
            task=cfg.target,
            parent=draw.parent,
            top=draw.top,
            diverse=draw.diverse,
            outcomes=history.recent_outcomes(),
            router_signals=router_signals,
            island=draw.island,
            origin=draw.origin,
            split=self.split,
            io_task=cfg.task,
            family=self.family,
            signals=history.signals(""),
            macs_nodes=cfg.protocol.macs_nodes,
            fitness_seeds=cfg.fitness.seeds,
            contract=self.contract,
        )

    def unless_duplicate(self, proposal: Proposal) -> Proposal:
        """The duplicate rule (`search.budget`): a child that repeats a program the source
        knows (`ParentSource.twin`) is recorded as a duplicate, not trained or counted."""
        twin = self.source.twin(proposal)
        return proposal if twin is None else budget.as_duplicate(proposal, twin)

    def record(
        self, proposal: Proposal, state: Callable[[str | None], None] | None = None
    ) -> str | None:
        """Stores `proposal` (and its child program when feasible) and, in the same
        transaction, what `state(child_id)` writes; returns the child's program id."""
        with self.db.transaction():
            child_id = self.db.record_proposal(proposal)
            if state is not None:
                state(child_id)
        return child_id


def sandbox_checker(cfg: SearchConfig, warm_in_background: bool):
    """(checker, its sandbox worker): the sandboxed feasibility check at the protocol's sizes
    (or the family's shapes). The worker warms up (JAX import, warm-up at these sizes) on a
    background thread when asked, e.g. while the seed trains, else before this returns."""
    from spark_jax.feasibility import checker as feasibility
    from spark_jax.feasibility.sandbox import SandboxWorker

    options = family_setup.check_options(cfg)  # CLRS sizes, or the family's shapes
    worker = SandboxWorker()
    if warm_in_background:
        threading.Thread(target=worker.start, args=(options.to_dict(),), daemon=True).start()
    else:
        worker.start(options.to_dict())

    def checker(child, parent, factor):
        return feasibility.check_program(
            child, parent_source=parent, factor=factor, options=options, worker=worker
        )

    return checker, worker


# (run_dir, db, editor, checker) -> the run's result
Drive = Callable[[pathlib.Path, RunDB, Editor, Checker], SearchResult]


def run(
    cfg: SearchConfig,
    run_dir: str | pathlib.Path,
    *,
    resume: bool,
    command: list[str] | None,
    checker: Checker | None,
    start_editor: Callable[[SearchConfig, pathlib.Path, bool], Editor],
    drive: Drive,
    warm_in_background: bool,
) -> SearchResult:
    """Runs (or resumes) a search in `run_dir` through `drive`, framed: the editor and the
    family checked before anything is written, the run directory locked and its database
    opened, the sandboxed check started unless `checker` is given, the finish (or the stop
    and why) noted in the database, and everything closed however it ends."""
    run_dir = pathlib.Path(run_dir)
    editor = start_editor(cfg, run_dir, resume)  # everything checked before anything is written
    data = family_setup.check_family(cfg)  # the family's fixed split and seeds
    lock, db = startup.open_run(cfg, run_dir, resume, command, data)
    worker = None
    try:
        if checker is None:
            checker, worker = sandbox_checker(cfg, warm_in_background)
        result = drive(run_dir, db, editor, checker)
        db.set_meta("finished_at", time.time())
        return result
    except BaseException as e:
        startup.record_stop(db, e)
        raise
    finally:
        if worker is not None:
            worker.close()
        db.close()
        lock.release()
