"""Where a search attempt's parents come from: the pipeline's pluggable parent source.

    ArchiveSource  the island archive, which grows with every evaluation (a search)
    PoolSource     a fixed pool of evaluated programs, never trained again (`proposal_only`)

A source draws one attempt's parent and inspirations (`draw`) and says which earlier program a
proposal's child repeats (`twin`, the duplicate rule of `search.budget`); everything else of
propose -> check -> record is the same for both (`search.pipeline`). `make_source` picks the
source the config asks for.
"""

from __future__ import annotations

import abc
import dataclasses
import hashlib
import pathlib
from typing import Any

from spark_jax.config.search import SearchConfig
from spark_jax.operator.context_text import ParentOrigin
from spark_jax.operator.editors import ProgramView
from spark_jax.operator.step import Proposal
from spark_jax.search import prompt_context
from spark_jax.search.archive import Candidate, IslandArchive
from spark_jax.search.parent_pool import ParentPool, load_pool
from spark_jax.search.rundb import RunDB, program_sha256

__all__ = ["ArchiveSource", "Draw", "ParentSource", "PoolSource", "make_source"]


@dataclasses.dataclass(frozen=True)
class Draw:
    """One attempt's parents: the parent and the inspirations shown (`top`, `diverse`), the
    island the parent was drawn from, and where it came from."""

    parent: ProgramView
    top: tuple[ProgramView, ...]
    diverse: tuple[ProgramView, ...]
    island: int
    origin: ParentOrigin


def _view(c: Candidate, source: str) -> ProgramView:
    metrics = dict(ood_score=c.ood_acc, val_score=c.val_score, macs=c.macs)
    if c.val_score is None:  # a family without a validation-based training loop
        del metrics["val_score"]
    return ProgramView(c.id, source, metrics, parent_id=c.parent_id)


class ParentSource(abc.ABC):
    """The contract of a parent source: `draw(attempt)` gives the attempt's parents (it may
    advance the source's own state, e.g. the archive's island and RNG); `twin(proposal)` gives
    the id of a program the proposal's child repeats, or None (then it is a new program)."""

    @abc.abstractmethod
    def draw(self, attempt: int) -> Draw:
        """The parent and inspirations of `attempt`."""

    @abc.abstractmethod
    def twin(self, proposal: Proposal) -> str | None:
        """The id of the program `proposal`'s child repeats, or None."""


class ArchiveSource(ParentSource):
    """The search's island archive: the next island's parent and inspirations; a twin is a
    program that entered training before (by normalized source), whatever the verdict."""

    def __init__(self, cfg: SearchConfig, db: RunDB):
        self.db = db
        self.archive = IslandArchive(cfg.archive)

    def draw(self, attempt: int) -> Draw:
        island = self.archive.next_island()
        parent, top, diverse = self.archive.sample(island)

        def view(c: Candidate) -> ProgramView:
            return _view(c, self.db.program_source(c.id))

        return Draw(
            parent=view(parent),
            top=tuple(view(c) for c in top),
            diverse=tuple(view(c) for c in diverse),
            island=island,
            origin=prompt_context.origin(parent, self.archive.best(), island),
        )

    def twin(self, proposal: Proposal) -> str | None:
        if proposal.child_source is None:
            return None
        return self.db.entered_training(proposal.child_source)


class PoolSource(ParentSource):
    """A fixed parent pool (`search.parent_pool`): attempt i proposes from program `i mod n`,
    the other programs, best first, its inspirations. The pool stands for the programs that
    entered training: a feasible child equal to a pool program, or to an earlier attempt's
    feasible child, is a twin."""

    def __init__(self, cfg: SearchConfig, db: RunDB):
        self.cfg, self.db = cfg, db
        self.pool: ParentPool = load_pool(cfg.proposal_only.pool, cfg.target)
        self.ids = [db.insert_program(p.source) for p in self.pool.programs]
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

    def meta(self) -> dict[str, Any]:
        """The run's record of its pool (run_meta 'proposal_only')."""
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
        """Pool program `i` as a prompt shows it."""
        return _view(self.candidates[i], self.pool.programs[i].source)

    def observe_into(self, operator) -> None:
        """Shows `operator` every pool program with its lineage, as a search would have."""
        for i, p in enumerate(self.pool.programs):
            j = self.pool.parent_of(i)
            parent = None if j is None else self.view(j)
            operator.observe_pool(self.ids[i], p.source, p.evaluation, parent, p.description)

    def draw(self, attempt: int) -> Draw:
        index = self.pool.parent_index(attempt)
        return Draw(
            parent=self.view(index),
            top=tuple(self.view(i) for i in self.pool.inspirations(index)),
            diverse=(),
            island=0,
            origin=prompt_context.origin(self.candidates[index], self.best, 0),
        )

    def twin(self, proposal: Proposal) -> str | None:
        if proposal.child_source is None or proposal.status != "feasible":
            return None  # only a valid child can be a duplicate
        sha = program_sha256(proposal.child_source)
        twin = next((c.id for c in self.candidates if c.source_sha == sha), None)
        return twin or self.db.entered_training(proposal.child_source)


def make_source(cfg: SearchConfig, db: RunDB) -> ParentSource:
    """The config's parent source: a fixed pool under `proposal_only`, else the archive."""
    return ArchiveSource(cfg, db) if cfg.proposal_only is None else PoolSource(cfg, db)
