"""The search end to end on the tiny config: determinism, kill -9 + resume, outputs, config."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
import records  # noqa: E402 - tests/records.py: record builders

from spark_jax.config import search as search_config
from spark_jax.config.protocol import ConfigError
from spark_jax.search import loop as search
from spark_jax.search.rundb import RunDB

ROOT = pathlib.Path(__file__).resolve().parents[1]
TINY = ROOT / "configs" / "tiny.yaml"


def _summary(run_dir: pathlib.Path) -> dict:
    """Everything that must be identical between two runs of the same config and seed."""
    with RunDB.open(run_dir / search.DB_NAME) as db:
        proposals = [
            (
                p.attempt,
                p.status,
                p.island,
                p.parent_id,
                p.factor,
                p.factor_source,
                p.directive,
                db.program_id(p.child_source or ""),
                p.failure_type,
                p.entanglement,
                p.diff,
            )
            for p in db.proposals()
        ]
        evaluations = sorted(
            (
                e["proposal_attempt"] if e["proposal_attempt"] is not None else -1,
                e["program_id"],
                e["status"],
                e["ood_score"],
                e["val_score"],
                e["macs"],
            )
            for e in db.evaluations()
        )
        snapshot = db.latest_archive_snapshot()
        calls = [(c["attempt"], c["role"], c["prompt_sha256"]) for c in db.llm_calls()]
    archive = snapshot[1]["archive"]
    return dict(
        proposals=proposals,
        evaluations=evaluations,
        calls=calls,
        archive=json.dumps(archive, sort_keys=True),
    )


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory):
    """An uninterrupted run of configs/tiny.yaml."""
    run_dir = tmp_path_factory.mktemp("search") / "reference"
    result = search.run_search(search_config.load(TINY), run_dir, command=["test"])
    return run_dir, result


def test_search_writes_outputs(reference_run):
    run_dir, result = reference_run
    cfg = search_config.load(TINY)
    assert result.evaluated <= cfg.budget and result.attempts <= cfg.max_attempts
    assert pathlib.Path(result.best_path).read_text().count("# SPARK:BEGIN") == 2
    assert (run_dir / "config.yaml").is_file()
    with RunDB.open(run_dir / search.DB_NAME) as db:
        assert db.integrity_check() == [] or db.integrity_check() == ["ok"]
        assert db.get_meta("task") == "bfs" and db.get_meta("versions")["jax"]
        attempts = [p.attempt for p in db.proposals()]
        assert attempts == list(range(len(attempts)))
        assert all(not c["is_llm"] for c in db.llm_calls())
        evaluated = [e for e in db.evaluations() if e["proposal_attempt"] is not None]
        feasible = [p.attempt for p in db.proposals() if p.status == "feasible"]
        assert sorted(e["proposal_attempt"] for e in evaluated) == feasible
        # The best is the top evaluated candidate, the seed apart (the seed only when no
        # candidate scored), and its file is that program.
        evals = db.evaluations()
        scored = {e["program_id"]: e["ood_score"] for e in evals if e["status"] == "ok"}
        candidates = [e["ood_score"] for e in evals if e["status"] == "ok" and e["proposal_attempt"] is not None]  # fmt: skip
        seed = [e for e in evals if e["proposal_attempt"] is None]
        assert [e["ood_score"] for e in seed] == [result.seed_ood]
        assert result.best_ood == (max(candidates) if candidates else result.seed_ood)
        assert scored[result.best_program_id] == result.best_ood
        assert pathlib.Path(result.best_path).read_text() == db.program_source(
            result.best_program_id
        )
        # Algorithm 1: each proposal's feasibility verdict (PASS included) is what the
        # failure window holds, whatever its evaluation did later.
        history = db.latest_archive_snapshot()[1]["history"]
        window = {o["attempt"]: o["status"] for o in history["proposals"]}
        assert window and all(
            window[p.attempt] == p.status for p in db.proposals() if p.attempt in window
        )
        # The search did something: some candidate was trained and scored.
        assert len(scored) > 1 and result.evaluated == len(evaluated) + 1 > 1  # seed counted


def test_kill9_then_resume_matches_uninterrupted_run(reference_run, tmp_path):
    ref_dir, _ = reference_run
    run_dir = tmp_path / "killed"
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "spark_jax.cli",
            "search",
            "--config",
            str(TINY),
            "--run-dir",
            str(run_dir),
            "--no-progress",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    db_path = run_dir / search.DB_NAME
    deadline = time.time() + 600
    try:
        # Kill once a candidate (not just the seed) has been proposed: mid-search.
        while time.time() < deadline:
            if db_path.exists():
                try:
                    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True) as conn:
                        n = conn.execute("SELECT COUNT(*) FROM proposals").fetchone()[0]
                except sqlite3.OperationalError:
                    n = 0
                if n >= 1:
                    break
            assert proc.poll() is None, "search finished before it could be killed"
            time.sleep(0.2)
        else:
            pytest.fail("search never recorded a proposal")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the search and its worker processes
        proc.wait()
    with RunDB.open(db_path) as db:
        assert db.attempt_count() >= 1
    result = search.run_search(
        search_config.load(run_dir / "config.yaml"),
        run_dir,
        resume=True,
        command=["test", "--resume"],
    )
    assert _summary(run_dir) == _summary(ref_dir)
    assert result.evaluated == RunDB.open(db_path).evaluated_count()


class _ScriptedExecutor:
    """Scores a program by its hash, instantly; 'kills' the run when asked for job `die_on`."""

    capacity = 1

    def __init__(self, die_on: str | None = None):
        self.die_on = die_on

    def submit(self, job):
        import concurrent.futures
        import hashlib

        from spark_jax.jobs.executors import EvalResult

        if job.job_id == self.die_on:
            raise KeyboardInterrupt("simulated kill")
        h = int(hashlib.sha256(job.source.encode()).hexdigest(), 16)
        future = concurrent.futures.Future()
        future.set_result(
            EvalResult(
                job_id=job.job_id,
                ok=True,
                error_type=None,
                error="",
                worker="scripted",
                wall_seconds=0.0,
                evaluation=records.evaluation(
                    0.3 + (h % 7) / 100,
                    val_score=0.5,
                    macs=1000 + h % 5,
                    params=10,
                    train_seconds=1.0,
                    compile_seconds=1.0,
                ),
            )
        )
        return future

    def shutdown(self):
        pass


def test_interrupted_and_resumed_equals_uninterrupted_fast(tmp_path, sandbox_worker, check_options):
    """Same check without training: proposals, calls and archive match exactly."""
    import dataclasses

    from spark_jax.feasibility import checker as feasibility

    def checker(child, parent, factor):
        return feasibility.check_program(
            child, parent_source=parent, factor=factor, options=check_options, worker=sandbox_worker
        )

    cfg = dataclasses.replace(search_config.load(TINY), budget=6, max_attempts=9)
    search.run_search(cfg, tmp_path / "a", executor=_ScriptedExecutor(), checker=checker)
    search.run_search(cfg, tmp_path / "b", executor=_ScriptedExecutor(), checker=checker)
    assert _summary(tmp_path / "a") == _summary(tmp_path / "b")  # deterministic
    with pytest.raises(KeyboardInterrupt):
        search.run_search(
            cfg, tmp_path / "c", executor=_ScriptedExecutor(die_on="3"), checker=checker
        )
    search.run_search(
        cfg, tmp_path / "c", resume=True, executor=_ScriptedExecutor(), checker=checker
    )
    assert _summary(tmp_path / "c") == _summary(tmp_path / "a")


def test_resume_refuses_missing_and_existing(tmp_path):
    with pytest.raises(search.SearchError, match="nothing to resume"):
        search.run_search(search_config.load(TINY), tmp_path / "none", resume=True)
    (tmp_path / "old").mkdir()
    RunDB.create(tmp_path / "old" / search.DB_NAME).close()
    with pytest.raises(search.SearchError, match="already exists"):
        search.run_search(search_config.load(TINY), tmp_path / "old")


@pytest.mark.parametrize(
    "text,match",
    [
        ("budgte: 3\n", "search: unknown key\\(s\\) budgte"),
        ("executor: {kind: slurm}\n", "search.executor.kind: must be one of"),
        (
            "executor: {in_fligth: 2}\n",
            "search.executor: unknown key\\(s\\) search.executor.in_fligth",
        ),
        ("executor: {timeout_s: abc}\n", "search.executor.timeout_s: must be a number"),
        ("executor: {timeout_s: -5}\n", "search.executor.timeout_s: must be > 0"),
        ("feasibility: {timeout_s: x}\n", "search.feasibility.timeout_s: must be a number"),
        ("archive: {seed: 3}\n", "search.archive.seed: not a section key; set the top-level"),
        (
            "editor: {kind: llm, llm: {kind: openai, base_url: u, model: m, temprature: 1}}\n",
            "search.editor.llm.temprature",
        ),
        ("editor: {kind: llm, llm: {kind: ollama}}\n", "search.editor.llm.kind: must be one of"),
        (
            "editor: {kind: llm, llm: {kind: openai, base_url: u}}\n",
            "search.editor.llm.model: required",
        ),
        ("cascade: {fraction: 1.5}\n", "search.cascade.fraction: must be in"),
        ("operator: {factor_choice: both}\n", "search.operator.factor_choice"),
        ("task: dfz\n", "search.task: unknown CLRS task 'dfz'"),
        ("protocol: {train_steps: -1}\n", "protocol.train_steps"),
        ("budget: 0\n", "search.budget: must be an integer >= 1"),
        ("editor: {kind: llm}\n", "search.editor.llm"),
        ("archive: {num_islands: 0}\n", "search.archive"),
        ("[1, 2\n", "not valid YAML"),
        (
            "editor: {kind: offline, prices: {r1: {prompt_per_mtok: 1}}}\n",
            "search.editor.prices.r1: must be a mapping with exactly",
        ),
        (
            "editor: {kind: offline, prices: {r1: {prompt_per_mtok: 1, completion_per_mtok: -2}}}\n",
            "prices.r1.completion_per_mtok",
        ),
    ],
)
def test_bad_config_names_the_key(tmp_path, text, match):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=match):
        search_config.load(path)


def test_default_config_is_the_embedded_default():
    cfg = search_config.default_config()
    assert (cfg.task, cfg.protocol.name, cfg.editor.kind, cfg.executor.kind) == (
        "dfs",
        "smoke",
        "offline",
        "local",
    )
    assert cfg.executor.in_flight == 1 and cfg.operator.variant == "SPARK (ASR+RC+SAR)"
    assert search_config.load(ROOT / "configs" / "default.yaml").to_dict() == cfg.to_dict()


def test_llm_defaults_sized_for_reasoning_models(tmp_path):
    path = tmp_path / "llm.yaml"
    path.write_text(
        "editor: {kind: llm, llm: {kind: openai, base_url: u, model: r1},\n"
        "         prices: {r1: {prompt_per_mtok: 0.5, completion_per_mtok: 2}}}\n"
    )
    cfg = search_config.load(path)
    assert cfg.editor.llm.max_tokens == 16384
    assert cfg.editor.prices["r1"]["completion_per_mtok"] == 2
    assert search_config.from_dict(cfg.to_dict()) == cfg
    path.write_text(
        "editor: {kind: llm, llm: {kind: openai, base_url: u, model: r1, max_tokens: 32768}}\n"
    )
    assert search_config.load(path).editor.llm.max_tokens == 32768


def test_one_seed_derives_the_others(tmp_path):
    path = tmp_path / "seeded.yaml"
    path.write_text("seed: 7\n")
    cfg = search_config.load(path)
    assert (cfg.seed, cfg.archive.seed, cfg.editor.seed, cfg.operator.seed) == (7, 7, 7, 7)
    again = search_config.with_seed(cfg, 3)
    assert (again.seed, again.archive.seed, again.editor.seed, again.operator.seed) == (3,) * 4
    assert search_config.from_dict(again.to_dict()) == again  # the run's snapshot reloads


def test_loading_a_config_imports_no_stage_code():
    code = (
        "import sys; from spark_jax.config import search; search.load(sys.argv[1]); "
        "bad = [m for m in sys.modules if m == 'httpx' or m == 'jax' or "
        "m.startswith(('spark_jax.feasibility', 'spark_jax.operator', "
        "'spark_jax.evaluation', 'spark_jax.jobs', 'spark_jax.search'))]; print(bad); assert not bad"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(ROOT / "configs" / "llm-example.yaml")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr
