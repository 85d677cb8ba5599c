"""`spark-jax benchmark --seeds auto`: identity before training and the sequential rounds.

The rounds are a pure function of the stored results (checked on a hand-made database: which
jobs come next, mid-round too, and each pair's decision); identity and the rounds are then run
for real on the tiny preset: a program whose only change is the edge output's projection
computes the seed's function on `minimum` (its edge output is never decoded there) and not on
`dfs`, so `minimum` trains the baseline only."""

from __future__ import annotations

import pathlib

import pytest
import records  # noqa: E402 - tests/records.py: record builders

from spark_jax import benchmark, cli
from spark_jax.benchmark import rounds
from spark_jax.benchmark.plan import plan_jobs
from spark_jax.benchmark.store import BenchmarkDB
from spark_jax.benchmark.tables import write_benchmark_report
from spark_jax.evaluation import identity
from spark_jax.stats import sequential

DESIGN = {"alpha": 0.05, "delta": 5.0, "seeds_per_round": 3, "max_seeds": 9}


def _variant(seed_paths, tmp_path) -> pathlib.Path:
    """triplet_gmpnn with its edge-output projection o3 an MLP (the default search's edit)."""
    source = seed_paths["triplet_gmpnn"].read_text()
    edited = source.replace(
        "self.o3 = linear(h)", "self.o3 = nn.Sequential([linear(h), jax.nn.relu, linear(h)])"
    )
    assert edited != source
    path = tmp_path / "o3_mlp.py"
    path.write_text(edited)
    return path


def _store(tmp_path, seed_paths, identical=()):
    programs = [
        benchmark.resolve_program(str(seed_paths["triplet_gmpnn"])),
        benchmark.resolve_program(str(seed_paths["mpnn"])),
    ]
    spec = benchmark.BenchmarkSpec(
        tasks=("dfs", "bfs"),
        seeds=tuple(range(9)),
        preset="tiny",
        baseline="triplet_gmpnn",
        sequential=DESIGN,
    )
    db = BenchmarkDB(tmp_path / benchmark.DB_NAME, create=True)
    db.store_plan(spec.to_dict(), programs)
    db.store_identity(
        {
            f"{programs[1].key}|{t}": {"task": t, "identical": t in identical, "reason": "x"}
            for t in spec.tasks
        }
    )
    return db, programs, spec


def _land(db, programs, task, seeds, score):
    for job in plan_jobs(programs, (task,), seeds):
        ood = score(job.program.label, job.seed)
        db.record(job, records.result(ood, job_id=job.job_id, task=task, seed=job.seed))


def test_rounds_follow_the_stored_results_mid_round_too(tmp_path, seed_paths):
    db, programs, spec = _store(tmp_path, seed_paths, identical=("bfs",))
    stored = db.spec()
    first = rounds.next_jobs(stored, programs, db.results(), db.identity())
    # dfs: both programs, seeds 0-2; bfs (identical): the baseline only.
    assert sorted((j.program.label, j.task, j.seed) for j in first) == sorted(
        [(p.label, "dfs", s) for p in programs for s in range(3)]
        + [("triplet_gmpnn", "bfs", s) for s in range(3)]
    )
    _land(db, programs, "bfs", (0, 1, 2), lambda label, s: 0.5)

    def score(label, seed):  # mpnn 20 pp above the baseline, small spread
        return 0.3 + 0.01 * (seed % 2) + (0.2 if label == "mpnn" else 0.0)

    _land(db, programs, "dfs", (0, 1, 2), score)
    # Only a look from 6 seeds on spends alpha: dfs goes on to seeds 3-5.
    found = rounds.decisions(stored, programs, db.results(), db.identity())
    assert [d.decision.verdict for d in found] == [sequential.PENDING, sequential.IDENTICAL]
    # Half of the next round lands (a kill): only the missing jobs come next.
    _land(db, programs[:1], "dfs", (3, 4), score)
    nxt = rounds.next_jobs(stored, programs, db.results(), db.identity())
    assert sorted((j.program.label, j.seed) for j in nxt) == [
        ("mpnn", 3),
        ("mpnn", 4),
        ("mpnn", 5),
        ("triplet_gmpnn", 5),
    ]
    _land(db, programs[1:], "dfs", (3, 4), score)
    _land(db, programs, "dfs", (5,), score)
    found = rounds.decisions(stored, programs, db.results(), db.identity())
    assert found[0].decision.verdict == sequential.WIN and found[0].seeds == 6
    assert found[0].decision.diff == pytest.approx(20.0)
    assert rounds.next_jobs(stored, programs, db.results(), db.identity()) == []
    report = write_benchmark_report(db, tmp_path).read_text()
    db.close()
    assert "| `mpnn` | dfs | win (within ±delta) |" not in report  # 20 pp is not within 5
    assert "| `mpnn` | dfs | win | 6 | +20.00 |" in report
    assert "| `mpnn` | bfs | identical | 3 |" in report
    assert "Decided: 2 of 2 pairs (identical 1, win 1)" in report


def test_fixed_mode_skips_the_identical_pairs_jobs(tmp_path, seed_paths):
    db, programs, spec = _store(tmp_path, seed_paths, identical=("bfs",))
    stored = dict(db.spec(), sequential=None)
    jobs = rounds.next_jobs(stored, programs, db.results(), db.identity())
    db.close()
    assert len(jobs) == 2 * 9 + 9  # dfs both programs, bfs the baseline only
    assert not any(j.program.label == "mpnn" and j.task == "bfs" for j in jobs)


def test_a_sequential_benchmark_needs_a_baseline_and_a_valid_design(tmp_path, seed_paths, capsys):
    base = ["benchmark", str(seed_paths["mpnn"]), str(seed_paths["pgn"]), "--preset", "tiny"]
    assert cli.main([*base, "--seeds", "auto", "--out", str(tmp_path / "a")]) == 2
    assert "baseline" in capsys.readouterr().err
    bad = [*base, "--seeds", "auto", "--baseline", "mpnn", "--max-seeds", "4"]
    assert cli.main([*bad, "--out", str(tmp_path / "b")]) == 2
    assert "seed cap" in capsys.readouterr().err
    assert cli.main([*base, "--seeds", "many", "--out", str(tmp_path / "c")]) == 2
    assert "'auto'" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_identity_without_probes(seed_paths):
    seed = seed_paths["triplet_gmpnn"].read_text()
    same = identity.same_function((seed, "a"), (seed + "\n\n", "a"), ["dfs"], {})
    assert same[0].identical and same[0].reason == "the same program source"
    official = identity.same_function(("", "official:mpnn"), (seed, "t"), ["dfs"], {})
    assert not official[0].identical and "official" in official[0].reason


def test_a_sequential_benchmark_end_to_end_on_tiny(seed_paths, tmp_path, capsys, quick_compiles):
    # quick_compiles (conftest): compiling is nearly all this test costs.
    out = tmp_path / "bench"
    argv = [
        "benchmark",
        str(seed_paths["triplet_gmpnn"]),
        str(_variant(seed_paths, tmp_path)),
        "--tasks",
        "minimum,bfs",  # bfs: the cheapest task at tiny where o3 matters
        "--preset",
        "tiny",
        "--seeds",
        "auto",
        "--max-seeds",
        "6",
        "--baseline",
        "triplet_gmpnn",
        "--out",
        str(out),
        "--quiet",
        "--compile-cache",
        "none",
    ]
    assert cli.main(argv) == 0
    printed = capsys.readouterr().out
    assert "| `o3_mlp` | minimum | identical | 3 |" in printed
    with BenchmarkDB(out / benchmark.DB_NAME) as db:
        results = db.results()
        found = {k.split("|")[1]: v for k, v in db.identity().items()}
    # The probes: o3 feeds only the edge output, which minimum never decodes.
    assert found["minimum"]["identical"] and not found["bfs"]["identical"], found
    assert "zero gradient" in found["minimum"]["reason"]
    assert "not proven for every input" in found["minimum"]["reason"]
    landed = {(r.program_key, r.task) for r in results}
    keys = {p.label: p.key for p in (benchmark.resolve_program(argv[1]),)}
    assert {t for k, t in landed if k != keys["triplet_gmpnn"]} == {"bfs"}  # minimum: once
    bfs = [r for r in results if r.task == "bfs"]
    assert len(bfs) == 2 * 6 and all(r.ok for r in bfs)  # two rounds, both programs
    report = (out / "report.md").read_text()
    assert "| `o3_mlp` | bfs |" in report and "Decided:" in report


def test_the_budget_guide_forecasts_from_a_stored_pilot(capsys, tmp_path):
    pilot = pathlib.Path(__file__).resolve().parents[1] / "results" / "default-search"
    assert cli.main(["benchmark", "--guide", str(pilot), "--max-seeds", "12"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) == 1 + 10  # the header and one row per clrs10 task
    # articulation_points: +22.6 pp at a spread of 11.4 pp over 3 seeds, nearly always a win.
    art = next(r for r in rows if r.startswith("| articulation_points |")).split("|")
    assert float(art[5].strip().rstrip("%")) > 80 and float(art[8]) < 12
    assert "Expected device time in all:" in out and "vm (x86_64, 2 CPUs)" in out
    assert cli.main(["benchmark", "--guide", str(tmp_path)]) == 2
    assert "no benchmark.db" in capsys.readouterr().err
