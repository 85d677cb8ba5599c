"""What a run calls its best program, written to `RUN_DIR/best/`.

Best = the best evaluated candidate (`RunQueries.best_candidate`: higher OOD on the
selection set, then fewer MACs, else the earlier), the seed apart: the seed is its own row
everywhere (CLI summary, report, plots, browser view). `best/` holds

  best_program.py   that candidate's source (the seed's, said so in best.json, when no
                    candidate scored, so that a benchmark of the run still has a program)
  best.json         what it is: program id, attempt index, OOD on the selection set,
                    whether it is the seed, and the seed's OOD beside it
  vs_seed.diff      its unified diff against the seed program

Every file is written via a temporary sibling and a rename.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import pathlib
from typing import Any

from spark_jax.search.queries import RunQueries
from spark_jax.util import files

__all__ = ["BEST_DIR", "BestProgram", "best_program", "seed_diff", "write_best"]

BEST_DIR = "best"


@dataclasses.dataclass(frozen=True)
class BestProgram:
    """The run's best program: the best evaluated candidate, or the seed when none scored
    (`is_seed`). `attempt` is its 0-based attempt index (None for the seed); OODs are
    fractions on the selection set (None when not scored); `seed_id` and `seed_source` are the
    seed program's."""

    program_id: str
    source: str
    is_seed: bool
    attempt: int | None
    ood_score: float | None
    seed_ood: float | None
    seed_source: str
    seed_id: str


def best_program(db: RunQueries) -> BestProgram | None:
    """The run's best program; None when not even the seed was evaluated."""
    seed = db.seed_evaluation()
    if seed is None:
        return None
    seed_source = db.program_source(seed["program_id"])
    cand = db.best_candidate()
    chosen = seed if cand is None else cand
    return BestProgram(
        program_id=chosen["program_id"],
        source=db.program_source(chosen["program_id"]),
        is_seed=cand is None,
        attempt=chosen["proposal_attempt"],
        ood_score=chosen["ood_score"] if chosen["status"] == "ok" else None,
        seed_ood=seed["ood_score"] if seed["status"] == "ok" else None,
        seed_source=seed_source,
        seed_id=seed["program_id"],
    )


def seed_diff(best: BestProgram) -> str:
    """The best program's unified diff against the seed ('' when they are the same)."""
    return "".join(
        difflib.unified_diff(
            best.seed_source.splitlines(keepends=True),
            best.source.splitlines(keepends=True),
            "seed_program.py",
            "best_program.py",
        )
    )


def write_best(run_dir: str | pathlib.Path, db: RunQueries) -> pathlib.Path | None:
    """Writes `run_dir/best/` (see the module doc); returns best_program.py's path (None
    when not even the seed was evaluated: nothing is written). OSError on a full disk."""
    best = best_program(db)
    if best is None:
        return None
    out = pathlib.Path(run_dir) / BEST_DIR
    info: dict[str, Any] = {
        "what": "the seed program: no candidate scored"
        if best.is_seed
        else "the best evaluated candidate (the seed apart)",
        "program_id": best.program_id,
        "attempt_index": best.attempt,
        "is_seed": best.is_seed,
        "ood_score": best.ood_score,
        "seed_ood_score": best.seed_ood,
    }
    files.write_atomic(out / "vs_seed.diff", seed_diff(best))
    files.write_atomic(out / "best.json", json.dumps(info, indent=2) + "\n")
    files.write_atomic(out / "best_program.py", best.source)
    return out / "best_program.py"
