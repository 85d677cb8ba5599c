"""Copies one `spark-jax compare` directory's record into a results folder's data/.

`copy_comparison(COMPARE_DIR, DATA_DIR, extras)` replaces DATA_DIR by: compare.json,
report.md and the extra files, plots/, and for each search METHOD/seed-S/ its run.db (one
self-contained database, its WAL folded in, opened as RunDB opens it so reading changes no
byte), its config.yaml and log, and its LLM cassette METHOD/seed-S.cassette.jsonl when it has
one. Standard library only (scripts/compare_copy.py, used by scripts/controls_offline.sh,
scripts/llm_trained.sh and scripts/results/intensify.sh).
"""

from __future__ import annotations

import pathlib
import shutil
import sqlite3

__all__ = ["NotAComparison", "copy_comparison"]


class NotAComparison(Exception):
    """The source holds no compare.json; the message names it."""


def copy_comparison(src: pathlib.Path, dest: pathlib.Path, extras: list[pathlib.Path]) -> None:
    """Replaces `dest` by the record of the comparison in `src` (see the module docstring).

    Raises:
      NotAComparison: `src` has no compare.json (nothing is written).
    """
    if not (src / "compare.json").is_file():
        raise NotAComparison(f"{src}: no compare.json (not a comparison directory)")
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    for path in [src / "compare.json", src / "report.md", *extras]:
        shutil.copy2(path, dest / path.name)
    shutil.copytree(src / "plots", dest / "plots")
    for run in sorted(p for p in src.glob("*/seed-*") if p.is_dir()):
        rel = run.relative_to(src)
        (dest / rel).mkdir(parents=True)
        db, out = sqlite3.connect(run / "run.db"), sqlite3.connect(dest / rel / "run.db")
        db.backup(out)
        out.execute("PRAGMA journal_mode=WAL")
        out.close()
        db.close()
        shutil.copy2(run / "config.yaml", dest / rel / "config.yaml")
        # Beside the run directory: METHOD/seed-S.log and METHOD/seed-S.cassette.jsonl.
        for suffix in (".log", ".cassette.jsonl"):
            side = run.parent / f"{run.name}{suffix}"
            if side.is_file():
                shutil.copy2(side, dest / rel.parent / side.name)
