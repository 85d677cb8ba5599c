"""Tests of the LLM backends against the real loopback HTTP server."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import random
import secrets
import sys
import time

import pytest

from spark_jax import llm
from spark_jax.llm import (
    CommandBackend,
    LLMError,
    LLMHTTPError,
    LLMResponse,
    LLMResponseError,
    LLMRetriesExhausted,
    OpenAIBackend,
    RecordBackend,
    ReplayBackend,
    ReplayMissError,
    make_backend,
)
from spark_jax.llm.base import CassetteError, LLMCommandError, LLMTimeoutError
from spark_jax.llm.loopback import Fault, LoopbackServer, Reply, http_date
from spark_jax.llm.openai import _parse_retry_after


class FakeSleep:
    """Records requested delays instead of sleeping."""

    def __init__(self):
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def _backend(srv: LoopbackServer, sleep: FakeSleep, **kw) -> OpenAIBackend:
    kw.setdefault("api_key_env", None)
    kw.setdefault("timeout_s", 2.0)
    return OpenAIBackend(srv.base_url, "test-model", sleep=sleep, rng=random.Random(0), **kw)


def _run(backend, role="route", prompt="hello", system=None):
    async def go():
        try:
            return await backend.complete(role, prompt, system=system)
        finally:
            await backend.aclose()

    return asyncio.run(go())


def test_success_with_usage_and_stats():
    sleep = FakeSleep()
    usage = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}
    with LoopbackServer(script=[Reply("ACTION", usage=usage)]) as srv:
        backend = _backend(srv, sleep, temperature=0.7, max_tokens=64, extra_body={"seed": 3})
        resp = _run(backend, system="be brief")
        body = srv.requests[0].body
    assert isinstance(resp, LLMResponse)
    assert (resp.text, resp.reasoning, resp.backend, resp.model) == (
        "ACTION",
        "",
        "openai",
        "test-model",
    )
    assert (resp.prompt_tokens, resp.completion_tokens, resp.attempts) == (11, 7, 1)
    assert resp.is_llm and not resp.tokens_estimated and resp.finish_reason == "stop"
    assert body["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hello"},
    ]
    assert (body["temperature"], body["max_tokens"], body["seed"]) == (0.7, 64, 3)
    stats = backend.stats()["route"]
    assert (
        stats["calls"],
        stats["failures"],
        stats["prompt_tokens"],
        stats["completion_tokens"],
    ) == (1, 0, 11, 7)
    assert stats["latency_s"] > 0 and sleep.calls == []
    with pytest.raises(dataclasses.FrozenInstanceError):
        resp.text = "x"  # type: ignore[misc]


def test_missing_usage_is_estimated():
    with LoopbackServer(script=[Reply("abcdefgh", usage=None)]) as srv:
        resp = _run(_backend(srv, FakeSleep()), prompt="x" * 40)
    assert resp.tokens_estimated and (resp.prompt_tokens, resp.completion_tokens) == (10, 2)


def test_base_url_normalization():
    assert OpenAIBackend("http://h:1/v1/", "m").base_url == "http://h:1/v1"
    assert OpenAIBackend("http://h:1", "m").base_url == "http://h:1/v1"
    assert OpenAIBackend("https://x.io/openai/v1", "m").base_url == "https://x.io/openai/v1"


def test_429_retry_after_seconds_honored():
    sleep = FakeSleep()
    with LoopbackServer(
        script=[Fault("429", retry_after=3), Fault("429", retry_after="1.5"), Reply("ok")]
    ) as srv:
        resp = _run(_backend(srv, sleep, backoff_max_s=10.0))
        assert len(srv.requests) == 3
    assert sleep.calls == [3.0, 1.5] and resp.attempts == 3 and resp.text == "ok"


def test_retry_after_http_date_capped():
    sleep = FakeSleep()
    with LoopbackServer(
        script=[Fault("503", retry_after=http_date(time.time() + 3600)), Reply("ok")]
    ) as srv:
        _run(_backend(srv, sleep, backoff_max_s=2.5))
    assert sleep.calls == [2.5]
    now = 1_000_000.0
    assert _parse_retry_after(http_date(now + 30), now) == pytest.approx(30.0)
    assert _parse_retry_after(http_date(now - 30), now) == 0.0
    assert _parse_retry_after("garbage", now) is None


def test_500_then_success_uses_jittered_backoff():
    sleep = FakeSleep()
    with LoopbackServer(script=[Fault("500"), Fault("502"), Reply("fine")]) as srv:
        resp = _run(_backend(srv, sleep, backoff_base_s=1.0, backoff_max_s=60.0))
    assert resp.text == "fine" and resp.attempts == 3
    assert 0.5 <= sleep.calls[0] <= 1.0 and 1.0 <= sleep.calls[1] <= 2.0


def test_slow_response_past_timeout_then_success():
    sleep = FakeSleep()
    with LoopbackServer(script=[Fault("slow", delay_s=1.0), Reply("late but fine")]) as srv:
        start = time.perf_counter()
        resp = _run(_backend(srv, sleep, timeout_s=0.2))
        assert time.perf_counter() - start < 1.0
        assert len(srv.requests) == 2
    assert resp.text == "late but fine" and resp.attempts == 2 and len(sleep.calls) == 1


def test_disconnect_then_success():
    with LoopbackServer(script=[Fault("disconnect"), Reply("ok")]) as srv:
        assert _run(_backend(srv, FakeSleep())).attempts == 2


def test_malformed_json_then_success():
    with LoopbackServer(script=[Fault("malformed_json"), Reply("ok")]) as srv:
        resp = _run(_backend(srv, FakeSleep()))
    assert resp.text == "ok" and resp.attempts == 2


def test_empty_choices_bounded():
    with LoopbackServer(script=[Fault("empty_choices"), Reply("ok")]) as srv:
        assert _run(_backend(srv, FakeSleep())).attempts == 2
    with LoopbackServer(script=[Fault("empty_choices")] * 5) as srv:
        backend = _backend(srv, FakeSleep(), max_retries=10, max_response_retries=2)
        with pytest.raises(LLMResponseError, match="no choices"):
            _run(backend)
        assert len(srv.requests) == 3
    assert backend.stats()["route"]["failures"] == 1


def test_retries_exhausted():
    sleep = FakeSleep()
    with LoopbackServer(script=[Fault("500", message="boom")] * 10) as srv:
        with pytest.raises(LLMRetriesExhausted, match="boom") as info:
            _run(_backend(srv, sleep, max_retries=3))
        assert len(srv.requests) == 4
    assert info.value.attempts == 4 and len(sleep.calls) == 3


@pytest.mark.parametrize("status", ["400", "401", "403", "404", "422"])
def test_non_retryable_4xx_fails_at_once(status):
    sleep = FakeSleep()
    with LoopbackServer(
        script=[Fault(status, message="model foo does not exist"), Reply("x")]
    ) as srv:
        with pytest.raises(LLMHTTPError, match="model foo does not exist") as info:
            _run(_backend(srv, sleep))
        assert len(srv.requests) == 1
    assert info.value.status_code == int(status) and sleep.calls == []


def test_reasoning_content_and_think_blocks():
    script = [
        Reply("FACTOR: OPERATOR", reasoning_content="side channel"),
        Reply("<think>inline thoughts</think>\nACTION"),
        Reply("<think>cut off while thinking ACTION", finish_reason="length"),
    ]
    with LoopbackServer(script=script) as srv:
        backend = _backend(srv, FakeSleep())

        async def go():
            out = [await backend.complete("route", f"p{i}") for i in range(3)]
            await backend.aclose()
            return out

        a, b, c = asyncio.run(go())
    assert (a.text, a.reasoning) == ("FACTOR: OPERATOR", "side channel")
    assert (b.text, b.reasoning) == ("ACTION", "inline thoughts")
    assert (c.text, c.reasoning, c.finish_reason) == ("", "cut off while thinking ACTION", "length")


def test_api_key_never_leaks(monkeypatch, caplog, capsys, tmp_path):
    key = "sk-" + secrets.token_hex(16)
    monkeypatch.setenv("SPARK_TEST_KEY", key)
    caplog.set_level(logging.DEBUG)
    cassette = tmp_path / "c.jsonl"
    script = [
        Reply("ok"),
        Fault("500", message=f"oops {key}"),
        Fault("400", message=f"invalid key {key}"),
        Reply("ok2"),
    ]
    with LoopbackServer(script=script, require_key=key) as srv:
        backend = OpenAIBackend(
            srv.base_url,
            "m",
            api_key_env="SPARK_TEST_KEY",
            sleep=FakeSleep(),
            max_retries=0,
            timeout_s=2.0,
        )
        recorder = RecordBackend(backend, cassette)
        errors: list[LLMError] = []

        async def go():
            await recorder.complete("route", "a")
            for _ in range(2):
                try:
                    await recorder.complete("route", "b")
                except LLMError as e:
                    errors.append(e)
            await recorder.complete("route", "c")
            await recorder.aclose()

        asyncio.run(go())
        seen = [r.headers.get("authorization") for r in srv.requests]
    assert seen == [f"Bearer {key}"] * 4
    assert [type(e) for e in errors] == [LLMRetriesExhausted, LLMHTTPError]
    assert "***" in str(errors[0]) and "***" in str(errors[1])
    out, err = capsys.readouterr()
    texts = (
        [str(e) for e in errors]
        + [repr(e) for e in errors]
        + [
            repr(backend),
            repr(recorder),
            json.dumps(backend.stats()),
            json.dumps(recorder.stats()),
            cassette.read_text(),
            caplog.text,
            out,
            err,
        ]
    )
    for text in texts:
        assert key not in text
    monkeypatch.delenv("SPARK_TEST_KEY")
    with pytest.raises(LLMError, match="SPARK_TEST_KEY is not set"):
        _run(OpenAIBackend("http://127.0.0.1:9/v1", "m", api_key_env="SPARK_TEST_KEY"))


def test_record_then_replay_identical(tmp_path):
    path = tmp_path / "sub" / "cassette.jsonl"
    prompts = [("route", "p1", None), ("edit", "p2", "sys"), ("route", "p1", None)]
    with LoopbackServer(
        script=[Reply("one"), Reply("two", reasoning_content="r"), Reply("three")]
    ) as srv:
        recorder = RecordBackend(_backend(srv, FakeSleep()), path)

        async def record():
            out = [await recorder.complete(r, p, system=s) for r, p, s in prompts]
            await recorder.aclose()
            return out

        recorded = asyncio.run(record())
    assert len(path.read_text().splitlines()) == 3
    entry = json.loads(path.read_text().splitlines()[1])
    assert set(entry) == {"key", "role", "prompt_sha256", "system_sha256", "response"}
    assert entry["key"].startswith("edit:")
    replay = ReplayBackend(path)

    async def play():
        return [await replay.complete(r, p, system=s) for r, p, s in prompts]

    assert asyncio.run(play()) == recorded
    assert [r.text for r in recorded] == ["one", "two", "three"]
    with pytest.raises(ReplayMissError, match=r"role='route'.*recorded 2 time"):
        asyncio.run(replay.complete("route", "p1"))
    with pytest.raises(ReplayMissError, match="role='edit' hash=[0-9a-f]{64}"):
        asyncio.run(replay.complete("edit", "p2"))  # Different system prompt.
    assert replay.stats()["route"]["failures"] == 1


def test_cassette_truncated_and_corrupt(tmp_path, caplog):
    line = json.dumps(
        {
            "key": "route:ab",
            "role": "route",
            "prompt_sha256": "x",
            "system_sha256": "y",
            "response": LLMResponse(role="route", text="t").to_dict(),
        }
    )
    truncated = tmp_path / "t.jsonl"
    truncated.write_text(line + "\n" + line[:25])
    with caplog.at_level(logging.WARNING):
        assert len(ReplayBackend(truncated)) == 1
    assert "truncated" in caplog.text
    corrupt = tmp_path / "c.jsonl"
    corrupt.write_text(line + "\n{not json\n" + line + "\n")
    with pytest.raises(CassetteError, match=r"c\.jsonl:2"):
        ReplayBackend(corrupt)


def _py(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_command_backend_echo_and_think():
    backend = CommandBackend(
        _py('import sys; print("<think>hmm</think>" + sys.stdin.read().upper())'), timeout_s=10
    )
    resp = _run(backend, prompt="act", system="sys")
    assert (resp.text, resp.reasoning, resp.backend) == ("SYS\n\nACT", "hmm", "command")
    assert resp.tokens_estimated and backend.stats()["route"]["calls"] == 1
    shell = CommandBackend(
        f'"{sys.executable}" -c "import sys; sys.stdout.write(sys.stdin.read())"'
    )
    assert _run(shell, prompt="piped").text == "piped"


def test_command_backend_timeout_and_exit_status():
    slow = CommandBackend(_py("import time; time.sleep(5)"), timeout_s=0.3)
    start = time.perf_counter()
    with pytest.raises(LLMTimeoutError, match="timed out"):
        _run(slow)
    assert time.perf_counter() - start < 2.0
    failing = CommandBackend(
        _py('import sys; sys.stderr.write("x" * 5000 + "bad things"); sys.exit(3)')
    )
    with pytest.raises(LLMCommandError, match="bad things") as info:
        _run(failing)
    assert info.value.returncode == 3 and len(info.value.stderr_tail) <= 2000


def test_make_backend_factory(tmp_path):
    openai = make_backend(
        {
            "kind": "openai",
            "base_url": "http://h:1/v1",
            "model": "m",
            "api_key_env": None,
            "max_retries": 2,
        }
    )
    assert (
        isinstance(openai, OpenAIBackend) and openai.api_key_env is None and openai.max_retries == 2
    )
    assert isinstance(make_backend({"kind": "command", "command": ["cat"]}), CommandBackend)

    @dataclasses.dataclass(frozen=True)
    class Cfg:
        kind: str = "record"
        path: str = str(tmp_path / "x.jsonl")
        inner: dict | None = None
        model: str | None = None

    rec = make_backend(Cfg(inner={"kind": "openai", "base_url": "http://h:1", "model": "m"}))
    assert isinstance(rec, RecordBackend) and rec.inner.api_key_env == "OPENAI_API_KEY"
    with pytest.raises(ValueError, match="Unknown LLM backend kind: .offline."):
        make_backend({"kind": "offline"})
    with pytest.raises(ValueError, match="needs config keys: model"):
        make_backend({"kind": "openai", "base_url": "http://h"})


def test_register_backend_hook():
    class Fixed(llm.LLMBackend):
        name = "fixed"

        async def _complete(self, role, prompt, *, system=None):
            return LLMResponse(role=role, text="ACTION", backend="fixed", is_llm=False)

    llm.register_backend("test-fixed", lambda cfg: Fixed())
    try:
        assert "test-fixed" in llm.backend_kinds()
        with pytest.raises(ValueError, match="already registered"):
            llm.register_backend("test-fixed", lambda cfg: Fixed())
        resp = asyncio.run(make_backend({"kind": "test-fixed"}).complete("route", "x"))
        assert resp.text == "ACTION" and not resp.is_llm
    finally:
        llm._FACTORIES.pop("test-fixed")


def test_public_api():
    for name in llm.__all__:
        assert hasattr(llm, name), name
    with pytest.raises(ValueError):
        asyncio.run(CommandBackend(["cat"]).complete("", "x"))


def test_default_max_tokens_leaves_room_for_reasoning_and_length_is_kept():
    sleep = FakeSleep()
    with LoopbackServer(
        script=[Reply("<think>long</think>```python\nx = 1", finish_reason="length")]
    ) as srv:
        backend = _backend(srv, sleep)
        response = _run(backend)
        body = srv.requests[-1].body
    assert backend.max_tokens == 16384 and body["max_tokens"] == 16384
    assert response.finish_reason == "length" and response.reasoning == "long"
    assert response.text.startswith("```python")
