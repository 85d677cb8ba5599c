"""The LLM preflight and the editor-failure cap, against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import dataclasses
import itertools
import socket

import fault_harness as harness
import pytest

from spark_jax import cli
from spark_jax.config.sections import EditorConfig, OpenAILLMConfig
from spark_jax.llm.loopback import Fault, LoopbackServer, Reply
from spark_jax.search import loop, preflight
from spark_jax.search.rundb import RunDB

SEED = harness.ROOT / "processors" / "mpnn.py"


def _llm(base_url: str, **changes) -> OpenAILLMConfig:
    values = dict(
        base_url=base_url,
        model="loopback",
        api_key_env=None,
        max_retries=0,
        backoff_base_s=0.0,
        backoff_max_s=0.0,
        max_response_retries=0,
        timeout_s=10.0,
    )
    return OpenAILLMConfig(**{**values, **changes})


def _editor(base_url: str, *, streak: int = 2, **changes) -> EditorConfig:
    return EditorConfig(kind="llm", llm=_llm(base_url, **changes), max_consecutive_failures=streak)


def _dead_url() -> str:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def test_preflight_passes_on_a_working_endpoint():
    with LoopbackServer(default_reply="OK") as srv:
        preflight.preflight(_editor(srv.base_url))
        assert len(srv.requests) == 1
        assert preflight.PREFLIGHT_PROMPT in str(srv.requests[0].body)


@pytest.mark.parametrize(
    "script,changes,words",
    [
        ([], dict(api_key_env="SPARK_JAX_TEST_UNSET_KEY"), "SPARK_JAX_TEST_UNSET_KEY is not set"),
        ([Fault("404", message="no such model")], {}, "check base_url"),
        ([Fault("malformed_json")] * 3, {}, "LLM preflight failed"),
        ([Fault("empty_choices")] * 3, {}, "LLM preflight failed"),
        ([Reply("")], {}, "had no text"),
        ([Fault("503")] * 3, {}, "HTTP 503"),
    ],
    ids=["unset-key", "404", "garbage", "no-choices", "empty", "503"],
)
def test_preflight_names_the_problem(monkeypatch, script, changes, words):
    monkeypatch.delenv("SPARK_JAX_TEST_UNSET_KEY", raising=False)
    with LoopbackServer(script=script, default_reply="OK") as srv:
        with pytest.raises(loop.SearchUsageError, match="LLM preflight failed") as info:
            preflight.preflight(_editor(srv.base_url, **changes))
    assert words in str(info.value) and "\n" not in str(info.value)


def test_preflight_rejected_key():
    with LoopbackServer(require_key="right") as srv:
        with pytest.raises(loop.SearchUsageError, match="rejected the API key"):
            preflight.preflight(_editor(srv.base_url, api_key_env="PATH"))


def test_preflight_skipped_for_offline_and_replay(tmp_path):
    assert not preflight.needs_preflight(EditorConfig())
    replay = EditorConfig(kind="llm", replay=str(tmp_path / "c.jsonl"))
    assert not preflight.needs_preflight(replay)
    assert not preflight.needs_preflight(dataclasses.replace(_editor("x"), preflight=False))


def test_dead_endpoint_stops_before_anything_is_written(tmp_path, capsys):
    config = tmp_path / "c.yaml"
    config.write_text(
        f"task: bfs\npreset: tiny\nseed_program: {SEED}\n"
        f"editor: {{kind: llm, llm: {{kind: openai, base_url: '{_dead_url()}', model: m, "
        "api_key_env: null, max_retries: 0}}\n"
    )
    run_dir = tmp_path / "run"
    code = cli.main(["search", "--config", str(config), "--run-dir", str(run_dir), "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "LLM preflight failed" in err[0]
    assert "connection error" in err[0] and not run_dir.exists()


def _good_replies():
    """An answer every role can parse: a factor word and a whole program, each one new."""
    source = SEED.read_text()
    counter = itertools.count()

    def reply(body) -> str:
        n = next(counter)
        program = source.replace("# SPARK:END ACTION", f"    # variant {n}\n# SPARK:END ACTION")
        return f"ACTION\n\n```python\n{program}```\n"

    return reply


def test_endpoint_dies_then_comes_back(tmp_path):
    """Dead for two proposals: the run stops (exit 1 at the CLI), resumably; back: it ends."""
    run_dir = tmp_path / "run"
    per_failed_proposal = 5  # 3 router tries, the directive, the edit
    script = [Reply("OK")] + [Fault("503")] * (2 * per_failed_proposal)
    with LoopbackServer(script=script, default_reply=_good_replies()) as srv:
        editor = _editor(srv.base_url, streak=2)
        with pytest.raises(loop.EditorFailing, match="2 proposals in a row") as info:
            harness.run(run_dir, editor=editor)
        assert f"--resume {run_dir}" in str(info.value)
        with RunDB.open(run_dir / "run.db") as db:
            assert db.get_meta("stopped")["reason"] == "EditorFailing"
            failed = [c for c in db.llm_calls() if not c["ok"]]
            assert failed and all(c["latency_s"] > 0 and c["attempts"] == 1 for c in failed)
        harness.run(run_dir, resume=True, editor=editor)  # the endpoint is back
    with RunDB.open(run_dir / "run.db") as db:
        assert db.get_meta("finished_at") is not None
        statuses = [p.status for p in db.proposals()]
        assert statuses[:2] == ["failed", "failed"] and "failed" not in statuses[2:]


def test_endpoint_blip_is_retried_and_recorded(tmp_path):
    """One 503 in the middle of a run: the retry covers it and the record says 2 attempts."""
    replies = _good_replies()
    seen = itertools.count()

    def responder(body):
        return Fault("503") if next(seen) == 4 else Reply(replies(body))

    with LoopbackServer(responder=responder) as srv:
        editor = _editor(srv.base_url, max_retries=2)
        harness.run(tmp_path / "run", editor=editor, max_attempts=3, budget=3)
    with RunDB.open(tmp_path / "run" / "run.db") as db:
        calls = db.llm_calls()
        assert db.get_meta("finished_at") is not None
        assert [c["attempts"] for c in calls].count(2) == 1
        assert all(c["ok"] for c in calls)


@pytest.mark.parametrize(
    "error,code",
    [(loop.EditorFailing("the LLM editor produced no program"), 1), (loop.SearchError("x"), 1)],
)
def test_cli_exit_codes_of_search_stops(monkeypatch, tmp_path, capsys, error, code):
    def stop(*args, **kwargs):
        raise error

    monkeypatch.setattr(loop, "run_search", stop)
    argv = ["search", "--config", str(harness.TINY), "--run-dir", str(tmp_path / "r")]
    assert cli.main([*argv, "--no-progress"]) == code
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {error}"]
