"""Tests for spark_jax.report: accounting, Markdown tables, PNG plots, paper reference CSVs.

A synthetic run database is built with RunDB; every number checked below is computed by
hand from the table in `_ATTEMPTS`.
"""

from __future__ import annotations

import math
import pathlib

import pytest
import records  # noqa: E402 - tests/records.py: record builders

from spark_jax.report import accounting, plots, reference
from spark_jax.report import tables as report
from spark_jax.search.rundb import RunDB

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
T0 = 1_000_000.0
META = {
    "task": "dfs",
    "preset": "smoke",
    "seed": 0,
    "editor": "offline",
    "operator_variant": "full",
    "budget": {"evaluated": 6, "max_attempts": 12},
    "versions": {"jax": "0.10.0", "spark_jax": "0.1.0"},
    "command": ["spark-jax", "search", "--seed", "0"],
    "machine": "box (x86_64, 2 CPUs)",
}

# attempt: (status, failure_stage, failure_type, entanglement, evaluation)
# evaluation: None (not evaluated), 'error', or (ood, macs, train_seconds, compile_seconds).
_ATTEMPTS = {
    0: ("feasible", None, None, "operator", (0.55, 1100, 20.0, 5.0)),
    1: ("infeasible", "syntax", "SyntaxError", None, None),
    2: ("feasible", None, None, "entangled", (0.60, 1200, 20.0, 5.0)),
    3: ("feasible", None, None, "action", (0.58, 1000, 20.0, 5.0)),
    4: ("failed", None, None, None, None),
    5: ("feasible", None, None, "scaffold", (0.70, 900, 20.0, 5.0)),
    6: ("infeasible", "shape", "ShapeError", "operator", None),
    7: ("feasible", None, None, "operator", "error"),
    8: ("feasible", None, None, "none", (0.70, 950, 20.0, 5.0)),
    9: ("infeasible", "shape", "ShapeError", "entangled", None),
    10: ("feasible", None, None, "action", (0.65, None, None, None)),
    11: ("feasible", None, None, "operator", None),
}
# Evaluations finish out of attempt order (overlapping executor): 5 before 3.
_EVAL_ORDER = (0, 2, 5, 3, 7, 8, 10)


class _Clock:
    """A settable clock: the database stamps each write with `now`."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


def _result(ood: float | None = 0.50, job_id: str = "seed", **fields):
    values = dict(val_score=0.55, params=500, macs=1000, train_seconds=10.0, compile_seconds=2.0)
    values.update(fields)
    return records.result(ood, job_id=job_id, **values)


def _seed_eval(
    db: RunDB, pid: str, ood: float | None = 0.50, preset: str = "smoke", **fields
) -> None:
    db._clock.now = T0 + 100
    db.record_evaluation(pid, None, records.job(preset=preset), _result(ood, **fields))


def _new_db(run_dir: pathlib.Path, meta=META) -> RunDB:
    return RunDB.create(run_dir / "run.db", meta, clock=_Clock())


def _proposal(
    db: RunDB,
    attempt: int,
    status: str,
    parent_id=None,
    stage=None,
    ftype=None,
    ent=None,
    calls=(),
    at=None,
) -> None:
    db._clock.now = T0 if at is None else at
    feasibility = (
        None
        if status == "failed"
        else records.report(
            status == "feasible", entanglement=ent, failure_stage=stage, failure_type=ftype
        )
    )
    db.record_proposal(
        records.proposal(
            attempt,
            status,
            child_source=None if status == "failed" else f"child = {attempt}\n",
            parent_id=parent_id,
            failure_stage=stage,
            failure_type=ftype,
            feasibility=feasibility,
            calls=tuple(calls),
            created_at=at,
        )
    )


def _build_full_run(run_dir: pathlib.Path) -> None:
    with _new_db(run_dir) as db:
        seed_id = db.insert_program("seed = 0\n")
        _seed_eval(db, seed_id)
        for a, (status, stage, ftype, ent, _) in _ATTEMPTS.items():
            calls = [
                records.call("asr", backend="offline", is_llm=False, latency_s=0.001),
                records.call(
                    "sar",
                    backend="openai",
                    model="deepseek-r1",
                    is_llm=True,
                    prompt_tokens=100,
                    completion_tokens=50,
                    latency_s=2.0,
                    ok=a != 4,
                ),
            ]
            _proposal(db, a, status, seed_id, stage, ftype, ent, calls, at=T0 + 200 + 100 * a)
        for a in _EVAL_ORDER:
            child = db.program_id(f"child = {a}\n")
            spec = _ATTEMPTS[a][4]
            db._clock.now = T0 + 250 + 100 * a
            job = records.job(str(a))
            if spec == "error":
                result = records.replace(
                    records.result(None, "timeout", job_id=str(a)), wall_seconds=30.0
                )
            else:
                ood, macs, train, comp = spec
                result = _result(
                    ood,
                    str(a),
                    val_score=ood - 0.05,
                    params=None if macs is None else 10 * macs,
                    macs=macs,
                    train_seconds=train,
                    compile_seconds=comp,
                )
            db.record_evaluation(child, a, job, result)


def _check_pngs(paths: report.ReportPaths, run_dir: pathlib.Path) -> None:
    assert [p.name for p in paths.plots] == list(plots.PLOT_FILES)
    for p in paths.plots:
        assert p.parent == run_dir / "plots"
        data = p.read_bytes()
        assert len(data) > 100 and data[:8] == PNG_SIGNATURE, p


@pytest.fixture(scope="module")
def full_run(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    run_dir = tmp_path_factory.mktemp("full") / "run"
    _build_full_run(run_dir)
    return run_dir


def test_accounting_matches_hand_computed(full_run: pathlib.Path):
    with RunDB.open(full_run / "run.db") as db:
        acc = accounting.summarize(db)
    assert (acc.attempts, acc.feasible, acc.infeasible, acc.failed) == (12, 8, 3, 1)
    assert (acc.evaluated, acc.eval_errors, acc.not_evaluated) == (6, 1, 1)
    assert acc.valid_rate == pytest.approx(8 / 12)
    assert acc.entangled == 3 and acc.entanglement_rate == pytest.approx(3 / 12)
    assert acc.best_ood == 0.70 and acc.incumbent["proposal_attempt"] == 5
    assert (acc.best_attempt, acc.best_attempt_index, acc.best_evaluated) == (6, 5, 3)
    assert acc.verdict == "beats"
    assert acc.wall_hours == pytest.approx(1300 / 3600)  # last record: proposal 11
    assert acc.device_hours == pytest.approx((12 + 5 * 25 + 30) / 3600)
    assert acc.mean_train_seconds == 20.0 and acc.mean_compile_seconds == 5.0
    c = acc.curves
    assert c["best"] == (
        0.50,
        0.55,
        0.55,
        0.60,
        0.60,
        0.60,
        0.70,
        0.70,
        0.70,
        0.70,
        0.70,
        0.70,
        0.70,
    )
    assert c["macs"] == (1000, 1100, 1100, 1200, 1200, 1200, 900, 900, 900, 900, 900, 900, 900)
    assert c["best_eval"] == (0.50, 0.55, 0.60, 0.70, 0.70, 0.70, 0.70)  # 0, 2, 5, 3, 8, 10
    assert c["valid"][-1] == pytest.approx(8 / 12) and c["valid"][0] == 1.0
    assert c["entangled"][2] == pytest.approx(1 / 3)
    assert math.isnan(c["cand_ood"][2]) and c["cand_ood"][6] == 0.70


def test_markdown_numbers_and_sections(full_run: pathlib.Path):
    paths = report.write_report(full_run)
    assert paths.report == full_run / "report.md"
    md = paths.report.read_text()
    for heading in (
        "# SPARK (full) run report: run",
        "## Configuration",
        "## Seed vs best",
        "## Search accounting",
        "## LLM calls by role",
        "## Top 10 programs",
        "## Failures by stage",
        "## Plots",
        "## Paper reference figures",
    ):
        assert heading in md, heading
    assert "Protocol: task `dfs`, preset `smoke`, seed 0." in md
    assert "Editor: offline rule-based editor (NOT an LLM). Machine: box (x86_64, 2 CPUs)." in md
    # Every figure's caption: protocol, task, editor and machine.
    with RunDB.open(full_run / "run.db") as db:
        meta, _ = accounting.read_meta(db)
    assert report.figure_label(meta) == (
        "smoke protocol, task dfs; offline rule-based editor (NOT an LLM); box (x86_64, 2 CPUs)"
    )
    assert "| `command` | spark-jax search --seed 0 |" in md
    assert "| `budget.evaluated` | 6 |" in md and "| `versions.jax` | 0.10.0 |" in md
    assert "Attempts (every proposal" in md and ": 12 (8 feasible, 3 infeasible, 1 editor" in md
    assert "the budget's count): 7 (6 scored, 1 evaluation errors or NaN" in md
    assert "1 feasible not evaluated" in md
    assert "Valid rate (feasible / attempts): 0.667." in md
    assert (
        "Entanglement rate (entangled or scaffold, tag breaks included / attempts): "
        "0.250 (3 of 12)."
    ) in md
    # Results first, configuration last.
    order = [md.index(h) for h in ("## Seed vs best", "## Search accounting", "## Plots")]
    assert order == sorted(order) and md.index("## Configuration") > md.index("## Paper")
    assert "## Seed vs best (task `dfs`, preset `smoke`, seed 0)" in md
    assert "## Top 10 programs (task `dfs`, preset `smoke`, seed 0)" in md
    assert (
        "Best OOD 70.00% (best-so-far, seed included) first reached at attempt 6 of 12 "
        "(0-based attempt index 5), evaluated candidate 3 of 6."
    ) in md
    assert (
        "the best evaluated candidate (program `" in md
        and "attempt index 5) scores above the seed: OOD" in md
        and "beats the seed" not in md  # one seed per program cannot separate them
        and "One training seed per program cannot separate them" in md
        and "OOD 70.00% vs 50.00% (+20.00 pp)" in md
    )
    assert "24 editor calls (2.00 per attempt); 12 to an LLM, 12 offline rules" in md
    assert "| asr | 12 | offline rules (not an LLM) | 0 |" in md
    assert "| sar | 12 | openai/deepseek-r1 | 1 | 0 | 1,200 | 600 | 24.00 | 2.000 |" in md
    assert "12 attempts routed by a parsed factor line, 0 needed a retry, 0 fell back" in md
    assert "no `editor.prices` configured" in md
    assert "Wall hours (first to last record, database creation included): 0.361." in md
    assert "over all evaluations): 0.046." in md
    assert "Train seconds per evaluated candidate (mean): 20.0 (compile: 5.0)." in md
    top = md.split("## Top 10 programs")[1].split("##")[0]
    ranks = [
        line.split("|")[3].strip()
        for line in top.splitlines()
        if line.startswith("| ") and line.split("|")[1].strip().isdigit()
    ]
    assert ranks == ["5", "8", "10", "2", "3", "0", "seed"]
    assert "| 3 | `" in top and "| 65.00 | 60.00 | — | — | — |" in top  # NULL fields
    assert "our MACs (K; one processor step, contraction count, N=" in top
    fails = md.split("## Failures by stage")[1].split("##")[0]
    for row in (
        "| editor | failed | 1 |",
        "| evaluation | timeout | 1 |",
        "| shape | ShapeError | 2 |",
        "| syntax | SyntaxError | 1 |",
    ):
        assert row in fails, row
    ref = md.split("## Paper reference figures")[1]
    assert "paper, GPU, DeepSeek-R1, `paper` protocol" in ref
    assert "this run, `smoke` protocol" in ref and "NOT comparable" in ref
    assert (
        "| Table 1 (10-task) | CLRS | Ibarz et al. 2022 (quoted in SPARK paper, Table 1) | — "
        "| 46.78 | — | 661.0 | no (its protocol: `paper`) |"
    ) in ref
    assert "| Table 1 (10-task) | EP | Chen et al. 2023 (EvoPrompting) (quoted in" in ref
    assert "| no (a protocol none of ours reproduces) |" in ref
    assert "| Table 1 (10-task) | Ours |" in ref and "| 83.74 | — | 664.0 |" in ref
    assert "| our MACs (K, one processor step) | paper MACs (K, as reported) |" in ref
    assert "| DFS ablation | ASR only |" in ref and "Qwen-Plus" in ref
    assert (
        "| DFS scope control | CLRS reference | Ibarz et al. 2022 (quoted in SPARK paper, "
        "scope-control appendix table) | — | 46.80 |"
    ) in ref
    assert (
        "| DFS scope control | Full SPARK | SPARK paper, scope-control appendix table | Qwen-Plus"
        in ref
    )
    assert "| this run | seed | this run, `smoke` protocol | — | 50.00 | 1.0 | — | — |" in ref
    assert "attempt 57" in ref
    for p in paths.plots:
        assert f"(plots/{p.name})" in md
    _check_pngs(paths, full_run)


@pytest.mark.parametrize(
    "ood, word, delta", [(0.50, "equals", "+0.00"), (0.40, "is below", "-10.00")]
)
def test_verdict_equals_and_below(tmp_path: pathlib.Path, ood: float, word: str, delta: str):
    with _new_db(tmp_path) as db:
        seed_id = db.insert_program("seed = 0\n")
        _seed_eval(db, seed_id)
        _proposal(db, 0, "feasible", seed_id, ent="operator")
        db.record_evaluation(
            db.program_id("child = 0\n"), 0, records.job("0"), _result(ood, "0", macs=1000)
        )
    md = report.write_report(tmp_path).report.read_text()
    assert f"attempt index 0) {word} the seed: OOD" in md
    assert f"({delta} pp)" in md
    assert "first reached by the seed (no candidate exceeded its OOD)" in md


def test_seed_only_run_via_report_main(tmp_path: pathlib.Path, capsys):
    with _new_db(tmp_path, {"task": "dfs", "preset": "paper"}) as db:
        _seed_eval(db, db.insert_program("seed = 0\n"), preset="paper")
    assert report.report_main(tmp_path) == 0
    out = capsys.readouterr().out.split()
    assert out == [str(tmp_path / "report.md")] + [
        str(tmp_path / "plots" / name) for name in plots.PLOT_FILES
    ]
    paths = report.ReportPaths(
        tmp_path / "report.md", tuple(tmp_path / "plots" / name for name in plots.PLOT_FILES)
    )
    md = paths.report.read_text()
    assert "Attempts (every proposal" in md and ": 0 (0 feasible" in md
    assert "Valid rate (feasible / attempts): —." in md
    assert "no candidate was evaluated, so nothing beats the seed" in md
    assert "first reached by the seed" in md
    assert "(no editor calls recorded)" in md and "(no failures)" in md
    assert "used the `paper` protocol, so its OOD numbers are comparable in protocol" in md
    _check_pngs(paths, tmp_path)


def test_zero_feasible_proposals(tmp_path: pathlib.Path):
    with _new_db(tmp_path) as db:
        seed_id = db.insert_program("seed = 0\n")
        _seed_eval(db, seed_id)
        _proposal(db, 0, "infeasible", seed_id, "syntax", "SyntaxError", "scaffold")
        _proposal(db, 1, "failed", seed_id, calls=[records.call("sar", ok=False)])
    paths = report.write_report(tmp_path)
    md = paths.report.read_text()
    assert ": 2 (0 feasible, 1 infeasible, 1 editor failures, 0 duplicates" in md
    assert "Valid rate (feasible / attempts): 0.000." in md
    assert "tag breaks included / attempts): 0.500 (1 of 2)." in md
    assert "the budget's count): 0 (0 scored" in md
    assert "no candidate was evaluated" in md
    assert "| syntax | SyntaxError | 1 |" in md and "| editor | failed | 1 |" in md
    _check_pngs(paths, tmp_path)


def test_null_fields_and_no_seed(tmp_path: pathlib.Path):
    with RunDB.create(tmp_path / "run.db", clock=_Clock()) as db:  # no meta at all
        _proposal(db, 0, "feasible")
        every_score_null = {
            k: None
            for k in ("score", "val_score", "params", "macs", "train_seconds", "compile_seconds")
        }
        db.record_evaluation(
            db.program_id("child = 0\n"),
            0,
            records.job("0"),
            records.result(0.0, job_id="0", **every_score_null),
        )
        db.record_llm_calls(None, [records.call("")])  # the role-less call
    paths = report.write_report(tmp_path)
    md = paths.report.read_text()
    assert "(no run metadata recorded)" in md
    assert "Protocol: task `unknown`, preset `unknown`, seed None." in md
    assert "the seed has no recorded evaluation" in md
    assert "Best OOD —%" in md and "no scored program" in md
    assert "Train seconds per evaluated candidate (mean): — (compile: —)." in md
    assert "| — | 1 | " in md  # the role-less call
    assert "The run's task is unknown, so no paper figures are shown." in md
    _check_pngs(paths, tmp_path)


def test_empty_database_and_unknown_task(tmp_path: pathlib.Path):
    with _new_db(tmp_path, {"task": "no_such_task", "preset": "tiny"}):
        pass
    paths = report.write_report(tmp_path)
    md = paths.report.read_text()
    assert "The paper reports no figures for task `no_such_task`." in md
    assert "Wall hours (first to last record, database creation included): —." in md
    _check_pngs(paths, tmp_path)


def test_report_main_errors(tmp_path: pathlib.Path, capsys):
    assert report.report_main(tmp_path / "missing") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    (tmp_path / "empty").mkdir()
    assert report.report_main(tmp_path / "empty") == 2
    assert "run.db" in capsys.readouterr().err
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "run.db").write_text("not a database")
    assert report.report_main(tmp_path / "bad") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1


def test_reference_tables():
    ten = reference.clrs_10task()
    assert len(ten) == 14 and {r.metric for r in ten} == {"macs_k", "ood_acc"}
    ours = next(r for r in ten if r.metric == "ood_acc" and r.method == "Ours")
    assert ours.values["dfs"] == 83.74 and ours.avg == 83.92 and len(ours.values) == 10
    thirty = reference.clrs_30task()
    assert len(thirty) == 30 and thirty[0].task == "dfs" and thirty[0].values["Ours"] == 83.7
    ablation = reference.dfs_ablation()
    spark = [r for r in ablation if r.variant == "SPARK"]
    assert [(r.llm, r.macs, r.ood_acc) for r in spark] == [
        ("DeepSeek-R1", 664157, 83.74),
        ("Qwen-Plus", 665308, 80.50),
    ]
    extra = {(r.benchmark, r.metric): r for r in reference.extra_benchmarks()}
    assert extra["20news", "candidates"].values["Base"] is None
    assert extra["cartpole_v1", "test_return"].values["Ours"] == 489.0
    dfs = reference.for_task("dfs")
    assert {f.source for f in dfs} == {
        "Table 1 (10-task)",
        "30-task appendix",
        "DFS ablation",
        "DFS scope control",
    }
    clrs = next(f for f in dfs if f.method == "CLRS")
    assert (clrs.ood_acc, clrs.macs_k, clrs.llm) == (46.78, 661.0, None)  # no LLM edited it
    assert clrs.cited.author == reference.IBARZ and clrs.cited.table == "Table 1"
    ep = next(f for f in dfs if f.method == "EP" and f.source == "30-task appendix")
    assert ep.cited.author == reference.EVOPROMPTING and not ep.cited.comparable("paper")
    spark = next(f for f in dfs if f.method == "Ours" and f.source == "Table 1 (10-task)")
    assert not spark.cited.quoted and spark.cited.comparable("paper")
    assert not spark.cited.comparable("smoke") and spark.llm == "DeepSeek-R1"
    base = next(f for f in dfs if f.method == "CLRS reference")
    assert base.cited.author == reference.IBARZ and base.llm is None
    assert all(f.source == "30-task appendix" for f in reference.for_task("bfs"))
    assert reference.for_task("no_such_task") == ()
    with pytest.raises(AttributeError):
        ours.method = "x"  # type: ignore[misc]


def test_routing_truncation_tag_breaks_and_cost(tmp_path: pathlib.Path):
    meta = dict(
        META,
        config={"editor": {"prices": {"r1": {"prompt_per_mtok": 1.0, "completion_per_mtok": 4.0}}}},
    )
    llm = dict(backend="openai", model="r1", is_llm=True, prompt_tokens=1000, completion_tokens=500)
    route_bad = records.call("route", parse_outcome="no_factor_line", **llm)
    route_ok = records.call("route", **llm)
    cut = records.call("edit", parse_outcome="truncated", **dict(llm, model="other"))
    with _new_db(tmp_path, meta) as db:
        seed_id = db.insert_program("seed = 0\n")
        _seed_eval(db, seed_id)
        db.record_proposal(records.proposal(0, "feasible", calls=(route_ok, records.call())))
        db.record_proposal(
            records.proposal(
                1,
                "failed",
                calls=(route_bad, route_ok, cut),
                failure_type="truncated",
                child_source=None,
                feasibility=None,
            )
        )
        db.record_proposal(
            records.proposal(
                2,
                "infeasible",
                calls=(route_bad, route_bad, route_bad),
                factor="ACTION",
                factor_source="fallback",
                failure_stage="template",
                failure_type="template",
                child_source="broken = 1\n",
                feasibility=records.report(
                    False,
                    failure_stage="template",
                    failure_type="template",
                    entanglement="scaffold",
                ),
            )
        )
        acc = accounting.summarize(db)
    assert (acc.routed, acc.route_retried, acc.route_fallback) == (2, 2, 1)
    assert (acc.truncated_calls, acc.truncated, acc.tag_breaks) == (1, 1, 1)
    assert acc.entangled == 1
    md = report.write_report(tmp_path).report.read_text()
    assert "2 attempts routed by a parsed factor line, 2 needed a retry, 1 fell back" in md
    assert "1 calls; 1 attempts failed because the edit was truncated" in md
    # 6 priced route calls: 6 * (1000 * 1 + 500 * 4) / 1e6; the 'other' model is unpriced.
    assert "per million tokens): 0.0180 (not priced: other x1)." in md


def test_every_run_figure_carries_the_protocol_editor_machine_caption(
    full_run, tmp_path, monkeypatch
):
    drawn = []
    monkeypatch.setattr(plots.labels, "caption", lambda fig, text: drawn.append(text))
    report.write_report(full_run)
    assert len(drawn) == len(plots.PLOT_FILES)
    assert set(drawn) == {
        "smoke protocol, task dfs; offline rule-based editor (NOT an LLM); box (x86_64, 2 CPUs)"
    }
