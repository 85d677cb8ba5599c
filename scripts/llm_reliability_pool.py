#!/usr/bin/env python3
"""Writes the reliability experiment's parent pool from a finished search's database.

    python scripts/llm_reliability_pool.py RUN_DIR results/llm-reliability/parents

RUN_DIR is the search of results/llm-reliability/pool-source/pool-search.yaml (offline
rule-based editor, tiny preset: these scores are a tiny protocol's, used only to show the
model evaluated programs with their scores). The seed comes first, then every program that
evaluated ok, in evaluation order, each with its lineage (parent, attempt, the editor's
directive as its description). Writes NAME.py per program and pool.json
(`spark_jax.search.parent_pool`).
"""

from __future__ import annotations

import json
import pathlib
import sys

from spark_jax.search.rundb import RunDB


def main(run_dir: str, out_dir: str) -> int:
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    programs = []
    with RunDB.open(pathlib.Path(run_dir) / "run.db") as db:
        config = db.get_meta("config")
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
                    parent=names.get(made_by.parent_id),
                    attempt=attempt,
                    description=made_by.directive,
                )
            programs.append(entry)
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
    print(f"{len(programs)} programs -> {out / 'pool.json'}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
