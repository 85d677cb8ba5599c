#!/usr/bin/env python3
"""Copies one `spark-jax compare` directory's record into a results folder's data/.

    python scripts/compare_copy.py COMPARE_DIR DATA_DIR [EXTRA_FILE...]

DATA_DIR is replaced by: compare.json, report.md and the EXTRA_FILEs, plots/, and for each
search METHOD/seed-S/ its run.db (one self-contained database, its WAL folded in, opened as
RunDB opens it so reading changes no byte), its config.yaml and log, and its LLM cassette
METHOD/seed-S.cassette.jsonl when it has one. Standard library only (used by
scripts/controls_offline.sh and scripts/llm_trained.sh).
"""

from __future__ import annotations

import pathlib
import shutil
import sqlite3
import sys


def copy_comparison(src: pathlib.Path, dest: pathlib.Path, extras: list[pathlib.Path]) -> None:
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


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        sys.exit(__doc__.split("\n\n")[1].strip())
    src, dest, *extras = (pathlib.Path(a) for a in argv)
    if not (src / "compare.json").is_file():
        sys.exit(f"{src}: no compare.json (not a comparison directory)")
    copy_comparison(src, dest, extras)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
