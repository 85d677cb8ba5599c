"""results/restructure-records: do a benchmark and a comparison on `tiny` store the same
records after the house was restructured around its extension points as before?

`scripts/results/restructure-records.sh` runs both commands (`tests/command_records.py`: a
two-program, two-task, two-seed benchmark and a SPARK/OpenEvolve comparison, each trained for
real on one machine) in a checkout of each commit, and keeps per stored table its row count and
the sha256 of its rows without timestamps, durations and the machine (`data/before.json`,
`data/after.json`: {"commit", "machine", "settings": {scenario: {"preset", "editor"}},
"scenarios": {scenario: {part: {table: {rows, sha256}}}}}; the settings are read from the stored
records, not from the commands). This module writes the README's table and answer from them: a table is the same
when its digest is. The search's own records are checked by tests/test_pipeline_records.py.
"""

from __future__ import annotations

import json
import pathlib
from collections.abc import Sequence

from spark_jax.results import readme as folders
from spark_jax.util import labels, markdown

FOLDER = "restructure-records"
SCRIPT = "restructure_records_table"
HEADER = ["scenario", "stored part", "table", "rows before", "rows after", "records"]


def _load(folder: pathlib.Path, side: str) -> dict:
    path = folder / "data" / f"{side}.json"
    if not path.is_file():
        raise SystemExit(f"{path}: missing (run scripts/results/restructure-records.sh)")
    return json.loads(path.read_text(encoding="utf-8"))


def rows(before: dict, after: dict) -> list[list[str]]:
    """One row per (scenario, part, table) found on either side, sorted."""
    out = []
    keys = set()
    for side in (before, after):
        for scenario, parts in side["scenarios"].items():
            keys |= {(scenario, part, t) for part, tables in parts.items() for t in tables}
    for scenario, part, table in sorted(keys):
        found = [s["scenarios"].get(scenario, {}).get(part, {}).get(table) for s in (before, after)]
        counts = [str(f["rows"]) if f else "absent" for f in found]
        same = found[0] is not None and found[0] == found[1]
        out.append([scenario, part, table, *counts, "same" if same else "DIFFER"])
    return out


def settings_line(before: dict, after: dict) -> str:
    """The presets and editors each scenario's stored records name, on both sides."""
    parts = []
    for scenario in sorted(set(before.get("settings", {})) | set(after.get("settings", {}))):
        found = [side.get("settings", {}).get(scenario, {}) for side in (before, after)]
        presets = sorted({p for f in found for p in f.get("preset", [])})
        editors = sorted({e for f in found for e in f.get("editor", [])})
        said = [f"preset `{p}`" for p in presets]
        said += (
            [f"editor `{'`, `'.join(editors)}`: {labels.editor_label(editors)}"] if editors else []
        )
        same = "" if found[0] == found[1] else " (the two sides name different settings)"
        parts.append(f"{scenario}: {', '.join(said) or 'no settings stored'}{same}")
    return "Settings in the stored records: " + "; ".join(parts) + "." if parts else ""


def answer(before: dict, after: dict, table: list[list[str]]) -> str:
    """The `**Answer.**` paragraph: whether every stored table is the same."""
    differ = [f"{r[0]} {r[1]} {r[2]}" for r in table if r[-1] != "same"]
    scenarios = sorted({r[0] for r in table})
    if not differ:
        return (
            f"Yes. All {len(table)} tables that the {' and the '.join(scenarios)} runs store "
            f"hold the same records at {after['commit']} as at {before['commit']} (row counts "
            "and contents; timestamps, durations and the machine left out)."
        )
    return (
        f"No. {len(differ)} of {len(table)} stored tables differ between {before['commit']} "
        f"and {after['commit']}: " + ", ".join(differ) + "."
    )


def write(folder: pathlib.Path) -> str:
    """Rewrites `folder`'s README block and answer from its data; returns the answer."""
    before, after = _load(folder, "before"), _load(folder, "after")
    table = rows(before, after)
    block = [
        f"Before: `{before['commit']}` on {before['machine']}; "
        f"after: `{after['commit']}` on {after['machine']}.",
        "",
        settings_line(before, after),
        "",
        *markdown.table(HEADER, table),
    ]
    text = answer(before, after, table)
    folders.rewrite(folder / "README.md", block, folders.answer_mark(SCRIPT), text)
    return text


def main(argv: Sequence[str] | None = None) -> int:
    args = folders.folder_arguments(argv, FOLDER, __doc__)
    print(write(args.out))
    return 0
