"""A task family is one plug-in folder: a new family outside the package (the toy regression
family in `tests/fixtures/families/toy/`, named by `$SPARK_JAX_FAMILIES`) runs a tiny search
through the CLI with no change to the package; the registry loads plug-ins by name and says
what is wrong with a bad one."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

from spark_jax import families
from spark_jax.search.rundb import RunDB

TOY = pathlib.Path(__file__).resolve().parent / "fixtures" / "families" / "toy"
ROOT = pathlib.Path(__file__).resolve().parents[1]


def _cli(args: list[str], cwd: pathlib.Path, plugins: str) -> subprocess.CompletedProcess:
    env = {**os.environ, families.PATH_VARIABLE: plugins}
    return subprocess.run(
        [sys.executable, "-m", "spark_jax.cli", *args],
        cwd=cwd,
        env={**env, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_a_new_family_folder_runs_a_tiny_search_through_the_cli(tmp_path):
    config = tmp_path / "toy.yaml"
    config.write_text(
        "family: toy\nbenchmark: sine\npreset: tiny\nbudget: 3\nmax_attempts: 6\n"
        "archive: {num_islands: 2}\n"
    )
    run_dir = tmp_path / "run"
    out = _cli(
        ["search", "--config", str(config), "--run-dir", str(run_dir), "--no-progress"],
        tmp_path,
        str(TOY),
    )
    assert out.returncode == 0, out.stderr[-3000:]
    with RunDB.open(run_dir / "run.db") as db:
        assert db.get_meta("family") == "toy"
        assert db.get_meta("data")["benchmark"] == "sine"
        evals = db.evaluations()
        proposals = db.proposals()
        final = db.get_meta("final_test")
    assert len(evals) == 3 and all(e["status"] == "ok" for e in evals), evals
    for row in evals:  # selection scored the validation part only
        record = json.loads(row["evaluation_json"])
        assert record["family"] == "toy" and set(record["metrics"]) == {"val_mse"}
        assert 0 < record["metrics"]["val_mse"] < 10 and row["macs"] > 0
    seed = (TOY / "seeds" / "mlp.py").read_text()
    children = {p.child_source for p in proposals if p.feasible}
    assert children and seed not in children  # the family's own offline catalogue edited it
    for child in children:  # each is one of the toy catalogue's edits (widen, nonlinearity)
        assert "2 * self.hidden" in child or "nn.tanh" not in child, child
    assert all("test_mse" in e["evaluation"]["metrics"] for e in final["programs"].values())
    report = (run_dir / "report.md").read_text()
    assert "Task family `toy`" in report and "offline editor, not an LLM" in report


def test_without_the_folder_the_family_is_unknown_and_the_error_lists_the_known(tmp_path):
    config = tmp_path / "toy.yaml"
    config.write_text("family: toy\nbenchmark: sine\npreset: tiny\nbudget: 2\n")
    out = _cli(["search", "--config", str(config), "--run-dir", str(tmp_path / "r")], tmp_path, "")
    assert out.returncode == 2, out.stderr[-2000:]
    assert "unknown task family 'toy'" in out.stderr and "classify" in out.stderr
    assert not (tmp_path / "r").exists()


def test_the_registry_loads_shipped_and_path_plugins_by_name(monkeypatch):
    monkeypatch.setenv(families.PATH_VARIABLE, str(TOY))
    assert {"clrs", "classify", "cartpole", "toy"} <= set(families.names())
    toy = families.get("toy")
    assert toy.factory == "make_regressor" and set(toy.seed_programs()) == {"mlp"}
    assert families.get("toy") is toy  # imported once
    for name in ("clrs", "classify", "cartpole"):
        assert families.get(name).name == name
    with pytest.raises(ValueError, match=r"unknown task family 'nope'; known: .*toy"):
        families.get("nope")


def test_a_plugin_folder_without_a_family_is_a_clear_error(tmp_path, monkeypatch):
    bad = tmp_path / "broken"
    bad.mkdir()
    (bad / "__init__.py").write_text("X = 1\n")
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv(families.PATH_VARIABLE, os.pathsep.join([str(bad), str(empty)]))
    with pytest.raises(ValueError, match="'broken': its module defines no FAMILY"):
        families.get("broken")
    with pytest.raises(ValueError, match="'empty'.* has no __init__.py"):
        families.get("empty")


def test_a_plugin_that_fails_to_import_names_the_family_and_the_error(tmp_path, monkeypatch):
    broken = tmp_path / "syntaxerr"
    broken.mkdir()
    (broken / "__init__.py").write_text("def f(:\n")
    monkeypatch.setenv(families.PATH_VARIABLE, str(broken))
    with pytest.raises(ValueError, match="'syntaxerr' cannot be imported: SyntaxError"):
        families.get("syntaxerr")
