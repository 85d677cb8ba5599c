"""`spark-jax serve` over HTTP (no browser): the JSON the pages poll agrees with the report's
accounting (runs and comparisons), paths outside the root are refused, LLM call records are shown through a
whitelist, nothing is written, and the run status follows the finish mark and the lock."""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import os
import pathlib
import shutil
import subprocess
import sys
import threading

import pytest
import serve_fixtures

from spark_jax import compare
from spark_jax.compare import tables
from spark_jax.report.accounting import summarize
from spark_jax.search.rundb import RunDB
from spark_jax.serve import make_server, reader
from spark_jax.serve.data import CALL_FIELDS

REPO = pathlib.Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    root = tmp_path_factory.mktemp("served")
    serve_fixtures.make_run(root / "runs" / "r1")
    serve_fixtures.make_benchmark(root / "bench")
    (tmp_path_factory.mktemp("outside") / "run.db").write_text("not yours")
    server = make_server(root, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, server
    server.shutdown()
    server.server_close()


def _get(server, path: str, host: str | None = None) -> tuple[int, bytes, dict]:
    conn = http.client.HTTPConnection(*server.server_address[:2], timeout=30)
    headers = {"Host": host} if host else {}
    conn.request("GET", path, headers=headers)  # sent as is: no client-side normalization
    resp = conn.getresponse()
    body = resp.read()
    conn.close()
    return resp.status, body, dict(resp.getheaders())


def _json(server, path: str):
    status, body, _ = _get(server, path)
    assert status == 200, (path, status, body[:300])
    return json.loads(body)


def test_runs_list_and_run_numbers_match_the_report(served):
    root, server = served
    listing = _json(server, "/api/runs")
    (run,) = listing["runs"]
    assert run["path"] == "runs/r1" and run["task"] == "bfs" and run["status"] == "finished"
    assert run["method"] == "spark/asr" and run["evaluated"] == 1 and run["best_ood"] == 0.6
    assert listing["benchmarks"][0]["path"] == "bench"
    detail = _json(server, "/api/run?path=runs/r1")
    with RunDB.open(root / "runs" / "r1" / "run.db") as db:
        acc = summarize(db)
    assert detail["valid_rate"] == acc.valid_rate == 0.5
    assert detail["curves"]["best"] == list(acc.curves["best"]) == [0.4, 0.6, 0.6]
    assert detail["curves"]["factor_counts"] == {"OPERATOR": [1, 2]}
    assert detail["failures"] == [{"stage": "syntax", "type": "syntax_error", "count": 1}]
    assert [p["attempt"] for p in detail["lineage"]] == [0, None]  # incumbent, then the seed
    grids = detail["archive"]["islands"]
    assert grids[1]["cells"][0]["attempt"] == 0 and grids[1]["cells"][0]["cell"] == [6, 0]


def test_proposal_shows_whitelisted_call_fields_as_data(served):
    _, server = served
    data = _json(server, "/api/proposal?path=runs/r1&attempt=0")
    (call,) = data["calls"]
    assert set(call) == set(CALL_FIELDS) and "prompt_sha256" not in call
    assert call["response"] == serve_fixtures.HOSTILE_ANSWER  # data, rendered as text
    assert data["proposal"]["directive"] == serve_fixtures.HOSTILE_DIRECTIVE
    assert data["diff"].endswith("+    return x * 2\n")
    assert data["evaluation"]["ood_score"] == 0.6 and data["feasibility"]["feasible"]
    assert _get(server, "/api/proposal?path=runs/r1&attempt=9")[0] == 404
    assert _get(server, "/api/proposal?path=runs/r1&attempt=x")[0] == 404


def test_pages_escape_the_path_and_forbid_inline_script(served):
    _, server = served
    status, body, headers = _get(server, "/run?path=runs/<script>x")
    assert status == 200 and b"<script>x" not in body and b"&lt;script&gt;x" in body
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    assert headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize(
    "path",
    [
        "/api/run?path=../outside",
        "/api/run?path=..",
        "/api/run?path=/etc",
        "/run?path=runs/../../x",
        "/proposal?path=../../../etc&attempt=0",
        "/api/benchmark?path=../bench",
        "/static/../app.py",
        "/static/..%2Fapp.py",
        "/../../etc/passwd",
    ],
)
def test_paths_outside_the_root_are_refused(served, path):
    _, server = served
    status, body, _ = _get(server, path)
    assert status in (403, 404), (path, status)
    assert b"not yours" not in body and b"import" not in body


def test_missing_things_are_404_and_symlinks_out_are_403(served, tmp_path):
    root, server = served
    assert _get(server, "/api/run?path=nothing")[0] == 404
    assert _get(server, "/static/secret.txt")[0] == 404
    assert _get(server, "/nowhere")[0] == 404
    link = root / "escape"
    if not link.exists():
        link.symlink_to(tmp_path, target_is_directory=True)
    assert _get(server, "/api/run?path=escape")[0] == 403


def test_foreign_host_header_is_refused(served):
    _, server = served
    assert _get(server, "/api/runs", host="evil.example:80")[0] == 403
    assert _get(server, "/api/runs", host="localhost:1")[0] == 200


def test_benchmark_table(served):
    _, server = served
    data = _json(server, "/api/benchmark?path=bench")
    assert data["landed"] == 8 and data["expected"] == 8 and data["tasks"] == ["bfs", "dfs"]
    mine = data["table"][1]
    assert mine["label"] == "mine" and mine["cells"][1] == {
        "n": 1,
        "mean": pytest.approx(70.0),
        "std": 0.0,
        "failed": 1,
        "scores": [pytest.approx(70.0)],  # the per-seed dots of the page's bar chart
        "seeds": [0],
    }
    assert data["comparison"][0]["program"] == "mine" and data["failures"][0]["seed"] == 1
    assert data["comparison"][0]["verdicts"]["dfs"] == "cannot tell"  # one seed landed
    assert data["machines"] == "not recorded"  # the fixture's records name no machine
    assert 0 < data["wall_hours"] <= data["device_hours"]


def test_serving_writes_nothing(served):
    root, server = served
    db = root / "runs" / "r1" / "run.db"
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    for path in ("/api/runs", "/api/run?path=runs/r1", "/api/proposal?path=runs/r1&attempt=1"):
        _json(server, path)
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    with pytest.raises(Exception, match="readonly|read-only"):
        reader.RunReader(db)._conn.execute("DELETE FROM run_meta")


def test_run_status_from_finish_mark_lock_and_heartbeat(tmp_path):
    run_dir = tmp_path / "r"
    with RunDB.create(run_dir / "run.db", {"task": "bfs"}) as db:
        db.record_proposal(serve_fixtures.records.proposal(0, "failed"))
    with reader.RunReader(run_dir / "run.db") as r:
        last = r.last_write_at()
        assert reader.run_status(run_dir, r, now=last + 1) == "running"
        assert reader.run_status(run_dir, r, now=last + 10_000) == "crashed-resumable"
        (run_dir / "lock").write_text(f"{os.getpid()}\n")
        assert reader.run_status(run_dir, r, now=last + 10_000) == "running"
        dead = subprocess.run(
            [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
        )
        (run_dir / "lock").write_text(dead.stdout)
        assert reader.run_status(run_dir, r, now=last + 1) == "crashed-resumable"
        lock = run_dir / "lock"  # a live PID that started after the lock was written: reused
        lock.write_text(f"{os.getpid()}\n")
        os.utime(lock, (1.0, 1.0))
        assert reader.run_status(run_dir, r, now=last + 1) == "crashed-resumable"
    with RunDB.open(run_dir / "run.db") as db:
        db.set_meta("finished_at", 5.0)
    with reader.RunReader(run_dir / "run.db") as r:
        assert reader.run_status(run_dir, r) == "finished"


def test_cli_prints_the_url_of_a_free_port(served):
    root, _ = served
    proc = subprocess.Popen(
        [sys.executable, "-m", "spark_jax.cli", "serve", str(root), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert "read-only" in line and "http://127.0.0.1:" in line, line
        port = int(line.rsplit(":", 1)[1].strip(" /\n"))
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", "/api/runs")
        assert json.loads(conn.getresponse().read())["runs"][0]["path"] == "runs/r1"
        conn.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_cli_usage_errors(tmp_path, capsys):
    from spark_jax import cli

    assert cli.main(["serve", str(tmp_path / "missing")]) == 2
    assert "not a directory" in capsys.readouterr().err
    (tmp_path / "file").write_text("x")
    assert cli.main(["serve", str(tmp_path / "file")]) == 2
    assert cli.main(["serve", str(tmp_path), "--host", "203.0.113.1"]) == 2  # not ours
    assert "cannot listen" in capsys.readouterr().err


@contextlib.contextmanager
def _serving(root):
    server = make_server(root, port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    """A root holding a comparison laid out as `spark-jax compare` writes it (one member run
    not started yet) and a run outside it."""
    root = tmp_path_factory.mktemp("compared")
    serve_fixtures.make_comparison(root / "cmp")
    serve_fixtures.make_run(root / "other")
    with _serving(root) as server:
        yield root, server


def test_comparison_rows_and_bands_are_the_reports(compared, tmp_path):
    root, server = compared
    (listed,) = _json(server, "/api/runs")["comparisons"]
    assert listed["path"] == "cmp" and listed["methods"] == ["spark", "fixed-act-sar"]
    assert (listed["runs_with_db"], listed["expected"]) == (3, 4)
    d = _json(server, "/api/compare?path=cmp")
    assert d["status"] == "incomplete" and d["offline"] and d["threshold"] == 0.45
    spark, fixed = d["rows"]
    assert spark["name"] == "spark" and spark["paper_name"] == "Full SPARK"
    assert spark["best_ood_pct"]["mean"] == pytest.approx(65.0)
    assert spark["best_ood_pct"]["std"] == pytest.approx(7.0710678)
    assert spark["valid_rate"]["mean"] == pytest.approx((2 / 3 + 1) / 2)
    assert fixed["best_ood_pct"] == {"mean": pytest.approx(45.0), "std": None, "n": 1}
    assert (spark["to_threshold"], spark["reached"], fixed["to_threshold"]) == (1, 2, 1)
    assert fixed["ratio"] == 1.0 and fixed["offline_label"] == tables.OFFLINE_LABEL
    assert spark["tokens_per_evaluated"] == pytest.approx(10 * 5 / 4)  # 10 tokens an attempt
    assert spark["llm_calls_per_evaluated"] == 0.0  # offline roles: no LLM call
    by_member = {(m["method"], m["seed"]): m for m in d["members"]}
    assert by_member[("fixed-act-sar", 1)]["status"] == "not started"
    assert by_member[("spark", 0)]["status"] == "finished"
    assert by_member[("spark", 0)]["path"] == "cmp/spark/seed-0"
    assert _json(server, "/api/run?path=cmp/spark/seed-0")["run"]["best_ood"] == 0.7
    best = d["charts"]["best"]
    assert best["x"] == [0, 1, 2]
    assert best["methods"][0]["mean"] == pytest.approx([40.0, 55.0, 65.0])
    assert best["methods"][0]["low"] == pytest.approx([40.0, 50.0, 60.0])
    fixed_mean = best["methods"][1]["mean"]
    assert fixed_mean[:2] == pytest.approx([40.0, 45.0]) and fixed_mean[2] is None
    assert d["charts"]["valid"]["methods"][0]["mean"] == pytest.approx([1.0, 0.75, 5 / 6])
    # The Markdown report of the same directory (a copy: the report writer opens read-write).
    copy = shutil.copytree(root / "cmp", tmp_path / "cmp")
    plan = compare.ComparePlan.from_dict(json.loads((copy / compare.PLAN_FILE).read_text()))
    report = compare.write_compare_report(copy, plan).read_text()
    spark_row = (
        "| `spark` (Full SPARK) | 2 | 65.00 ± 7.07 | — | 2.5 ± 0.7 | 2.0 ± 0.0 | 1 (2/2 reached) |"
    )
    assert spark_row in report
    fixed_row = (
        "| `fixed-act-sar` (Fixed-ACT SAR) | 1 | 45.00 | — | 2.0 | 1.0 | 1 (1/1 reached) | 1.00x |"
    )
    assert fixed_row in report


def test_comparison_threshold_and_bad_paths(compared):
    root, server = compared
    d = _json(server, "/api/compare?path=cmp&threshold=0.6")
    spark, fixed = d["rows"]
    assert (spark["to_threshold"], fixed["to_threshold"], fixed["reached"]) == (1.5, None, 0)
    assert d["threshold"] == 0.6 and not d["threshold_default"]
    assert _get(server, "/api/compare?path=cmp&threshold=x")[0] == 404
    assert _get(server, "/api/compare?path=../cmp")[0] == 403
    assert _get(server, "/compare?path=../../etc")[0] == 403
    assert _get(server, "/api/compare?path=other")[0] == 404  # a run, not a comparison
    bad = root / "broken"
    bad.mkdir(exist_ok=True)
    (bad / compare.PLAN_FILE).write_text('{"methods": ["spark", "nope"]}')
    status, body, _ = _get(server, "/api/compare?path=broken")
    assert status == 404 and b"compare.json is not a readable plan" in body
    assert any(c.get("error") for c in _json(server, "/api/runs")["comparisons"])
    status, body, _ = _get(server, "/compare?path=cmp")
    assert status == 200 and b'data-page="compare"' in body


def test_comparison_follows_its_members_and_writes_nothing(tmp_path):
    cmp_dir = serve_fixtures.make_comparison(tmp_path / "c")
    dbs = sorted(cmp_dir.rglob("run.db"))
    before = [hashlib.sha256(p.read_bytes()).hexdigest() for p in dbs]
    with _serving(tmp_path) as server:
        first = _json(server, "/api/compare?path=c")
        assert [p for p in dbs if hashlib.sha256(p.read_bytes()).hexdigest() not in before] == []
        # A member search starts and writes: the next poll shows it running, with its numbers.
        serve_fixtures.make_member(cmp_dir / "fixed-act-sar" / "seed-1", [0.9], finished=False)
        second = _json(server, "/api/compare?path=c")
    assert first["runs_with_db"] == 3 and second["runs_with_db"] == 4
    assert second["status"] == "running" and second["rows"][1]["runs"] == 2
    assert second["rows"][1]["best_ood_pct"]["mean"] == pytest.approx(67.5)


def test_verdicts_are_the_reports_blocks(served, compared, tmp_path):
    """The verdicts the pages show are the blocks of the report each writer makes for the
    same folder (the Chromium test reads them in the page: test_serve_reports.py)."""
    from spark_jax.benchmark.store import BenchmarkDB
    from spark_jax.benchmark.tables import write_benchmark_report
    from spark_jax.serve import verdicts

    root, server = served
    bench = _json(server, "/api/benchmark?path=bench")["verdicts"]
    copy = shutil.copytree(root / "bench", tmp_path / "bench")
    with BenchmarkDB(copy / "benchmark.db") as db:
        text = write_benchmark_report(db, copy).read_text()
    section = text.split("## Paired comparison\n", 1)[1].split("\n## ", 1)[0]
    assert bench == verdicts.blocks(section.splitlines())
    assert bench[1]["table"]["head"][-3:] == ["p", "p (Holm)", "verdict"]
    run = _json(server, "/api/run?path=runs/r1")
    assert "verdict" not in run  # the accounting's selection-set word, never shown
    (line,) = run["outcome"]["verdict"]
    assert line["text"].startswith("**Verdict")
    croot, cserver = compared
    cmp = _json(cserver, "/api/compare?path=cmp")["verdicts"]
    copy = shutil.copytree(croot / "cmp", tmp_path / "cmp")
    plan = compare.ComparePlan.from_dict(json.loads((copy / compare.PLAN_FILE).read_text()))
    report = compare.write_compare_report(copy, plan).read_text()
    first = report.split("## Methods against `spark`\n", 1)[1].split("\n## ", 1)[0]
    assert cmp["first"] == verdicts.blocks(first.splitlines())


def test_comparison_without_databases_says_it_keeps_a_report(tmp_path):
    cmp_dir = serve_fixtures.make_comparison(tmp_path / "kept", members={})
    (cmp_dir / "report.md").write_text("# Comparison\n")
    serve_fixtures.make_comparison(tmp_path / "started", members={("spark", 0): [0.5]})
    with _serving(tmp_path) as server:
        kept = _json(server, "/api/compare?path=kept")
        listed = {c["path"]: c for c in _json(server, "/api/runs")["comparisons"]}
    assert kept["status"] == "report only" and kept["verdicts"] is None
    assert {m["status"] for m in kept["members"]} == {"no database kept (report.md only)"}
    assert kept["editors"] == ["offline"]  # from the plan: no run database names it
    assert listed["kept"]["status"] == "report only"
    assert listed["started"]["members"] == ["started/spark/seed-0"]  # grouped on the index


def test_sequential_benchmark_shows_its_decisions(tmp_path):
    """A benchmark in the sequential mode: the page's section is the report's (decisions,
    seeds, intervals, the design), each task's decision is drawn under its bars, and a pair
    shown identical takes the baseline's runs."""
    from spark_jax.benchmark.store import BenchmarkDB
    from spark_jax.benchmark.tables import write_benchmark_report
    from spark_jax.serve import verdicts

    serve_fixtures.make_sequential_benchmark(tmp_path / "seq")
    with _serving(tmp_path) as server:
        d = _json(server, "/api/benchmark?path=seq")
    copy = shutil.copytree(tmp_path / "seq", tmp_path / "copy")
    with BenchmarkDB(copy / "benchmark.db") as db:
        text = write_benchmark_report(db, copy).read_text()
    section = text.split("## Paired comparison\n", 1)[1].split("\n## ", 1)[0]
    assert d["verdicts"] == verdicts.blocks(section.splitlines())
    assert d["verdicts"][0]["table"]["head"][2] == "decision"
    assert d["sequential"] and d["decisions"]["mine"]["dfs"] == "identical"
    assert d["decisions"]["mine"]["bfs"] in ("win", "pending")
    assert d["identical"] == [["mine", "dfs"]]
    mine = d["table"][1]
    assert mine["cells"][1]["scores"] == d["table"][0]["cells"][1]["scores"]  # the baseline's


def test_cartpole_verdict_names_its_return(tmp_path):
    """A CartPole run's verdict line (page and report.md alike) names the family's metric,
    the return, in its own unit, at the final test's returns; never an OOD percentage."""
    from spark_jax.report.accounting import meta_group, read_meta
    from spark_jax.report.tables import write_report

    run = shutil.copytree(REPO / "results/families/data/cartpole_v1-mlp", tmp_path / "cp")
    with RunDB.open(run / "run.db") as db:
        meta, _ = read_meta(db)
        acc = summarize(db, meta)
    returns = [
        meta_group(meta, f"final_test.programs.{e['program_id']}.evaluation.metrics.")[
            "test_return"
        ]
        for e in (acc.best_candidate, acc.seed)
    ]
    scores = f"return {returns[0]:.1f} vs {returns[1]:.1f} ({returns[0] - returns[1]:+.1f})"
    server = make_server(tmp_path, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        outcome = _json(server, "/api/run?path=cp")["outcome"]
    finally:
        server.shutdown()
        server.server_close()
    line = outcome["verdict"][0]["text"]
    assert scores in line and "OOD" not in line and "pp" not in line
    assert "test part (cartpole test split)" in line
    head = outcome["spread"][0]["table"]["head"]
    assert head[2] == "selection score: return mean ± sample std (per seed)"
    assert "OOD" not in " ".join(head)
    report = write_report(run).report.read_text()
    assert line in report.splitlines()
