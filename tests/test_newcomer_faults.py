"""Issue 30's faults, each reproduced: a full disk after the search finished, a resume whose
config.yaml was deleted, and a changed config named key by key. The searches are the fault
harness's (the real loop, database, lock and CLI; scripted executor and feasibility)."""

from __future__ import annotations

import errno
import os
import pathlib
import subprocess
import sys

import fault_harness as harness
import pytest
import yaml

from spark_jax import cli
from spark_jax.report import tables
from spark_jax.search import loop
from spark_jax.search.rundb import RunDB

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _full_disk_savefig(self, fname, *args, **kwargs):
    """Figure.savefig on a full disk: the file is created, nothing fits, ENOSPC."""
    pathlib.Path(fname).write_bytes(b"")
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(fname))


def _harness_search(monkeypatch):
    real = loop.run_search

    def run_search(cfg, run_dir, **kw):
        kw.pop("executor", None)
        return real(
            harness.config(),
            run_dir,
            executor=harness.ScriptedExecutor(),
            checker=harness.checker,
            **kw,
        )

    monkeypatch.setattr(loop, "run_search", run_search)


def test_full_disk_after_the_search_is_one_line_and_loses_nothing(tmp_path, monkeypatch, capsys):
    from matplotlib.figure import Figure

    _harness_search(monkeypatch)
    monkeypatch.setattr(Figure, "savefig", _full_disk_savefig)
    run_dir = tmp_path / "run"
    argv = ["search", "--config", str(harness.TINY), "--run-dir", str(run_dir), "--no-progress"]
    rc = cli.main(argv)
    err = capsys.readouterr().err.strip()
    assert rc == 1
    assert err.count("\n") == 0 and err.startswith("error: the search finished")
    assert "No space left on device" in err and f"spark-jax report {run_dir}" in err
    pngs = list((run_dir / "plots").glob("*")) if (run_dir / "plots").exists() else []
    assert pngs == [], f"partial plot files left behind: {pngs}"
    assert "## Plots" in (run_dir / "report.md").read_text()  # report.md still written
    with RunDB.open(run_dir / "run.db") as db:  # nothing stored lost
        assert db.get_meta("finished_at") is not None and db.evaluated_count() >= 2
    assert (run_dir / "best" / "best_program.py").is_file()
    # Space again: `spark-jax report` writes everything.
    monkeypatch.undo()
    assert cli.main(["report", str(run_dir)]) == 0
    assert all(p.stat().st_size > 0 for p in (run_dir / "plots").glob("*.png"))


def test_full_disk_for_report_md_keeps_the_previous_report(tmp_path, monkeypatch, capsys):
    run_dir = tmp_path / "run"
    harness.run(run_dir)
    tables.write_report(run_dir)
    before = (run_dir / "report.md").read_text()
    real_open = open

    def full_open(file, mode="r", *a, **kw):
        if "w" in mode and str(file).endswith(".md.tmp" + str(os.getpid())):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(file))
        return real_open(file, mode, *a, **kw)

    monkeypatch.setattr("builtins.open", full_open)
    assert tables.report_main(run_dir) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "No space left on device" in err
    assert (run_dir / "report.md").read_text() == before
    assert not [p for p in run_dir.iterdir() if ".tmp" in p.name]


def test_resume_names_the_keys_that_differ(tmp_path):
    run_dir = tmp_path / "run"
    harness.run(run_dir, max_attempts=2)
    with pytest.raises(loop.SearchUsageError) as info:
        harness.run(run_dir, resume=True, max_attempts=3, budget=7)
    message = str(info.value)
    assert "search.max_attempts" in message and "search.budget" in message
    assert "search.seed" not in message.replace("search.seed_program", "")


def test_resume_after_config_yaml_was_deleted_uses_the_database_copy(tmp_path):
    run_dir = tmp_path / "run"
    cmd = [sys.executable, str(ROOT / "tests" / "fault_harness.py"), "search", str(run_dir)]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    snapshot = yaml.safe_load((run_dir / "config.yaml").read_text())
    (run_dir / "config.yaml").unlink()
    again = subprocess.run(
        [*cmd, "--resume"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert again.returncode == 0, again.stderr
    assert yaml.safe_load((run_dir / "config.yaml").read_text()) == snapshot  # restored


def test_resume_without_config_or_database_is_one_line(tmp_path, capsys):
    (tmp_path / "run").mkdir()
    assert cli.main(["search", "--resume", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "nothing to resume" in err
