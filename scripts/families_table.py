"""Writes the generated block of results/families/README.md from the folder's data: one run
database per (benchmark, seed program) in OUT/data/<benchmark>-<seed>/run.db, and
OUT/data/notes.json (why a benchmark has no run: e.g. its data could not be downloaded) and
OUT/data/run.json (command, commit, date, host), and each run's retest.json beside its
run.db (the verdict table). Every number comes from those files.

Usage: python scripts/families_table.py [results/families]
"""

from __future__ import annotations

import json
import pathlib
import sys

from spark_jax.benchmark import family_retest
from spark_jax.report import family_smoke
from spark_jax.util.files import replace_generated

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "results" / "families"
BEGIN = "<!-- generated -->"


def block(out: pathlib.Path) -> str:
    data = out / "data"
    meta = json.loads((data / "run.json").read_text(encoding="utf-8"))
    rows = family_smoke.rows_from_folder(data)
    retests = family_retest.retests_from_folder(data)
    return "\n".join(
        [
            f"Command: `{meta['command']}` at commit `{meta['commit']}`, {meta['date_utc']}; "
            f"host {meta['host']}; preset `{meta['preset']}`, budget {meta['budget']} evaluated "
            "programs (seed included), offline editor (not an LLM), search training seed 0.",
            "",
            "### Verdicts: best of search vs its seed program, fresh seeds, test part",
            "",
            *family_retest.retest_lines(retests),
            "",
            "### The searches' own record (training seed 0; one run per row, no verdict)",
            "",
            family_smoke.PROTOCOL_NOTE,
            "",
            *family_smoke.table_lines(rows),
        ]
    )


def main(argv: list[str]) -> int:
    out = pathlib.Path(argv[0]) if argv else DEFAULT_OUT
    readme = out / "README.md"
    readme.write_text(
        replace_generated(readme.read_text(encoding="utf-8"), BEGIN, block(out)), encoding="utf-8"
    )
    print(readme)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
