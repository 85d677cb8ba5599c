"""spark_jax.results.port_vs_official: two benchmarks with disjoint seeds merge into one whose report
is the report of all the seeds; parts that do not belong together are refused."""

from __future__ import annotations

import pathlib

import pytest
import records  # noqa: E402 - tests/records.py: record builders

from spark_jax import benchmark
from spark_jax.benchmark.plan import plan_jobs
from spark_jax.benchmark.store import BenchmarkDB
from spark_jax.results import port_vs_official


def _part(folder: pathlib.Path, programs, seeds, tasks=("dfs", "bfs")) -> pathlib.Path:
    spec = benchmark.BenchmarkSpec(
        tasks=tasks, seeds=seeds, preset="tiny", baseline="official:mpnn"
    )
    folder.mkdir(parents=True)
    path = folder / benchmark.DB_NAME
    with BenchmarkDB(path, create=True) as db:
        db.store_plan(spec.to_dict(), programs)
        for job in plan_jobs(programs, spec.tasks, spec.seeds):
            ood = 0.1 * (job.seed + 1) + (0.05 if job.program.label != "official:mpnn" else 0)
            db.record(job, records.result(ood, job_id=job.job_id, task=job.task, seed=job.seed))
    return path


@pytest.fixture
def programs(seed_paths):
    return [
        benchmark.resolve_program("official:mpnn"),
        benchmark.resolve_program(str(seed_paths["mpnn"])),
    ]


def test_merged_parts_report_every_seed(tmp_path, programs):
    a = _part(tmp_path / "a", programs, (0, 1, 2))
    b = _part(tmp_path / "b", programs, (3, 4))
    out = tmp_path / "results"
    out.mkdir()
    (out / "README.md").write_text("# x\n\n<!-- generated -->\n<!-- end generated -->\n")
    assert port_vs_official.main([str(out), "--merge", str(a), str(b)]) == 0
    with BenchmarkDB.open_readonly(out / benchmark.DB_NAME) as db:
        assert db.spec()["seeds"] == [0, 1, 2, 3, 4]
        assert len(db.results()) == 2 * 2 * 5
        assert [p["seeds"] for p in db.meta()["parts"]] == [[0, 1, 2], [3, 4]]
    report = (out / "report.md").read_text()
    assert "Jobs landed: 20 of 20" in report
    readme = (out / "README.md").read_text()
    assert "| a | 0, 1, 2 | 12 |" in readme and "| b | 3, 4 | 8 |" in readme
    assert "no equivalence.json" in readme
    # Regenerating from the merged database alone changes nothing.
    assert port_vs_official.main([str(out)]) == 0
    assert (out / "README.md").read_text() == readme


def test_parts_that_do_not_belong_together_are_refused(tmp_path, programs):
    a = _part(tmp_path / "a", programs, (0, 1))
    overlapping = _part(tmp_path / "b", programs, (1, 2))
    other_tasks = _part(tmp_path / "c", programs, (5,), tasks=("dfs",))
    with pytest.raises(SystemExit, match="seeds overlap"):
        port_vs_official.merge([a, overlapping], tmp_path / "m1.db")
    with pytest.raises(SystemExit, match="tasks differs"):
        port_vs_official.merge([a, other_tasks], tmp_path / "m2.db")
    with pytest.raises(SystemExit, match="programs differ"):
        port_vs_official.merge([a, _part(tmp_path / "d", programs[:1], (7,))], tmp_path / "m3.db")
