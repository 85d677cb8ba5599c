"""The per-candidate bench's pure parts: the unseen program, verdicts and the text report
(the measurement itself is run by `spark-jax bench`, not by tests)."""

from __future__ import annotations

import pytest

from spark_jax import program as program_lib
from spark_jax.perf import candidate


def test_unseen_program_is_new_and_feasible(seed_paths, sandbox_worker, check_options):
    from spark_jax.feasibility import checker

    source = program_lib.read_program(candidate.SEED_PROGRAM).source
    child = candidate.unseen_program(source, width=3)
    assert child != source and "linear(h * 3)" in child
    report = checker.check_program(child, options=check_options, worker=sandbox_worker)
    assert report.feasible, report.reason
    with pytest.raises(RuntimeError, match="msg_mlp_1"):
        candidate.unseen_program("x = 1\n", width=2)


def test_verdicts_follow_each_targets_direction():
    assert candidate.verdict("total_wall_ours_over_official", dict(median=0.5)).startswith("MET")
    assert candidate.verdict("total_wall_ours_over_official", dict(median=0.7)).startswith("NOT")
    assert candidate.verdict("steps_per_s_ours_over_official", dict(median=1.3)).startswith("MET")
    assert candidate.verdict("steps_per_s_ours_over_official", dict(median=1.1)).startswith("NOT")


def test_report_prints_every_figure_with_a_verdict_per_target():
    side = dict(
        init_s=1.0, compile_s=4.0, compile_wall_s=2.0, steps_per_s=10.0, eval_s=1.0, total_s=9.0
    )
    spread = dict(median=0.5, min=0.4, max=0.6)
    report = dict(
        task="dfs",
        preset="smoke",
        repeats=1,
        k=4,
        runs=dict(official=[side], ours=[side], seeds_mapped_s=[10.0], seeds_vmapped_s=[12.0]),
        feasibility_unseen_s=[0.3],
        ratios={name: spread for name in candidate.TARGETS} | {"eval_s_ours_over_official": spread},
    )
    text = candidate.format_candidate(report)
    for name in candidate.TARGETS:
        assert any(name in line and "MET" in line for line in text.splitlines()), name
    assert "K=4 vmapped seeds: 12.00 s" in text and "[0.400, 0.600]" in text
    assert "K=4 mapped seeds: 10.00 s" in text
