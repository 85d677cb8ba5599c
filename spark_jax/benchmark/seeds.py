"""The seeds a benchmark trains with, kept apart from the seeds a search selected with.

A search's best program won on its scores under the search's own training seeds (`seed` ..
`seed + fitness.seeds - 1`); training it again with those seeds re-measures the selection (the
winner's curse). `search_seeds` reads every seed a run trained with from its `run.db` (the
config's seed and `fitness.seeds`, and the seeds of every stored evaluation);
`default_first_seed` starts a benchmark's seeds after the largest of them (every program then
shares those seeds, so comparisons stay paired); `check_disjoint` refuses an overlap in one
line unless it is allowed; `program_lines` lists every program's training seeds for the report.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any, Iterable, Mapping, Sequence

from spark_jax.families import DEFAULT_FAMILY

__all__ = [
    "ALLOW_FLAG",
    "SeedOverlapError",
    "check_disjoint",
    "default_first_seed",
    "program_lines",
    "run_family",
    "search_seeds",
]

ALLOW_FLAG = "--allow-seed-overlap"


class SeedOverlapError(ValueError):
    """Benchmark seeds that a program's search also trained (and selected) with."""


def _config_seeds(config: Mapping[str, Any] | None, meta: Mapping[str, Any]) -> set[int]:
    config = config or {}
    seed = config.get("seed", meta.get("seed"))
    if seed is None:
        return set()
    k = (config.get("fitness") or {}).get("seeds") or meta.get("seeds_per_candidate") or 1
    return set(range(int(seed), int(seed) + int(k)))


def _evaluation_seeds(rows: Iterable[Mapping[str, Any]]) -> set[int]:
    out: set[int] = set()
    for row in rows:
        if row.get("seed") is not None:
            out.add(int(row["seed"]))
        data = json.loads(row["evaluation_json"]) if row.get("evaluation_json") else {}
        out.update(int(s) for s in data.get("seeds") or ())
    return out


def _read_run(run_dir: pathlib.Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    from spark_jax.search.rundb import RunDB, RunDBError

    path = run_dir / "run.db"
    if not path.is_file():
        raise ValueError(f"{run_dir}: no run.db, so the seeds its search trained with are unknown")
    try:
        with RunDB.open(path) as db:
            keys = ("config", "seed", "seeds_per_candidate", "family", "final_test")
            meta = {k: db.get_meta(k) for k in keys}
            return meta, db.evaluations()
    except RunDBError as e:
        raise ValueError(f"{run_dir}: {' '.join(str(e).split())}") from None


def search_seeds(run_dir: str | pathlib.Path) -> tuple[int, ...]:
    """Every training seed the search in `run_dir` trained with, sorted; ValueError naming
    the directory when its run.db is missing or unreadable."""
    run_dir = pathlib.Path(run_dir)
    meta, rows = _read_run(run_dir)
    seeds = _config_seeds(meta.get("config"), meta) | _evaluation_seeds(rows)
    finals = ((meta.get("final_test") or {}).get("programs") or {}).values()
    seeds |= _evaluation_seeds(
        {"evaluation_json": json.dumps(f["evaluation"])} for f in finals if f.get("evaluation")
    )
    return tuple(sorted(seeds))


def run_family(run_dir: str | pathlib.Path) -> str:
    """The task family of the search in `run_dir` (the default, CLRS, for runs that predate
    families)."""
    meta, _ = _read_run(pathlib.Path(run_dir))
    return meta.get("family") or DEFAULT_FAMILY


def default_first_seed(search_seed_sets: Iterable[Sequence[int]]) -> int:
    """0, or one past the largest seed any of the given searches trained with."""
    used = [s for seeds in search_seed_sets for s in seeds]
    return max(used) + 1 if used else 0


def check_disjoint(seeds: Sequence[int], programs: Sequence[Any], allow: bool = False) -> None:
    """Raises SeedOverlapError (one line) when a benchmark seed is one that a program's
    search trained with, unless `allow`."""
    if allow:
        return
    for p in programs:
        overlap = sorted(set(seeds) & set(p.search_seeds))
        if overlap:
            first = max(p.search_seeds) + 1
            raise SeedOverlapError(
                f"seeds {overlap} are seeds the search behind {p.label} trained and selected "
                f"it with ({list(p.search_seeds)}); re-measuring it on them repeats its "
                f"selection: use seeds from {first} on (--first-seed {first}, or leave "
                f"--first-seed out) or pass {ALLOW_FLAG}"
            )


def program_lines(spec: Mapping[str, Any], programs: Sequence[Any], results: Sequence[Any]):
    """The report's list: each program, where it came from, the seeds it trained with here,
    and for a searched program the seeds its search used (disjoint, or the allowed overlap)."""
    planned = [int(s) for s in spec["seeds"]]
    lines = [
        f"Every program trains with the seeds {planned} (the same for all, so comparisons "
        "are paired); below, the seeds each one trained with so far.",
        "",
    ]
    for p in programs:
        ran = sorted({r.seed for r in results if r.program_key == p.key})
        text = f"- `{p.label}`: {p.origin}; training seeds {ran or 'none yet'}"
        if ran != planned:
            text += f" (of {planned})"
        if p.search_seeds:
            overlap = sorted(set(planned) & set(p.search_seeds))
            text += f"; its search trained with seeds {list(p.search_seeds)}"
            text += (
                f": OVERLAP on {overlap}, allowed by {ALLOW_FLAG} (the scores on these seeds "
                "re-measure the search's own selection)"
                if overlap
                else ": disjoint"
            )
        lines.append(text)
    return lines
