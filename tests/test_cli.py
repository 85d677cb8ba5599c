"""`spark-jax evaluate` end to end on the tiny preset; every command's bad-input handling and
exit codes; the search command's wiring (no search is run here: see test_search.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from spark_jax import cli

REQUIRED = ("ood_score", "val_score", "params", "macs", "train_seconds", "compile_seconds")


def _run_cli(*argv: str, cwd) -> subprocess.CompletedProcess:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.run(
        [sys.executable, "-m", "spark_jax.cli", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_evaluate_json_subprocess(seed_paths, tmp_path):
    root = seed_paths["triplet_gmpnn"].parents[1]
    out_file = tmp_path / "result.json"
    proc = _run_cli(
        "evaluate",
        "processors/triplet_gmpnn.py",
        "--task",
        "dfs",
        "--preset",
        "tiny",
        "--json",
        "--output",
        str(out_file),
        cwd=root,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    record = json.loads(proc.stdout.strip().splitlines()[-1])
    for key in REQUIRED:
        assert key in record, key
    assert 0.0 <= record["ood_score"] <= 1.0 and record["params"] > 0 and record["macs"] > 0
    assert record["program"] == "triplet_gmpnn" and record["task"] == "dfs"
    assert json.loads(out_file.read_text()) == record


@pytest.mark.parametrize("seed", ["mpnn", "pgn"])
def test_evaluate_json_in_process(seed, seed_paths, capsys):
    code = cli.main(
        [
            "evaluate",
            str(seed_paths[seed]),
            "--task",
            "dfs",
            "--preset",
            "tiny",
            "--json",
            "--no-progress",
        ]
    )
    assert code == 0
    record = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert all(key in record for key in REQUIRED)
    assert record["program"] == seed


def _error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("error: ")
    return err[0]


def test_missing_program_is_usage_error(tmp_path, capsys):
    out = tmp_path / "never.json"
    code = cli.main(
        ["evaluate", str(tmp_path / "nope.py"), "--preset", "tiny", "--output", str(out)]
    )
    assert code == 2
    assert "program file not found" in _error_line(capsys)
    assert not out.exists()


def test_untagged_program_is_usage_error(tmp_path, capsys, seed_paths):
    bad = tmp_path / "untagged.py"
    bad.write_text(seed_paths["mpnn"].read_text().replace("# SPARK:END ACTION\n", ""))
    assert cli.main(["evaluate", str(bad), "--preset", "tiny"]) == 2
    line = _error_line(capsys)
    assert "region tags" in line and "SPARK:END ACTION" in line


def test_unknown_task_and_preset_are_usage_errors(capsys, seed_paths):
    assert cli.main(["evaluate", str(seed_paths["mpnn"]), "--task", "dfz"]) == 2
    assert "unknown CLRS task 'dfz'" in _error_line(capsys)
    assert cli.main(["evaluate", str(seed_paths["mpnn"]), "--preset", "huge"]) == 2
    assert "unknown preset 'huge'" in _error_line(capsys)
    assert cli.main(["evaluate", "official:nope", "--preset", "tiny"]) == 2
    assert "unknown official processor 'nope'" in _error_line(capsys)


def test_wrong_shape_program_fails_with_one_line(tmp_path, capsys, seed_paths):
    bad = tmp_path / "badshape.py"
    bad.write_text(
        seed_paths["mpnn"]
        .read_text()
        .replace("        return ret, None\n", "        return ret[..., :-1], None\n")
    )
    out = tmp_path / "never.json"
    code = cli.main(
        ["evaluate", str(bad), "--preset", "tiny", "--no-progress", "--output", str(out)]
    )
    assert code == 1
    assert "expected 16" in _error_line(capsys)
    assert not out.exists()


def test_console_script_usage_error_exit_code(seed_paths):
    proc = _run_cli("evaluate", "does/not/exist.py", cwd=seed_paths["mpnn"].parents[1])
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1].startswith("error: program file not found")


def test_no_command_prints_help_and_is_usage_error(capsys):
    assert cli.main([]) == 2
    assert "usage: spark-jax" in capsys.readouterr().out


def test_commands_usage_errors(tmp_path, capsys):
    assert cli.main(["search", "--resume", str(tmp_path), "--seed", "1"]) == 2
    assert "do not combine it" in _error_line(capsys)
    assert cli.main(["search", "--resume", str(tmp_path)]) == 2
    assert "nothing to resume" in _error_line(capsys)
    assert cli.main(["search", "--config", str(tmp_path / "none.yaml")]) == 2
    assert "not found" in _error_line(capsys)
    assert cli.main(["search", "--seed", "-1", "--run-dir", str(tmp_path / "run")]) == 2
    assert "--seed" in _error_line(capsys)
    assert not (tmp_path / "run").exists()
    assert cli.main(["report", str(tmp_path / "missing")]) == 2
    assert "does not exist" in _error_line(capsys)
    assert cli.main(["perf", "--steps", "0"]) == 2
    assert "--steps" in _error_line(capsys)
    assert cli.main(["bench", "--steps", "0"]) == 2  # the old name runs `perf` and says so
    err = capsys.readouterr().err
    assert "old name of `spark-jax perf`" in err and "--steps" in err
    assert cli.main(["check", str(tmp_path / "nope.py")]) == 2
    assert "program file not found" in _error_line(capsys)


def test_search_seed_goes_through_with_seed(tmp_path, monkeypatch, capsys):
    import types

    from spark_jax.config import search as search_config
    from spark_jax.report import tables
    from spark_jax.search import best_program, loop

    seen = {}

    def fake_run_search(cfg, run_dir, *, resume, command, on_progress):
        seen.update(cfg=cfg, run_dir=run_dir, resume=resume, command=command)
        # The best program is the seed's better; the best evaluated candidate falls below it.
        return loop.SearchResult(str(run_dir), 3, 2, 0.5, 0.6, "p", f"{run_dir}/best.py", 0.4)

    acc = types.SimpleNamespace(
        attempts=3, evaluated_budget=2, evaluated=2, seed={"ood_score": 0.5}, verdict="below"
    )
    best = best_program.BestProgram("p", "", False, 1, 0.4, 0.5, "", seed_id="s")
    monkeypatch.setattr(loop, "run_search", fake_run_search)
    monkeypatch.setattr(
        tables,
        "write_report",
        lambda run_dir: tables.ReportPaths(tmp_path / "report.md", (), acc, best, "ood_val"),
    )
    argv = ["search", "--seed", "7", "--run-dir", str(tmp_path / "run"), "--no-progress"]
    assert cli.main(argv) == 0
    assert seen["cfg"] == search_config.with_seed(search_config.default_config(), 7)
    assert seen["command"] == ["spark-jax", *argv] and seen["resume"] is False
    out = capsys.readouterr().out
    assert "attempts: 3; evaluated candidates: 2 (2 scored; the seed's own evaluation apart)" in out
    assert "seed OOD 50.00%; best evaluated candidate OOD 40.00% (attempt index 1, below" in out
    assert "best program (the best evaluated candidate):" in out and "beats" not in out
