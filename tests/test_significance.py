"""Small-sample statistics (`stats.significance`): every number checked
against a value computed by hand or by a textbook formula, not against the code itself."""

from __future__ import annotations

import math
import pathlib
import statistics

import pytest
from scipy import stats as scipy_stats

from spark_jax.benchmark import stats
from spark_jax.stats import significance as sig

# -- one task ---------------------------------------------------------------------------------


def test_one_seed_on_either_side_is_cannot_tell():
    for a, b in (([70.0], [50.0]), ([70.0, 71.0, 72.0], [50.0]), ([90.0], [10.0, 11.0])):
        t = sig.task_test(a, b)
        assert not t.tested and math.isnan(t.p) and t.method is None
        assert sig.verdicts([t]) == (sig.CANNOT_TELL,)
    assert sig.task_test([70.0], [50.0]).diff == 20.0


def test_welch_against_a_hand_computed_value():
    # 9 vs 10 seeds (beyond the exact range). By hand: mean a = 5, s_a^2 = 7.5, mean b = 8.5,
    # s_b^2 = 9.1666..., SE^2 = 7.5/9 + 9.1667/10 = 1.75, t = -3.5/sqrt(1.75) = -2.6458,
    # Welch-Satterthwaite dof = 1.75^2 / ((7.5/9)^2/8 + (0.91667)^2/9) = 16.99.
    a = [1.0, 2, 3, 4, 5, 6, 7, 8, 9]
    b = [4.0, 5, 6, 7, 8, 9, 10, 11, 12, 13]
    t = sig.task_test(a, b)
    assert t.method == "Welch's t" and not t.paired
    assert t.diff == pytest.approx(-3.5) and t.se == pytest.approx(math.sqrt(1.75))
    dof = 1.75**2 / ((7.5 / 9) ** 2 / 8 + (55 / 6 / 10) ** 2 / 9)
    assert dof == pytest.approx(16.99, abs=0.01)
    assert t.p == pytest.approx(2 * scipy_stats.t.sf(3.5 / math.sqrt(1.75), dof))
    assert t.p == pytest.approx(0.01696, abs=5e-5)  # t(16.99) two-sided tail at 2.6458


def test_exact_permutation_p_on_a_tiny_case():
    # 3 vs 3, all six values distinct: 20 splits; only the observed split and its mirror
    # are as extreme, so p = 2/20.
    t = sig.task_test([10.0, 11.0, 12.0], [1.0, 2.0, 3.0])
    assert t.method == "exact permutation" and t.p == pytest.approx(0.1)
    # 2 vs 2 with a mixed split: |diff| 1 of the 6 splits' (|diffs| 4, 1, 1, 1, 1, 4 ... ) ->
    # pooled (1, 2, 3, 4): splits {1,2}{3,4}: 2; {1,3}{2,4}: 1; {1,4}{2,3}: 0 and mirrors.
    t = sig.task_test([1.0, 3.0], [2.0, 4.0])
    assert t.diff == -1.0 and t.p == pytest.approx(4 / 6)
    assert sig.min_exact_p(3, 3, paired=False) == pytest.approx(0.1)
    assert sig.min_exact_p(2, 3, paired=False) == pytest.approx(0.1)  # 1 / C(5, 2)


def test_paired_uses_sign_flips_and_differs_from_unpaired():
    # The seed moves both programs together; every per-seed difference is +1.
    a = [51.0, 61.0, 71.0, 81.0, 91.0, 56.0]
    b = [50.0, 60.0, 70.0, 80.0, 90.0, 55.0]
    paired = sig.task_test(a, b, paired=True)
    unpaired = sig.task_test(a, b, paired=False)
    assert paired.method == "exact sign-flip" and paired.paired
    assert paired.p == pytest.approx(2 / 64)  # only all-plus and all-minus are as extreme
    assert unpaired.method == "exact permutation" and unpaired.p > 0.8
    assert sig.verdicts([paired]) == (sig.WIN,) and sig.verdicts([unpaired]) == (sig.CANNOT_TELL,)
    with pytest.raises(ValueError, match="same seeds"):
        sig.task_test([1.0, 2.0], [1.0, 2.0, 3.0], paired=True)


def test_paired_t_beyond_the_exact_range():
    d = [1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 1.0, 2.0, 3.0]  # mean 2, sd sqrt(0.75), n 9
    b = [float(10 * k) for k in range(9)]
    t = sig.task_test([x + y for x, y in zip(d, b)], b, paired=True)
    assert t.method == "paired t"
    tstat = 2.0 / (math.sqrt(0.75) / 3)
    assert t.p == pytest.approx(2 * scipy_stats.t.sf(abs(tstat), 8))


# -- a table ----------------------------------------------------------------------------------


def test_holm_on_a_known_set():
    # Sorted p: 0.01, 0.02, 0.03, 0.04 with m = 4: 0.04, 0.06, 0.06 (monotone), 0.06.
    adjusted = sig.holm([0.04, 0.01, 0.03, 0.02])
    assert adjusted == pytest.approx((0.06, 0.04, 0.06, 0.06))
    assert sig.holm([0.5, math.nan, 0.9]) == pytest.approx((1.0, math.nan, 1.0), nan_ok=True)
    assert sig.holm([]) == ()


def test_holm_decides_the_verdicts():
    def made(p, diff):
        return sig.TaskTest(5, 5, False, "exact permutation", diff, p, ((1.0, 4), (1.0, 4)))

    tests = [made(0.001, 3.0), made(0.02, -4.0), made(0.04, 2.0), sig.task_test([1.0], [2.0])]
    # Holm over the 3 tested: 0.003 (win), 0.04 (loss), 0.04 (win); the untested: cannot tell.
    assert sig.verdicts(tests) == (sig.WIN, sig.LOSS, sig.WIN, sig.CANNOT_TELL)
    # Without Holm 0.02 and 0.04 would pass at 0.03; with it (0.04, 0.04) they do not.
    assert sig.verdicts(tests, alpha=0.03) == (sig.WIN,) + (sig.CANNOT_TELL,) * 3
    with pytest.raises(ValueError, match="alpha"):
        sig.verdicts(tests, alpha=1.5)


def test_mdd_formula():
    t = sig.task_test([1.0, 2.0, 3.0], [2.0, 4.0, 6.0])  # SE^2 = 1/3 + 4/3
    z = statistics.NormalDist()
    expected = (z.inv_cdf(1 - 0.05 / 2) + z.inv_cdf(0.8)) * math.sqrt(5 / 3)
    assert sig.mdd([t]) == pytest.approx(expected)
    assert sig.mdd([t]) == pytest.approx(3.6168, abs=1e-3)  # (1.95996 + 0.84162) * 1.29099
    # Two tests: alpha / (2m) = 0.0125 and the root mean square of the SEs.
    u = sig.task_test([1.0, 1.0, 4.0], [0.0, 0.0, 0.0])  # SE^2 = 3/3
    expected = (z.inv_cdf(1 - 0.05 / 4) + z.inv_cdf(0.8)) * math.sqrt((5 / 3 + 1) / 2)
    assert sig.mdd([t, u, sig.task_test([1.0], [1.0])]) == pytest.approx(expected)
    assert math.isnan(sig.mdd([sig.task_test([1.0], [2.0])]))


def test_mean_difference_interval_from_the_seeds_within_tasks():
    t1 = sig.task_test([10.0, 12.0, 14.0], [5.0, 6.0, 7.0])  # diff 6; var 4/3 + 1/3
    t2 = sig.task_test([1.0, 2.0, 3.0], [3.0, 3.0, 3.0])  # diff -1; var 1/3 + 0
    mean, ci = sig.mean_difference([t1, t2])
    assert mean == pytest.approx(2.5)
    se = math.sqrt(4 / 3 + 1 / 3 + 1 / 3) / 2
    parts = [4 / 3, 1 / 3, 1 / 3]  # each with 2 dof (the zero piece adds nothing)
    dof = sum(parts) ** 2 / sum(v * v / 2 for v in parts)
    half = scipy_stats.t.ppf(0.975, dof) * se
    assert (ci.low, ci.high, ci.dof) == pytest.approx((2.5 - half, 2.5 + half, dof))
    mean, ci = sig.mean_difference([t1, sig.task_test([3.0], [1.0])])
    assert mean == pytest.approx(4.0) and ci is None  # a task under 2 seeds: not computable


def test_the_exact_floor_note():
    two = sig.task_test([1.0, 2.0], [5.0, 6.0])
    assert "smallest possible p is 0.333" in sig.floor_note([two])
    assert sig.floor_note([sig.task_test([1.0, 2, 3, 4, 5, 6], [7.0, 8, 9, 10, 11, 12])]) is None


# -- the benchmark's comparison ---------------------------------------------------------------


def test_benchmark_comparison_pairs_same_seeds_and_applies_holm_over_the_table():
    cells = {
        ("p", "t1"): stats.Cell((60.0, 61.0, 62.0, 63.0), seeds=(0, 1, 2, 3)),
        ("b", "t1"): stats.Cell((50.0, 51.0, 52.0, 53.0), seeds=(0, 1, 2, 3)),
        ("q", "t1"): stats.Cell((60.0, 61.0, 62.0, 63.0), seeds=(4, 5, 6, 7)),
    }
    p_row, q_row = stats.compare_table(cells, ["p", "q"], "b", ["t1"])
    assert p_row.per_task[0].test.paired and not q_row.per_task[0].test.paired
    # Paired, 4 seeds: p = 2/16; unpaired 4 vs 4: 2/70; Holm over both: 0.125, 2*2/70.
    assert p_row.per_task[0].p_holm == pytest.approx(0.125)
    assert q_row.per_task[0].p_holm == pytest.approx(4 / 70)
    assert (p_row.cannot_tell, q_row.cannot_tell) == (1, 1)  # neither survives Holm
    alone = stats.compare(cells, "q", "b", ["t1"])
    assert alone.per_task[0].p_holm == pytest.approx(2 / 70) and alone.wins == 1


def test_done_when_one_seed_each_is_cannot_tell_in_the_table_text():
    from spark_jax.benchmark import tables

    cells = stats.cells_of(
        [
            ("official:triplet_gmpnn", "bfs", 0, 0.45, None),
            ("mpnn", "bfs", 0, 0.50, None),
            ("official:triplet_gmpnn", "dfs", 0, 0.10, None),
            ("mpnn", "dfs", 0, 0.30, None),
        ]
    )

    class P:
        def __init__(self, label):
            self.label = label

    spec = {"baseline": "official:triplet_gmpnn", "tasks": ["bfs", "dfs"]}
    text = "\n".join(tables._comparison(spec, [P(spec["baseline"]), P("mpnn")], cells))
    assert "| `mpnn` | 2 | 0 | 0 | 2 | +12.50 | cannot be computed" in text
    assert "| `mpnn` | bfs | 1 / 1 | none (fewer than 2 seeds on a side) |" in text
    assert text.count("| cannot tell |") == 3  # the summary header and both tasks
    assert "| win |" not in text and "| loss |" not in text
    assert "Minimal detectable difference: cannot be computed" in text


def test_cli_prints_cannot_tell_for_one_seed_a_side(tmp_path, monkeypatch, capsys):
    # The command with the training replaced by stored results (the figures:
    # bfs 45.31 vs 50.00, dfs 12.50 vs 32.81); the CLI prints the comparison it wrote.
    import records  # tests/records.py: record builders

    from spark_jax import benchmark, cli
    from spark_jax.benchmark.plan import plan_jobs
    from spark_jax.benchmark.store import BenchmarkDB
    from spark_jax.benchmark.tables import write_benchmark_report

    oods = {("official:triplet_gmpnn", "bfs"): 0.4531, ("mpnn", "bfs"): 0.50}
    oods.update({("official:triplet_gmpnn", "dfs"): 0.125, ("mpnn", "dfs"): 0.3281})

    def fake_start(out, programs, spec, progress=None):
        (tmp_path / "out").mkdir()
        with BenchmarkDB(tmp_path / "out" / benchmark.DB_NAME, create=True) as db:
            db.store_plan(spec.to_dict(), programs)
            for job in plan_jobs(programs, spec.tasks, spec.seeds):
                ood = oods[(job.program.label, job.task)]
                db.record(job, records.result(ood, job_id=job.job_id, task=job.task, seed=0))
            return write_benchmark_report(db, tmp_path / "out")

    monkeypatch.setattr(benchmark, "start_benchmark", fake_start)
    argv = ["benchmark", "official:triplet_gmpnn", "processors/mpnn.py", "--tasks", "bfs,dfs"]
    argv += ["--seeds", "1", "--preset", "tiny", "--out", str(tmp_path / "out")]
    monkeypatch.chdir(pathlib.Path(__file__).resolve().parents[1])
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "| `mpnn` | 2 | 0 | 0 | 2 | +12.50 | cannot be computed" in out
    for task in ("bfs", "dfs"):
        assert f"| `mpnn` | {task} | 1 / 1 | none (fewer than 2 seeds on a side) |" in out
    assert out.count(" | cannot tell |") == 3 and "| win |" not in out and "| loss |" not in out
    assert "wins, 0 ties" not in out and "bootstrap" not in out
