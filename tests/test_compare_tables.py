"""The comparison report from run databases, without training: best at budget B counts the
seed toward B (as a search's `budget` does) and reads the best of the first B - 1 candidates
after it, the seed program has its own row, attempts and
evaluated counts stand side by side, methods get verdicts against the first (cannot tell
with too few search seeds), and the paper's rows carry their true source."""

from __future__ import annotations

import dataclasses
import json
import pathlib

import serve_fixtures  # tests/serve_fixtures.py: comparison directories without training

from spark_jax.compare import tables
from spark_jax.compare.runner import PLAN_FILE, ComparePlan


def _report(tmp_path: pathlib.Path, members, task: str = "bfs") -> str:
    out = serve_fixtures.make_comparison(tmp_path / "cmp", members)
    plan = ComparePlan.from_dict(json.loads((out / PLAN_FILE).read_text()))
    plan = dataclasses.replace(plan, base={**plan.base, "task": task})
    return tables.write_compare_report(out, plan).read_text()


def test_best_at_budget_excludes_the_seed_which_has_its_own_row(tmp_path):
    members = {  # the seed scores 0.40 in every run
        ("spark", 0): [0.5, None, 0.7],
        ("spark", 1): [0.6, 0.55],
        ("fixed-act-sar", 0): [0.30, None],  # every candidate below the seed
        ("fixed-act-sar", 1): [0.35],
    }
    md = _report(tmp_path, members)
    rows = {line.split(" | ")[0]: line for line in md.splitlines() if line.startswith("| `")}
    fixed = rows["| `fixed-act-sar` (Fixed-ACT SAR)"]
    # Best evaluated candidate 30 and 35, mean 32.50: below the seed, never lifted to 40.
    assert "| 2 | 32.50 ± 3.54 | — | 1.5 ± 0.7 | 1.0 ± 0.0 |" in fixed  # no final test
    spark = rows["| `spark` (Full SPARK)"]
    assert "| 2 | 65.00 ± 7.07 | — | 2.5 ± 0.7 | 2.0 ± 0.0 |" in spark  # attempts, evaluated
    seed = rows["| `seed` (seed program, no search)"]
    assert "| 4 | 40.00 ± 0.00 |" in seed
    assert (
        "best at budget B=4 (seed counted): selection OOD % | best candidate: test OOD % | "
        "attempts | evaluated |"
    ) in md
    assert "budget 4 evaluated programs (the seed counted: best at budget reads the first 3 " in md


def test_the_seed_counts_toward_the_budget_as_in_search(tmp_path):
    # One budget rule (`search.budget`: evaluated programs, the seed included): at B = 4 the
    # seed and three candidates; a fourth candidate's 0.95 lies beyond the budget.
    members = {("spark", 0): [0.5, 0.6, 0.7, 0.95], ("spark", 1): [0.45, 0.55, 0.65, 0.9]}
    md = _report(tmp_path, members)
    rows = {line.split(" | ")[0]: line for line in md.splitlines() if line.startswith("| `")}
    assert "| 2 | 67.50 ± 3.54 | — | 4.0 ± 0.0 | 4.0 ± 0.0 |" in rows["| `spark` (Full SPARK)"]
    section = md.split("## Methods against `spark`")[1]
    assert "best at budget B=4 of each search seed" in section


def test_methods_against_the_first_say_cannot_tell_with_two_search_seeds(tmp_path):
    members = {
        ("spark", 0): [0.9],
        ("spark", 1): [0.8],
        ("fixed-act-sar", 0): [0.5],
        ("fixed-act-sar", 1): [0.45],
    }
    md = _report(tmp_path, members)
    section = md.split("## Methods against `spark`")[1].split("\n## ")[0]
    # Same search seeds 0, 1: sign flips of 2 differences, p >= 0.5.
    assert "| `fixed-act-sar` | 2 / 2 | exact sign-flip | -37.50 | 0.5 | 0.5 | cannot tell |" in (
        section
    )
    assert "| win |" not in section and "| loss |" not in section
    assert "smallest possible p is 0.5" in section
    one = _report(tmp_path / "one", {("spark", 0): [0.9], ("fixed-act-sar", 0): [0.5]})
    section = one.split("## Methods against `spark`")[1].split("\n## ")[0]
    assert "| 1 / 1 | none (fewer than 2 seeds on a side) | -40.00 | — | — | cannot tell |" in (
        section
    )
    assert "Minimal detectable difference at these seeds and spread: cannot be computed" in (
        section
    )


def test_dfs_reference_rows_name_their_true_source(tmp_path):
    md = _report(tmp_path, {("spark", 0): [0.5]}, task="dfs")
    ref = md.split("## Paper reference rows")[1]
    assert (
        "| CLRS (base) | Ibarz et al. 2022 (quoted in SPARK paper, DFS ablation table) | — | "
        "46.78 | +0.00 | no (its protocol: `paper`) |"
    ) in ref
    assert "| SPARK | SPARK paper, DFS ablation table | DeepSeek-R1 | 83.74 |" in ref
    assert "- Ibarz et al. 2022: the hand-designed Triplet-GMPNN" in ref


def _final_test(run_dir: pathlib.Path, best: float, seed: float) -> None:
    """Stores a run's final test as search/final_test.py does: the seed and the best."""
    from spark_jax.search.rundb import RunDB

    def entry(role, ood):
        return dict(roles=[role], ok=True, evaluation=dict(ood_score=ood))

    with RunDB.open(run_dir / "run.db") as db:
        programs = {"p-best": entry("best", best), "p-seed": entry("seed", seed)}
        db.set_meta("final_test", dict(selection_source="ood_val", programs=programs))


def test_selected_on_validation_reported_on_test(tmp_path):
    members = {("spark", 0): [0.9], ("spark", 1): [0.8], ("fixed-act-sar", 0): [0.5]}
    members[("fixed-act-sar", 1)] = [0.45]
    out = serve_fixtures.make_comparison(tmp_path / "cmp", members)
    tests = {("spark", 0): 0.70, ("spark", 1): 0.60, ("fixed-act-sar", 0): 0.50}
    tests[("fixed-act-sar", 1)] = 0.40
    for (method, seed), best in tests.items():
        _final_test(out / method / f"seed-{seed}", best, 0.30)
    plan = ComparePlan.from_dict(json.loads((out / PLAN_FILE).read_text()))
    md = tables.write_compare_report(out, plan).read_text()
    rows = {line.split(" | ")[0]: line for line in md.splitlines() if line.startswith("| `")}
    # Selection score (validation) beside the test score of the same best candidate.
    assert "| 2 | 85.00 ± 7.07 | 65.00 ± 7.07 |" in rows["| `spark` (Full SPARK)"]
    assert "| 4 | 40.00 ± 0.00 | 30.00 ± 0.00 |" in rows["| `seed` (seed program, no search)"]
    section = md.split("## Methods against `spark`")[1].split("\n## ")[0]
    assert "Score: the test OOD % of each search seed's best evaluated candidate" in section
    assert "| `fixed-act-sar` | 2 / 2 | exact sign-flip | -20.00 |" in section
