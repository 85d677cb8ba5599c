"""`spark-jax benchmark` of a search's program trains with seeds its search never used: the
seeds read from the run, the disjoint default, the one-line refusal of an overlap, the
`--allow-seed-overlap` escape, and the seeds listed in the report. No training here."""

from __future__ import annotations

import argparse
import pathlib

import pytest
import records  # noqa: E402 - tests/records.py: record builders

from spark_jax import benchmark, cli
from spark_jax.benchmark import runner, seeds
from spark_jax.benchmark.plan import plan_jobs
from spark_jax.benchmark.store import BenchmarkDB
from spark_jax.benchmark.tables import write_benchmark_report
from spark_jax.cli import benchmark as cli_benchmark
from spark_jax.search.rundb import RunDB


def _run_dir(tmp_path, program: str, *, seed=5, k=2, family="clrs", extra_seeds=()) -> pathlib.Path:
    """A finished search's directory: config seed `seed` with `k` seeds per candidate, plus
    an evaluation trained with `extra_seeds` (e.g. a resumed run under another seed)."""
    run = tmp_path / f"run-{family}-{seed}"
    (run / "best").mkdir(parents=True)
    (run / "best" / "best_program.py").write_text(program)
    meta = dict(
        config={"seed": seed, "fitness": {"seeds": k, "source": "ood_val"}},
        seed=seed,
        seeds_per_candidate=k,
        family=family,
    )
    with RunDB.create(run / "run.db", meta) as db:
        pid = db.insert_program(program)
        if extra_seeds:
            result = records.result(0.5, seed=extra_seeds[0], seeds=tuple(extra_seeds))
            db.record_evaluation(pid, None, records.job(seed=extra_seeds[0]), result)
    return run


def _spec_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    cli_benchmark.add_parser(parser.add_subparsers())
    return parser.parse_args(["benchmark", *argv])


def test_search_seeds_are_read_from_the_run(tmp_path, seed_paths):
    run = _run_dir(tmp_path, seed_paths["mpnn"].read_text(), seed=5, k=2, extra_seeds=(9, 10))
    assert seeds.search_seeds(run) == (5, 6, 9, 10)  # config seeds + every evaluation's
    by_dir = benchmark.resolve_program(str(run))
    by_file = benchmark.resolve_program(str(run / "best" / "best_program.py"))
    assert by_dir.search_seeds == by_file.search_seeds == (5, 6, 9, 10)
    assert by_dir.label == f"{run.name}:best" and by_file.key == by_dir.key
    plain = benchmark.resolve_program(str(seed_paths["mpnn"]))
    assert (
        plain.search_seeds == () and benchmark.resolve_program("official:mpnn").search_seeds == ()
    )


def test_a_run_dir_without_its_database_or_of_another_family_is_refused(tmp_path, seed_paths):
    bare = tmp_path / "bare"
    (bare / "best").mkdir(parents=True)
    (bare / "best" / "best_program.py").write_text(seed_paths["mpnn"].read_text())
    with pytest.raises(benchmark.PlanError, match="no run.db, so the seeds its search"):
        benchmark.resolve_program(str(bare))
    other = _run_dir(tmp_path, seed_paths["mpnn"].read_text(), family="classify")
    with pytest.raises(benchmark.PlanError, match="'classify' search; benchmark trains CLRS"):
        benchmark.resolve_program(str(other))


def test_default_seeds_start_after_every_seed_the_search_used(tmp_path, seed_paths):
    run = _run_dir(tmp_path, seed_paths["mpnn"].read_text(), seed=0, k=1, extra_seeds=(3,))
    args = _spec_args("official:mpnn", str(run), "--seeds", "2", "--preset", "tiny")
    programs, spec = cli_benchmark._spec(args)
    assert spec.seeds == (4, 5) and not set(spec.seeds) & {0, 3}
    runner._check_spec(spec, programs)  # disjoint: accepted
    # Without a searched program the seeds start at 0, as before.
    _, plain = cli_benchmark._spec(_spec_args("official:mpnn", "--seeds", "2", "--preset", "tiny"))
    assert plain.seeds == (0, 1)


def test_an_explicit_overlap_is_refused_in_one_line(tmp_path, seed_paths, capsys):
    run = _run_dir(tmp_path, seed_paths["mpnn"].read_text(), seed=0, k=2)
    out = tmp_path / "out"
    argv = ["benchmark", str(run), "--tasks", "dfs", "--seeds", "2", "--first-seed", "1"]
    assert cli.main([*argv, "--preset", "tiny", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: seeds [1] are seeds the search")
    assert "--allow-seed-overlap" in err[0] and "--first-seed 2" in err[0]
    assert not (out / benchmark.DB_NAME).exists()  # nothing written


def test_allow_seed_overlap_runs_and_the_report_says_so(tmp_path, seed_paths, monkeypatch):
    run = _run_dir(tmp_path, seed_paths["mpnn"].read_text(), seed=0, k=2)
    args = _spec_args(str(run), "official:mpnn", "--seeds", "2", "--first-seed", "1")
    args.allow_seed_overlap = True
    programs, spec = cli_benchmark._spec(args)
    assert spec.allow_seed_overlap and spec.seeds == (1, 2)
    monkeypatch.setattr(runner, "run_pending", lambda out, progress=None: pathlib.Path(out))
    out = benchmark.start_benchmark(tmp_path / "allowed", programs, spec)
    with BenchmarkDB(out / benchmark.DB_NAME) as db:
        stored = runner.BenchmarkSpec.from_dict(db.spec())
        assert stored.allow_seed_overlap and db.programs() == programs  # seeds round-trip
        for job in plan_jobs(programs, spec.tasks, spec.seeds):
            db.record(job, records.result(0.4, job_id=job.job_id, task=job.task, seed=job.seed))
        report = write_benchmark_report(db, out).read_text()
    line = next(x for x in report.splitlines() if x.startswith(f"- `{run.name}:best`"))
    assert "training seeds [1, 2]; its search trained with seeds [0, 1]: OVERLAP on [1]" in line
    assert "- `official:mpnn`: official:mpnn; training seeds [1, 2]" in report


def test_the_report_lists_disjoint_training_seeds(tmp_path, seed_paths):
    run = _run_dir(tmp_path, seed_paths["mpnn"].read_text(), seed=0, k=1)
    programs, spec = cli_benchmark._spec(_spec_args(str(run), "--seeds", "2", "--preset", "tiny"))
    with BenchmarkDB(tmp_path / benchmark.DB_NAME, create=True) as db:
        db.store_plan(spec.to_dict(), programs)
        first = plan_jobs(programs, spec.tasks, spec.seeds)[0]
        db.record(first, records.result(0.4, job_id=first.job_id, seed=first.seed))
        report = write_benchmark_report(db, tmp_path).read_text()
    assert "## Programs and training seeds" in report
    assert "training seeds [1] (of [1, 2]); its search trained with seeds [0]: disjoint" in report


def test_the_seed_mode_goes_from_the_command_line_into_the_stored_spec():
    _, default = cli_benchmark._spec(_spec_args("official:mpnn", "--preset", "tiny"))
    assert default.seed_mode == "map"
    args = _spec_args("official:mpnn", "--preset", "tiny", "--seed-mode", "vmap")
    _, vmapped = cli_benchmark._spec(args)
    assert vmapped.seed_mode == "vmap" and vmapped.to_dict()["seed_mode"] == "vmap"
    with pytest.raises(SystemExit):  # argparse: not one of the modes
        _spec_args("official:mpnn", "--seed-mode", "pmap")
