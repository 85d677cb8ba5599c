"""Issue 30's one vocabulary: the CLI summary, report.md, the plots and `best/` agree on one
best program (the best evaluated candidate, the seed apart), one count of evaluated
candidates, OOD in percent with 2 decimals, attempt index 0 at x=0, a baseline's report
titled with its method."""

from __future__ import annotations

import json
import re

import fault_harness as harness
import test_newcomer_faults as faults

from spark_jax import cli
from spark_jax.report import best_section, plots, tables
from spark_jax.search.rundb import RunDB


def test_cli_summary_report_and_best_dir_agree(tmp_path, monkeypatch, capsys):
    faults._harness_search(monkeypatch)
    run_dir = tmp_path / "run"
    argv = ["search", "--config", str(harness.TINY), "--run-dir", str(run_dir), "--no-progress"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    md = (run_dir / "report.md").read_text()
    with RunDB.open(run_dir / "run.db") as db:
        cand = db.best_candidate()
        source = db.program_source(cand["program_id"])
        seed = next(e for e in db.evaluations() if e["proposal_attempt"] is None)
    # best/ holds the best evaluated candidate, the program report.md calls best
    assert (run_dir / "best" / "best_program.py").read_text() == source
    info = json.loads((run_dir / "best" / "best.json").read_text())
    assert info["program_id"] == cand["program_id"] and not info["is_seed"]
    row = f"| best evaluated candidate | `{cand['program_id']}` | {cand['proposal_attempt']} |"
    assert row in md
    assert f"`best/best_program.py` is the best evaluated candidate (`{cand['program_id']}`" in md
    diff = (run_dir / "best" / "vs_seed.diff").read_text()
    assert diff.startswith("--- seed_program.py") and diff.splitlines()[2] in md
    # the same counts and units
    evaluated = re.search(r"Evaluated candidates \(.*?\): (\d+)", md).group(1)
    assert f"evaluated candidates: {evaluated} " in out
    attempts = re.search(r"Attempts \(.*?\): (\d+)", md).group(1)
    assert f"attempts: {attempts};" in out
    assert f"seed OOD {100 * seed['ood_score']:.2f}%" in out
    assert f"best evaluated candidate OOD {100 * cand['ood_score']:.2f}%" in out
    assert f"| {100 * cand['ood_score']:.2f} |" in md
    assert f"(attempt index {cand['proposal_attempt']}" in out


def test_attempt_index_zero_is_drawn_at_x_zero_and_macs_in_k(tmp_path, monkeypatch):
    from matplotlib.axes import Axes

    run_dir = tmp_path / "run"
    harness.run(run_dir)
    drawn = []
    real_step = Axes.step

    def step(self, xs, ys, *a, **kw):
        drawn.append((self.get_xlabel() or None, list(xs), list(ys), kw.get("label")))
        return real_step(self, xs, ys, *a, **kw)

    monkeypatch.setattr(Axes, "step", step)
    paths = tables.write_report(run_dir)
    acc = paths.accounting
    by_label = {}
    for _, xs, ys, label in drawn:
        by_label.setdefault(label, (xs, ys))
    xs, ys = by_label["best so far"]
    assert xs[0] == -1 and xs[1] == 0  # the seed before any attempt; attempt index 0 at 0
    assert len(xs) == acc.attempts + 1
    macs_xs, macs = by_label["incumbent MACs"]
    assert macs[0] == acc.seed["macs"] / 1000.0  # K, the report's unit
    assert len(paths.plots) == len(plots.PLOT_FILES)


def test_a_baselines_report_is_titled_with_its_method():
    spark = {"config": {"operator": {"mode": "spark"}}, "operator_variant": "SPARK (ASR+RC+SAR)"}
    assert best_section.method_title(spark) == "SPARK (ASR+RC+SAR)"
    base = {"config": {"operator": {"mode": "openevolve"}}, "operator_variant": "openevolve"}
    assert best_section.method_title(base) == "openevolve"
    rewrite = {"config": {"operator": {"mode": "rewrite"}}, "operator_variant": "Global Rewrite"}
    assert best_section.method_title(rewrite) == "Global Rewrite"


def test_a_search_run_without_the_cli_leaves_the_same_best(tmp_path):
    # compare's searches and direct callers of run_search write no run report: best/ and the
    # result still describe the best evaluated candidate (the seed apart), not the archive's best.
    run_dir = tmp_path / "run"
    result = harness.run(run_dir)
    assert not (run_dir / "report.md").exists()
    with RunDB.open(run_dir / "run.db") as db:
        cand = db.best_candidate()
        source = db.program_source(cand["program_id"])
    assert (run_dir / "best" / "best_program.py").read_text() == source
    assert result.best_program_id == cand["program_id"]
    assert result.best_candidate_ood == cand["ood_score"] == result.best_ood
    assert json.loads((run_dir / "best" / "best.json").read_text())["is_seed"] is False
