"""The duplicate rule's second half (`fitness.duplicates: function`): a feasible child whose
function fingerprint (`evaluation.identity`: same parameters from the same keys, bit-identical
loss and gradients on probe batches of the task) equals that of a program that entered
training is a duplicate, not trained and not counted toward the budget, for every method
alike. The fingerprints of the programs that entered training are stored in the run database
(`run_meta['function_fingerprints']`, fingerprint -> program id) in the same transaction as
the proposal, so a resumed search knows them. CLRS only: another family's programs are checked
by source alone. A probe that fails gives no fingerprint: the child is then trained.
"""

from __future__ import annotations

import asyncio
from typing import Any

from spark_jax.config.search import SearchConfig
from spark_jax.evaluation.identity import IdentityWorker
from spark_jax.operator.step import Proposal
from spark_jax.search import budget

__all__ = ["META_KEY", "FunctionIndex"]

META_KEY = "function_fingerprints"


class FunctionIndex:
    """The fingerprints of a run's trained programs, and the probe worker that makes them
    (started on first use). Disabled (every call a no-op) unless the rule asks for it."""

    def __init__(self, cfg: SearchConfig, db, enabled: bool) -> None:
        self.cfg, self.db, self.enabled = cfg, db, enabled
        self._worker: IdentityWorker | None = None
        self._protocol = cfg.fitness.selection_protocol(cfg.protocol).to_dict()
        self.known: dict[str, str] = dict(db.get_meta(META_KEY) or {}) if enabled else {}

    @classmethod
    def for_run(cls, cfg: SearchConfig, db, family_fields: dict[str, Any]) -> "FunctionIndex":
        return cls(cfg, db, cfg.fitness.duplicates == "function" and not family_fields)

    async def fingerprint(self, source: str, name: str) -> str | None:
        if not self.enabled:
            return None
        if self._worker is None:
            self._worker = IdentityWorker()
        task = self.cfg.target
        return await asyncio.to_thread(self._worker.fingerprint, source, name, task, self._protocol)

    async def note_seed(self, program_id: str, source: str) -> None:
        found = await self.fingerprint(source, "seed")
        if found is not None:
            self.remember(found, program_id)

    async def check(self, proposal: Proposal) -> tuple[Proposal, str | None]:
        """(the proposal, as a duplicate when its child's function was trained before; the
        child's fingerprint to remember once it enters training, else None)."""
        if not (self.enabled and proposal.feasible and proposal.child_source is not None):
            return proposal, None
        found = await self.fingerprint(proposal.child_source, f"attempt-{proposal.attempt}")
        twin = self.known.get(found) if found is not None else None
        if twin is not None:
            return budget.as_duplicate(proposal, twin, same="function"), None
        return proposal, found

    def remember(self, fingerprint: str | None, program_id: str) -> None:
        """Stores a trained program's fingerprint (call inside the proposal's transaction)."""
        if fingerprint is None or fingerprint in self.known:
            return
        self.known[fingerprint] = program_id
        self.db.set_meta(META_KEY, self.known)

    def close(self) -> None:
        if self._worker is not None:
            self._worker.close()
            self._worker = None
