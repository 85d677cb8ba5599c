"""The parent pool of the reliability experiment, written from a finished search's database.

`write_pool(RUN_DIR, OUT_DIR)`: RUN_DIR is the search of
results/llm-reliability/pool-source/pool-search.yaml (offline rule-based editor, tiny preset:
these scores are a tiny protocol's, used only to show the model evaluated programs with their
scores). The seed comes first, then every program that evaluated ok, in evaluation order, each
with its lineage (parent, attempt, the editor's directive as its description). Writes NAME.py
per program and pool.json, the file a proposal-only comparison reads
(`spark_jax.search.parent_pool`). scripts/llm_reliability_pool.py runs it.
"""

from __future__ import annotations

import json
import pathlib

from spark_jax.search.rundb import RunDB

__all__ = ["write_pool"]


def _pooled_programs(db: RunDB, out: pathlib.Path) -> list[dict]:
    """Writes each program that evaluated ok to OUT/NAME.py; returns their pool entries."""
    programs = []
    proposals = {p.attempt: p for p in db.proposals()}
    names: dict[str, str] = {}  # program id -> its name in the pool
    for attempt, program_id, result in db.evaluation_results():
        if not result.ok:
            continue
        name = "seed" if attempt is None else f"attempt-{attempt}"
        names[program_id] = name
        (out / f"{name}.py").write_text(db.program_source(program_id), encoding="utf-8")
        entry = dict(name=name, file=f"{name}.py", evaluation=result.evaluation.to_dict())
        if attempt is not None:  # its lineage: the parent (when pooled) and the edit
            made_by = proposals[attempt]
            entry.update(
                parent=names.get(made_by.parent_id), attempt=attempt, description=made_by.directive
            )
        programs.append(entry)
    return programs


def write_pool(run_dir: pathlib.Path, out: pathlib.Path) -> tuple[pathlib.Path, int]:
    """Writes the pool of the search in `run_dir` into `out`; returns pool.json's path and
    the number of programs in it."""
    out.mkdir(parents=True, exist_ok=True)
    with RunDB.open(run_dir / "run.db") as db:
        config = db.get_meta("config")
        programs = _pooled_programs(db, out)
    pool = dict(
        about=(
            "Parents of the proposal-only reliability experiment: the seed and the programs "
            "an offline (rule-based, not LLM) search evaluated, with their scores, on "
            f"{config['task']}, preset {config['preset']} "
            "(results/llm-reliability/pool-source/pool-search.yaml)."
        ),
        task=config["task"],
        preset=config["preset"],
        programs=programs,
    )
    (out / "pool.json").write_text(json.dumps(pool, indent=1, sort_keys=True) + "\n")
    return out / "pool.json", len(programs)
