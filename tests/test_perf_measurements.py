"""The measurement scripts' library side (`spark_jax.perf`), on the paths that need no training:
phase parsing and refusal, the resumable chaos table, the identity check's benchmark record,
the families report's wiring. The measurements themselves run from scripts/ (results/bench,
results/gpu, results/chaos-at-smoke, results/families name the commands)."""

from __future__ import annotations

import csv
import json
import pathlib

import pytest

from spark_jax.perf import gpu_measure, gpu_runs
from spark_jax.perf.identity import KEYS
from spark_jax.results import chaos_runs as chaos
from spark_jax.results import families_smoke, identity

ROOT = pathlib.Path(__file__).resolve().parents[1]
BENCHMARK = ROOT / "results" / "bench" / "clrs10-smoke" / "benchmark.db"


def test_an_unknown_phase_is_refused_before_anything_is_measured(tmp_path):
    out = tmp_path / "m" / "measurements.jsonl"
    with pytest.raises(gpu_measure.UnknownPhase, match="unknown phase 'warp:9'"):
        gpu_measure.measure(out, ["warp:9"])
    assert out.parent.is_dir() and not out.exists()
    assert set(gpu_measure.PHASES) == {"env", "check", "workers", "seeds", "bench", "search"}


def test_the_evaluation_command_and_the_records(tmp_path):
    cmd = gpu_runs.evaluate_cmd("p.py", "tiny", 7, 3, 2, "o.json")
    assert cmd[1:4] == ["-m", "spark_jax.cli", "evaluate"]
    assert cmd[cmd.index("--seeds") + 1] == "2" and cmd[-2:] == ["--train-steps", "7"]
    assert "--train-steps" not in gpu_runs.evaluate_cmd("p.py", "tiny", None, 3, 1, "o.json")
    assert gpu_runs.GpuSampler().summary() == {"gpu_samples": 0}
    out = tmp_path / "m.jsonl"
    gpu_runs.append(out, {"phase": "x"})
    gpu_runs.append(out, {"phase": "y"})
    assert [json.loads(x)["phase"] for x in out.read_text().splitlines()] == ["x", "y"]


def test_a_chaos_rerun_skips_the_rows_already_there(tmp_path):
    """Every (task, perturbation) already in runs.csv: nothing is evaluated again."""
    out = tmp_path / "chaos"
    out.mkdir()
    with (out / "runs.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=chaos.FIELDS)
        writer.writeheader()
        for index in range(3):
            writer.writerow({k: "0" for k in chaos.FIELDS} | {"task": "dfs", "perturbation": index})
    before = (out / "runs.csv").read_bytes()
    program = str(ROOT / "processors" / "mpnn.py")
    chaos.run_chaos(out, ["dfs"], 2, 1e-7, 0, "tiny", program)
    assert (out / "runs.csv").read_bytes() == before


def test_the_identity_check_reads_the_benchmarks_own_record():
    """Our port's figures for a seed trained with others in one vmapped program; a task the
    benchmark never ran is refused before anything trains."""
    record = identity._benchmark_record(BENCHMARK, "dfs", 0)
    assert set(record) == set(KEYS)  # the stored form's names (`ood_score` for the score)
    assert identity.figures({**record, "steps": 9}) == record
    with pytest.raises(identity.NoBenchmarkRecord, match="no result of our port on bfs seed 0"):
        identity.smoke_identity(pathlib.Path("unused.json"), ["bfs"], 0, "tiny", BENCHMARK)


def test_the_families_report_with_no_benchmark_selected(tmp_path, capsys):
    text = families_smoke.run_families(tmp_path / "f", "tiny", 1, 0, [], "python x.py ")
    assert (tmp_path / "f" / "families_smoke.md").read_text() == text
    assert json.loads((tmp_path / "f" / "notes.json").read_text()) == {}
    assert "python x.py" in text
