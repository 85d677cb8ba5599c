"""The sampling controls (`sample`, `sequential`; Gideoni, Risi, Gal 2026) pinned on the
prompt the model receives: every step goes through the OpenAI-compatible backend to a real
HTTP server on 127.0.0.1, and the tests read what that server was sent.

  sample      never sees a previous attempt, an archive program or a non-seed parent: its
              prompt is the same at every attempt and every child is checked against the seed.
  sequential  sees exactly the last K attempts (diff against the seed, score or failure
              type), no archive program, no non-seed parent.
"""

from __future__ import annotations

import asyncio
import re
import types

import pytest

from spark_jax.compare import methods as methods_lib
from spark_jax.compare import verdicts
from spark_jax.config.sections import OperatorConfig, OperatorConfigError
from spark_jax.llm import OpenAIBackend
from spark_jax.llm.loopback import LoopbackServer, Reply
from spark_jax.operator.baselines import controls, make_operator
from spark_jax.operator.context_text import ParentOrigin
from spark_jax.operator.editors import LLMEditor, ProgramView, StepContext
from spark_jax.operator.signals import Outcome, SearchHistory

LINE = "        ret = jax.nn.relu(self.o1(z) + self.o2(msgs))  # [B, N, H]"
PARENT_MARK = "NON_SEED_PARENT_MARK"
ARCHIVE_MARK = "ARCHIVE_PROGRAM_MARK"
RECENT_MARK = "RECENT_OUTCOME_MARK"


def _variant(seed: str, k: int) -> str:
    """The seed with one marked line added inside its ACTION region."""
    assert LINE in seed
    return seed.replace(LINE, f"{LINE}\n        # variant {k}")


def _feasible(child, parent, factor):
    return types.SimpleNamespace(feasible=True, failure_stage=None, failure_type=None, reason="")


def _infeasible(child, parent, factor):
    return types.SimpleNamespace(
        feasible=False, failure_stage="syntax", failure_type="syntax", reason="test"
    )


def _ev(score: float):
    return types.SimpleNamespace(score=score, macs=1000.0)


def _context(seed: str) -> StepContext:
    """A context whose parent, inspirations and outcomes are NOT the seed: a control must
    leave all of them out."""
    other = seed.replace("    use_ln: bool = True\n", f"    use_ln: bool = True  # {PARENT_MARK}\n")
    arch = seed.replace("    use_ln: bool = True\n", f"    use_ln: bool = True  # {ARCHIVE_MARK}\n")
    return StepContext(
        task="bfs",
        parent=ProgramView("p", other, {"ood_score": 0.9}, parent_id="s"),
        top=(ProgramView("t", arch, {"ood_score": 0.8}),),
        diverse=(ProgramView("d", arch, {"ood_score": 0.7}),),
        outcomes=(Outcome(0, "ACTION", "infeasible", "locality", summary=RECENT_MARK),),
        origin=ParentOrigin(PARENT_MARK, attempt=0, edited_from="s", island=0),
    )


def _user_messages(server: LoopbackServer) -> list[str]:
    return [m["content"] for r in server.requests if r.body for m in r.body["messages"]
            if m["role"] == "user"]  # fmt: skip


def _run(mode, seed, replies, checkers, outcomes, window=8):
    """Runs len(replies) steps of `mode`; `outcomes[k]` says what becomes of attempt k, as
    the search loop would record it: ('evaluated', score), ('duplicate',) or None (nothing
    beyond the proposal). Returns the user messages and the proposals."""
    history = SearchHistory()
    proposals = []
    with LoopbackServer(script=[Reply(r) for r in replies]) as srv:
        backend = OpenAIBackend(srv.base_url, "loopback", api_key_env=None, max_retries=1)
        config = OperatorConfig(mode=mode, sequential_window=window)
        op = make_operator(LLMEditor(backend), None, config, history)
        op.observe("s", seed, _ev(0.5), None)
        ctx = _context(seed)
        for k in range(len(replies)):
            op.checker = checkers[k]
            p = asyncio.run(op.step(ctx, k))
            proposals.append(p)
            outcome = outcomes[k]
            status, failure = p.status, p.failure_type
            if outcome and outcome[0] == "duplicate":
                status, failure = "failed", "duplicate"
            history.record(Outcome(k, None, status, failure_type=failure))
            if outcome and outcome[0] == "evaluated":
                op.observe(
                    f"c{k}", p.child_source, _ev(outcome[1]), types.SimpleNamespace(attempt=k)
                )
                history.record(Outcome(k, None, "evaluated", ood_score=outcome[1]))
        return _user_messages(srv), proposals, op


@pytest.mark.parametrize("mode", ["sample", "sample-regions"])
def test_sample_never_sees_a_previous_attempt_or_a_non_seed_parent(mode, seed_paths):
    seed = seed_paths["mpnn"].read_text()
    replies = [f"```python\n{_variant(seed, k)}```" for k in range(4)]
    outcomes = [("evaluated", 0.6 + k / 100) for k in range(4)]
    sent, proposals, _ = _run(mode, seed, replies, [_feasible] * 4, outcomes)
    assert len(sent) == 4
    assert len(set(sent)) == 1  # the same prompt at every attempt: nothing from the search
    prompt = sent[0]
    assert seed.rstrip() in prompt and "ood_score=0.5000" in prompt
    for mark in ("variant", PARENT_MARK, ARCHIVE_MARK, RECENT_MARK, "0.9", "0.61"):
        assert mark not in prompt, mark
    assert all(p.parent_id == "s" and p.status == "feasible" for p in proposals)
    assert [p.child_source for p in proposals] == [_variant(seed, k) for k in range(4)]
    form = "regions" if mode.endswith("regions") else "full"
    assert {p.calls[0].role for p in proposals} == {f"sample-{form}"}


def test_sequential_sees_exactly_the_last_k_attempts(seed_paths):
    seed = seed_paths["mpnn"].read_text()
    replies = [f"```python\n{_variant(seed, k)}```" for k in range(6)]
    replies[2] = "no code today"
    checkers = [_feasible, _feasible, _feasible, _infeasible, _feasible, _feasible]
    outcomes = [("evaluated", 0.6), ("evaluated", 0.61), None, None, ("duplicate",), None]
    sent, proposals, op = _run("sequential", seed, replies, checkers, outcomes, window=3)
    assert [s.count("## Attempt ") for s in sent] == [0, 1, 2, 3, 3, 3]
    assert "- none yet" in sent[0]
    last = sent[-1]
    # Attempts 2, 3 and 4 (the last K = 3 before attempt 5), oldest first; not 0 or 1.
    assert "## Attempt 0" not in last and "## Attempt 1" not in last
    assert last.index("## Attempt 2") < last.index("## Attempt 3") < last.index("## Attempt 4")
    assert "## Attempt 2: failed (no_program)\n(no program)" in last
    assert "## Attempt 3: infeasible (syntax)" in last and "+        # variant 3" in last
    assert "## Attempt 4: failed (duplicate)" in last and "+        # variant 4" in last
    assert "variant 0" not in last and "variant 1" not in last
    assert "## Attempt 1: evaluated: ood_score=0.6100, macs=1000" in sent[3]
    for text in sent:
        assert seed.rstrip() in text
        for mark in (PARENT_MARK, ARCHIVE_MARK, RECENT_MARK):
            assert mark not in text, mark
    assert all(p.parent_id == "s" for p in proposals)
    # The window survives a snapshot: a resumed operator sends the same prompt.
    again = make_operator(None, None, op.config, op.history)
    again.load_rng_state(op.rng_state())
    assert again.prompt(_context(seed)) == op.prompt(_context(seed))


def test_region_edit_keeps_the_seed_scaffolding(seed_paths):
    seed = seed_paths["mpnn"].read_text()
    answer = (
        "Here:\n```python\n    # SPARK:BEGIN ACTION\n    x = 1\n    if x:\n        x = 2\n"
        "    # SPARK:END ACTION\n```"
    )
    child, outcome = controls.splice_regions(seed, answer)
    assert outcome == "ok"
    from spark_jax.program import regions

    new, old = regions.parse_regions(child), regions.parse_regions(seed)
    assert new.scaffolding == old.scaffolding and new.body("OPERATOR") == old.body("OPERATOR")
    indent = old.span("ACTION").indent
    assert new.body("ACTION") == f"{indent}x = 1\n{indent}if x:\n{indent}    x = 2\n"
    assert controls.splice_regions(seed, "no code")[0] is None
    assert controls.splice_regions(seed, "```python\n# SPARK:END ACTION\n```")[0] is None


def test_the_window_is_a_checked_key():
    assert OperatorConfig(mode="sequential").sequential_window == 8
    with pytest.raises(OperatorConfigError, match="operator.sequential_window"):
        OperatorConfig(mode="sequential", sequential_window=0)


def test_compare_runs_the_controls_by_default(capsys):
    from spark_jax.cli.main import build_parser

    # The command keeps no list of its own: its default is the library's, read when used.
    default = build_parser().parse_args(["compare"]).methods
    assert str(default) == ",".join(methods_lib.DEFAULT_METHODS)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["compare", "--help"])
    shown = "".join(capsys.readouterr().out.split())  # the help wraps at hyphens too
    assert f"(default:{','.join(methods_lib.DEFAULT_METHODS)})" in shown
    names = [m.name for m in methods_lib.resolve_methods(methods_lib.DEFAULT_METHODS)]
    assert names[0] == "spark" and {"sample", "sequential"} <= set(names)
    for name in methods_lib.CONTROL_METHODS:
        assert methods_lib.METHODS[name].operator == {"mode": name}


def test_control_verdicts_pair_each_method_with_each_control():
    scores = {
        "spark": {0: 60.0, 1: 61.0, 2: 62.0},
        "openevolve": {0: 50.0, 1: 51.0},
        "sample": {0: 40.0, 1: 41.0, 2: 42.0},
        "sequential": {0: 59.0},
    }
    lines = verdicts.control_lines(["spark", "openevolve"], ["sample", "sequential"], scores)
    rows = [line for line in lines if line.startswith("| `")]
    assert [r.split(" | ")[0] for r in rows] == [
        "| `spark` vs `sample`",
        "| `spark` vs `sequential`",
        "| `openevolve` vs `sample`",
        "| `openevolve` vs `sequential`",
    ]
    assert rows[0].endswith("| exact sign-flip | +20.00 | 0.25 | 0.25 | cannot tell |")
    assert rows[2].endswith("| exact permutation | +9.50 | 0.1 | 0.2 | cannot tell |")
    for row in rows[1:2] + rows[3:]:  # one seed on the control's side
        assert "none (fewer than 2 seeds on a side)" in row and row.endswith("| cannot tell |")
    assert any("Holm-Bonferroni over the 2 test(s)" in line for line in lines)
    assert verdicts.control_lines(["spark"], [], scores)[0].startswith("No control ran")
    # Eight paired seeds, the control always below: a win (sign flips: p = 2/256), and the
    # other way round a loss.
    many = {"spark": {s: 60.0 + s for s in range(8)}, "sample": {s: 50.0 + s for s in range(8)}}
    (row,) = [x for x in verdicts.control_lines(["spark"], ["sample"], many) if x[:3] == "| `"]
    assert row.endswith("| +10.00 | 0.00781 | 0.00781 | win |")
    many["sample"] = {s: 70.0 + s for s in range(8)}
    (row,) = [x for x in verdicts.control_lines(["spark"], ["sample"], many) if x[:3] == "| `"]
    assert row.endswith("| loss |")


def test_the_report_sets_spark_and_openevolve_against_each_control(tmp_path):
    import json

    import serve_fixtures  # tests/serve_fixtures.py: comparison directories without training

    from spark_jax.compare import tables
    from spark_jax.compare.runner import PLAN_FILE, ComparePlan

    methods = ("spark", "openevolve", "sample", "sequential")
    members = {(m, s): [0.5 + 0.1 * i + 0.01 * s] for i, m in enumerate(methods) for s in (0, 1)}
    out = serve_fixtures.make_comparison(tmp_path / "cmp", members, methods)
    plan = ComparePlan.from_dict(json.loads((out / PLAN_FILE).read_text()))
    md = tables.write_compare_report(out, plan).read_text()
    section = md.split("## Methods against the sampling controls")[1].split("\n## ")[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    assert [r.split(" | ")[0] for r in rows] == [
        "| `spark` vs `sample`",
        "| `spark` vs `sequential`",
        "| `openevolve` vs `sample`",
        "| `openevolve` vs `sequential`",
    ]
    # Same search seeds 0, 1: sign flips of 2 differences, p = 0.5 at best: cannot tell.
    assert rows[0].endswith("| 2 / 2 | exact sign-flip | -20.00 | 0.5 | 1 | cannot tell |")
    assert "- `sample` ran as:" in section and "- `sequential` ran as:" in section
    for name in ("sample", "sequential"):  # the method table labels the offline analogues
        row = next(line for line in md.splitlines() if line.startswith(f"| `{name}` ("))
        assert "offline analogue, not an LLM result" in row
    without = ComparePlan.from_dict({**plan.to_dict(), "methods": ["spark", "openevolve"]})
    md = tables.write_compare_report(out, without).read_text()
    assert "No control ran" in md.split("## Methods against the sampling controls")[1]


@pytest.mark.slow  # on demand (`-m slow`): ~40 min on 2 cores, over CI's acceptance budget
def test_done_when_spark_against_the_controls(tmp_path):
    # The command, whole: `spark-jax compare --methods spark,sample,sequential --seeds 2
    # --budget 2 --config configs/tiny.yaml` with no model (six offline searches of 5 attempts;
    # about 40 minutes on a contended 2-core CPU). Its report has a row for each control with
    # the statistics' verdict against SPARK.
    import os
    import pathlib
    import subprocess
    import sys

    from spark_jax import compare
    from spark_jax.compare.runner import run_dir_of, run_status

    root = pathlib.Path(__file__).resolve().parents[1]
    out = tmp_path / "cmp"
    argv = [
        sys.executable,
        "-m",
        "spark_jax.cli",
        "compare",
        "--methods",
        "spark,sample,sequential",
    ]
    argv += ["--seeds", "2", "--budget", "2", "--config", "configs/tiny.yaml", "--out", str(out)]
    env = dict(os.environ, PYTHONPATH=str(root), TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=7200)
    assert done.returncode == 0, done.stderr[-3000:]
    for name in ("spark", "sample", "sequential"):
        for seed in (0, 1):
            assert run_status(run_dir_of(out, compare.METHODS[name], seed)) == "finished"
    report = (out / "report.md").read_text()
    section = report.split("## Methods against the sampling controls")[1].split("\n## ")[0]
    verdict = r" \| 2 / 2 \| exact sign-flip \| [+-]\d+\.\d\d \| [\d.]+ \| [\d.]+ \| "
    for control in ("sample", "sequential"):
        row = next(x for x in section.splitlines() if x.startswith(f"| `spark` vs `{control}` |"))
        assert re.search(verdict + r"(win|loss|cannot tell) \|$", row), row
        assert f"- `{control}` ran as: full rewrite in 2 of 2 run(s)." in section
        row = next(x for x in report.splitlines() if x.startswith(f"| `{control}` ("))
        assert "offline analogue, not an LLM result" in row


def test_first_verdicts_match_the_table_and_give_the_generated_answer(tmp_path):
    import json

    import serve_fixtures  # tests/serve_fixtures.py: comparison directories without training

    from spark_jax.compare.figures import by_method, collect
    from spark_jax.compare.runner import PLAN_FILE, ComparePlan

    # Eight paired search seeds: openevolve always 20 pp below spark (a loss after Holm), eoh
    # within 0.1 pp of it either way (cannot tell).
    seeds = tuple(range(8))
    members = {}
    for s in seeds:
        members["spark", s] = [0.5 + 0.01 * s]
        members["openevolve", s] = [0.3 + 0.01 * s]
        members["eoh", s] = [0.5 + 0.01 * s + (0.001 if s % 2 else -0.001)]
    names = ("spark", "openevolve", "eoh")
    out = serve_fixtures.make_comparison(tmp_path / "cmp", members, names, seeds)
    plan = ComparePlan.from_dict(json.loads((out / PLAN_FILE).read_text()))
    methods = list(methods_lib.resolve_methods(list(plan.methods)))
    figures = collect(out, plan)
    grouped = by_method(figures)
    found = verdicts.first_verdicts(methods, grouped, plan.budget)
    assert [(n, w) for n, w, _ in found] == [("openevolve", "loss"), ("eoh", "cannot tell")]
    rows = [x for x in verdicts.against_first(methods, grouped, plan.budget) if x[:3] == "| `"]
    assert [r.rsplit("|", 2)[1].strip() for r in rows] == ["loss", "cannot tell"]

    from spark_jax.compare import tables
    from spark_jax.results import comparison, readme

    method_rows = tables.method_rows(methods, grouped, None, plan.budget)
    c = comparison.Comparison(out, plan, methods, figures, grouped, method_rows, meta={})
    answer = comparison.answer(c)
    assert answer.startswith("After Holm over the 2 methods set against `spark` (8 search seeds")
    assert "`openevolve` is below `spark`; the statistics cannot tell for the other 1." in answer
    # The README's block and the answer after the mark are rewritten; one typed by hand is not.
    page = tmp_path / "README.md"
    text = f"**Question.** Q?\n\n{comparison.ANSWER_MARK}\n**Answer.** old.\n\n"
    page.write_text(text + "<!-- generated -->\nx\n<!-- end generated -->\n")
    readme.rewrite(page, ["y"], comparison.ANSWER_MARK, "new.")
    expect = text.replace("old.", "new.") + "<!-- generated -->\ny\n<!-- end generated -->\n"
    assert page.read_text() == expect
    by_hand = "**Answer.** typed.\n\n<!-- generated -->\nx\n<!-- end generated -->\n"
    page.write_text(by_hand)
    readme.rewrite(page, ["x"], comparison.ANSWER_MARK, "new.")
    assert page.read_text() == by_hand

    # A rate's range names every method at its ends, as the table rounds them (ties included).
    def row(name, mean):
        return types.SimpleNamespace(
            method=types.SimpleNamespace(name=name), rate=types.SimpleNamespace(mean=mean)
        )

    ranged = [row("spark", 0.0), row("openevolve", 0.001), row("eoh", 0.5), row("x", None)]
    expect = "ranges from 0.00 (`spark`, `openevolve`) to 0.50 (`eoh`)"
    assert comparison.rate_range(ranged, "rate") == expect
    assert comparison.rate_range(ranged[:2], "rate") == "is 0.00 for every method"

    # Searches that ended with the same best program are named together; unique ones are not.
    def ended(method, seed, best):
        return types.SimpleNamespace(method=method, seed=seed, best_program=best)

    shared = comparison.shared_bests([ended("spark", 0, "ab" * 8), ended("eoh", 0, "ab" * 8),
                                      ended("eoh", 1, "cd" * 8), ended("x", 2, "")])  # fmt: skip
    assert shared.endswith(": `abababab` (`spark` 0, `eoh` 0).")
    assert "different program" in comparison.shared_bests([ended("spark", 0, "ab" * 8)])
