"""`spark-jax compare`: named methods, per-run configs, and a real tiny comparison killed with
kill -9 and re-run (finished searches are not redone)."""

from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

from spark_jax import cli, compare
from spark_jax.compare.runner import run_dir_of, run_status
from spark_jax.config import search as search_config
from spark_jax.llm.loopback import LoopbackServer, Reply
from spark_jax.search.rundb import RunDB
from spark_jax.util import labels

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_methods_are_the_papers_settings():
    m = compare.METHODS
    assert m["spark"].operator == {"mode": "spark", "factor_choice": "asr", "use_rc": True}
    assert m["global-rewrite"].operator["mode"] == "rewrite"
    assert m["random-scope-sar"].operator == {
        "mode": "spark",
        "factor_choice": "random",
        "use_rc": False,
    }
    assert m["fixed-op-sar"].operator["factor_choice"] == "OPERATOR"
    assert m["fixed-act-sar"].operator["factor_choice"] == "ACTION"
    assert m["random-rc-sar"].operator == {
        "mode": "spark",
        "factor_choice": "random",
        "use_rc": True,
    }
    assert m["asr-sar"].operator == {"mode": "spark", "factor_choice": "asr", "use_rc": False}
    assert m["ours-1it"].max_attempts == 1
    assert [x.name for x in compare.resolve_methods("asr-only,spark,rc-sar-only,spark")] == [
        "asr-sar",
        "spark",
        "random-rc-sar",
    ]
    with pytest.raises(compare.MethodError, match="unknown method 'evoprompt'"):
        compare.resolve_methods("spark,evoprompt")


def test_every_method_gives_a_valid_search_config():
    base = {"task": "bfs", "preset": "tiny", "operator": {"asr_retries": 2}, "max_attempts": 9}
    plan = compare.ComparePlan(base, tuple(compare.METHODS), (0, 1), budget=3, max_attempts=5)
    for method, seed in plan.runs():
        values = plan.run_config(method, seed)
        cfg = search_config.from_dict(values)
        attempts = 1 if method.name == "ours-1it" else 5  # the same for every other method
        assert cfg.seed == seed and cfg.operator.asr_retries == 2
        # The attempts stop the run: its budget (seed included) can never be reached first.
        assert cfg.max_attempts == attempts and cfg.budget == attempts + 1
        for key, value in method.operator.items():
            assert getattr(cfg.operator, key) == value
    assert compare.ComparePlan.from_dict(plan.to_dict()) == plan


def test_a_comparison_needs_one_attempt_count(tmp_path):
    plan = compare.ComparePlan({"task": "bfs"}, ("spark",), (0,), budget=3, max_attempts=None)
    with pytest.raises(compare.CompareError, match="same number of attempts"):
        compare.run_comparison(tmp_path / "a", plan)
    plan = compare.ComparePlan({"task": "bfs"}, ("spark",), (0,), budget=0, max_attempts=4)
    with pytest.raises(compare.CompareError, match="at least 1"):
        compare.run_comparison(tmp_path / "b", plan)
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_usage_errors(tmp_path, capsys):
    assert cli.main(["compare", "--methods", "spark,nope", "--out", str(tmp_path / "a")]) == 2
    assert "unknown method 'nope'" in capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text("task: dfz\n")
    assert cli.main(["compare", "--config", str(bad), "--out", str(tmp_path / "b")]) == 2
    assert "dfz" in capsys.readouterr().err
    assert not (tmp_path / "b").exists()
    # The file itself is read by the search's loader: the same one-line errors.
    bad.write_text("task: [dfs\n")
    assert cli.main(["compare", "--config", str(bad), "--out", str(tmp_path / "c")]) == 2
    assert f"{bad}: not valid YAML at line 2, column 1" in capsys.readouterr().err
    bad.write_text("")
    assert cli.main(["compare", "--config", str(bad), "--out", str(tmp_path / "c")]) == 2
    assert "the config file is empty" in capsys.readouterr().err
    assert not (tmp_path / "c").exists()
    assert cli.main(["compare", "--report-only", str(tmp_path)]) == 2


def _compare(
    out: pathlib.Path, methods="fixed-act-sar,eoh", seeds=1, budget=2, cap=1, base=True, jobs=1
):
    """`spark-jax compare` in its own process group; `base`: on configs/tiny.yaml (bfs, our mpnn,
    4 training steps), else on the embedded default (dfs, triplet_gmpnn) with `--preset tiny`;
    `jobs` searches at once."""
    argv = [sys.executable, "-m", "spark_jax.cli", "compare", "--methods", methods]
    argv += ["--seeds", str(seeds), "--budget", str(budget), "--out", str(out)]
    argv += ["--config", str(ROOT / "configs" / "tiny.yaml")] if base else ["--preset", "tiny"]
    argv += ["--max-attempts", str(cap)] if cap else []
    argv += ["--jobs", str(jobs)] if jobs > 1 else []
    env = dict(os.environ, PYTHONPATH=str(ROOT), TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.Popen(
        argv,
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def test_compare_killed_then_rerun_keeps_finished_searches(tmp_path, quick_compiles):
    out = tmp_path / "cmp"
    first = run_dir_of(out, compare.METHODS["fixed-act-sar"], 0)
    proc = _compare(out)
    deadline = time.monotonic() + 900
    while time.monotonic() < deadline and proc.poll() is None:
        if run_status(first) == "finished":
            break
        time.sleep(0.5)
    assert proc.poll() is None and run_status(first) == "finished"
    os.killpg(proc.pid, signal.SIGKILL)  # the comparison, its search and their workers
    proc.wait()
    with RunDB.open(first / "run.db") as db:
        finished_at = db.get_meta("finished_at")
    rerun = _compare(out)
    _, err = rerun.communicate(timeout=900)
    assert rerun.returncode == 0, err[-3000:]
    assert "fixed-act-sar seed 0: finished earlier, kept" in err
    with RunDB.open(first / "run.db") as db:
        assert db.get_meta("finished_at") == finished_at  # not redone
    second = run_dir_of(out, compare.METHODS["eoh"], 0)
    assert run_status(second) == "finished"
    with RunDB.open(second / "run.db") as db:
        (proposal,) = db.proposals()
    assert proposal.mode == "eoh" and proposal.editor == "offline-analogue"
    assert not proposal.is_llm and proposal.calls[0].model.startswith("offline-analogue:")
    report = (out / "report.md").read_text()
    assert "`fixed-act-sar` (Fixed-ACT SAR) | 1 |" in report
    assert "`eoh` (EoH; offline analogue, not an LLM result) | 1 |" in report
    assert "| `eoh` | holistic | 1 |" in report  # the entanglement table
    assert "| `fixed-act-sar` | ACTION | 1 |" in report
    assert "NOT an LLM" in report and "`tiny` protocol, task `bfs`" in report
    assert f"; machine {labels.machine_label()}" in report  # recorded by each run
    for name in compare.tables.PLOT_FILES:
        assert (out / "plots" / name).stat().st_size > 0
    plan = json.loads((out / compare.PLAN_FILE).read_text())
    assert plan["methods"] == ["fixed-act-sar", "eoh"] and plan["budget"] == 2
    # Both searches shared one XLA compilation cache inside the comparison directory.
    assert any((out / "xla-cache").iterdir())
    assert "compile_cache_dir: ../../xla-cache" in (first / "config.yaml").read_text()
    # The seed program trained once for both methods: eoh's search read its seed's scores
    # (and its final test's) from the comparison's result cache, bit for bit.
    assert "result_cache_dir: ../../eval-cache" in (first / "config.yaml").read_text()
    seeds = []
    for run in (first, second):
        with RunDB.open(run / "run.db") as db:
            seeds.append(next(e for e in db.evaluations() if e["proposal_attempt"] is None))
    assert not seeds[0]["worker"].startswith("cache:") and seeds[1]["worker"].startswith("cache:")
    assert seeds[0]["ood_score"] == seeds[1]["ood_score"]
    # The same directory with another plan is refused, nothing run.
    code = cli.main(["compare", "--methods", "spark", "--seeds", "1", "--out", str(out)])
    assert code == 2


def _rows(report: str) -> list[str]:
    """The report's table rows without the wall/device hour cells."""
    rows = [line for line in report.splitlines() if line.startswith("| `")]
    return [line.rsplit("|", 3)[0] if "(OpenEvolve" in line else line for line in rows]


def test_llm_comparison_is_recorded_and_replays_without_an_llm(tmp_path, quick_compiles):
    import yaml

    base = yaml.safe_load((ROOT / "configs" / "tiny.yaml").read_text())
    base["seed_program"] = str(ROOT / "spark_jax" / "assets" / "processors" / "mpnn.py")
    miss = "<<<<<<< SEARCH\n    nothing_like_this()\n=======\n    x = 1\n>>>>>>> REPLACE\n"
    # Two unusable answers: only the seed trains, so the test stays cheap.
    with LoopbackServer(script=[Reply(miss), Reply("no code today")]) as server:
        base["editor"] = {
            "kind": "llm",
            "llm": {"kind": "openai", "base_url": server.base_url, "model": "loopback"},
            "preflight": False,
        }
        base["editor"]["llm"]["api_key_env"] = None
        plan = compare.ComparePlan(base, ("openevolve",), (0,), budget=2, max_attempts=2)
        recorded = tmp_path / "recorded"
        statuses = compare.run_comparison(recorded, plan)
        asked = len(server.requests)
        sent = [m["content"] for r in server.requests if r.body for m in r.body["messages"]]
    assert statuses == {("openevolve", 0): "finished"} and asked >= 2
    for word in ("factor-scoped", "Factor-scoped", "an OPERATOR edit", "an ACTION edit", "FACTOR:"):
        assert not any(word in text for text in sent), word  # no SPARK vocabulary (issue 24)
    method = compare.METHODS["openevolve"]
    cassette = compare.runner.cassette_of(recorded, method, 0)
    assert len(cassette.read_text().splitlines()) == asked  # every call recorded
    replay = compare.ComparePlan(
        base, ("openevolve",), (0,), budget=2, max_attempts=2, replay=str(recorded)
    )
    replayed = tmp_path / "replayed"  # the server is gone: no LLM can answer
    assert compare.run_comparison(replayed, replay) == {("openevolve", 0): "finished"}

    def proposals(out):
        with RunDB.open(run_dir_of(out, method, 0) / "run.db") as db:
            return [p.canonical_json() for p in db.proposals()]

    first, again = proposals(recorded), proposals(replayed)
    assert first == again and len(first) >= 2
    failures = [json.loads(p)["failure_type"] for p in first]
    # An unmatched block fails the attempt (OpenEvolve 0.4.0's diff rules: `no_match`); no
    # block is a parse failure.
    assert failures == ["no_match", "no_diff"]
    reports = [compare.write_compare_report(d, p).read_text() for d, p in
               ((recorded, plan), (replayed, replay))]  # fmt: skip
    assert _rows(reports[0]) == _rows(reports[1]) and len(_rows(reports[0])) >= 2


@pytest.mark.acceptance
def test_done_when_comparison_of_every_baseline(tmp_path):
    # The command, `spark-jax compare --methods spark,openevolve,evoprompting,funsearch,eoh
    # --seeds 2 --preset tiny --budget 4` (ten offline searches), killed with kill -9 once the
    # first search has finished, then re-run to the end. Since issue 24 the budget no longer
    # stops a run (every method runs the same attempt cap): `--max-attempts 4` keeps the runs
    # as long as the budget of 4 (seed included) made them, instead of the config's 12.
    # `--jobs 2`: two searches at once, so the kill also lands on a search in flight, and the
    # comparison uses both cores once CI's other acceptance worker is done.
    out = tmp_path / "cmp"
    methods = "spark,openevolve,evoprompting,funsearch,eoh"
    first = run_dir_of(out, compare.METHODS["spark"], 0)
    proc = _compare(out, methods, seeds=2, budget=4, cap=4, base=False, jobs=2)
    while proc.poll() is None and run_status(first) != "finished":
        time.sleep(1)
    assert proc.poll() is None, proc.communicate()[1][-3000:]
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    with RunDB.open(first / "run.db") as db:
        finished_at = db.get_meta("finished_at")
    rerun = _compare(out, methods, seeds=2, budget=4, cap=4, base=False, jobs=2)
    _, err = rerun.communicate(timeout=7200)
    assert rerun.returncode == 0, err[-3000:]
    assert "spark seed 0: finished earlier, kept" in err
    with RunDB.open(first / "run.db") as db:
        assert db.get_meta("finished_at") == finished_at  # not redone
    report = (out / "report.md").read_text()
    assert "`tiny` protocol, task `dfs`" in report
    for name in methods.split(","):
        assert f"| `{name}` |" in report
        for seed in (0, 1):
            assert run_status(run_dir_of(out, compare.METHODS[name], seed)) == "finished"
    for name in ("openevolve", "evoprompting", "funsearch", "eoh"):
        assert "offline analogue, not an LLM result" in report.split(f"`{name}` (", 1)[1][:120]
    for name in compare.tables.PLOT_FILES:
        assert (out / "plots" / name).stat().st_size > 0
