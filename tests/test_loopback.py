"""Tests of the loopback OpenAI-compatible server, spoken to with plain httpx."""

from __future__ import annotations

import httpx
import pytest

from spark_jax.llm.loopback import Fault, LoopbackServer, Reply


def test_models_and_default_reply():
    with LoopbackServer(default_reply="hello") as srv:
        assert srv.base_url.startswith("http://127.0.0.1:") and srv.base_url.endswith("/v1")
        models = httpx.get(f"{srv.base_url}/models").json()
        assert models["data"][0]["id"] == "loopback"
        body = {"model": "m", "messages": [{"role": "user", "content": "x" * 40}]}
        data = httpx.post(f"{srv.base_url}/chat/completions", json=body).json()
        assert data["choices"][0]["message"]["content"] == "hello"
        assert data["usage"]["prompt_tokens"] == 10
        assert [r.method for r in srv.requests] == ["GET", "POST"]
        assert srv.requests[1].body == body


def test_script_then_responder_and_faults():
    def responder(body):
        return Reply("role:" + body["messages"][-1]["content"], usage=None)

    script = [
        Fault("429", retry_after=3),
        Fault("400", message="nope"),
        Fault("empty_choices"),
        Fault("malformed_json"),
        Reply("r", reasoning_content="why"),
    ]
    with LoopbackServer(script=script, responder=responder) as srv:
        url = f"{srv.base_url}/chat/completions"
        body = {"messages": [{"role": "user", "content": "route"}]}
        r = httpx.post(url, json=body)
        assert r.status_code == 429 and r.headers["retry-after"] == "3"
        r = httpx.post(url, json=body)
        assert r.status_code == 400 and r.json()["error"]["message"] == "nope"
        assert httpx.post(url, json=body).json()["choices"] == []
        with pytest.raises(ValueError):
            httpx.post(url, json=body).json()
        msg = httpx.post(url, json=body).json()["choices"][0]["message"]
        assert msg == {"role": "assistant", "content": "r", "reasoning_content": "why"}
        data = httpx.post(url, json=body).json()
        assert data["choices"][0]["message"]["content"] == "role:route"
        assert "usage" not in data


def test_require_key_and_unknown_route():
    with LoopbackServer(require_key="sekrit") as srv:
        assert httpx.get(f"{srv.base_url}/models").status_code == 401
        ok = httpx.get(f"{srv.base_url}/models", headers={"Authorization": "Bearer sekrit"})
        assert ok.status_code == 200
        bad = httpx.post(
            f"{srv.base_url}/nothing", json={}, headers={"Authorization": "Bearer sekrit"}
        )
        assert bad.status_code == 404


def test_slow_fault_times_out_client_and_disconnect():
    with LoopbackServer(script=[Fault("slow", delay_s=1.0), Fault("disconnect")]) as srv:
        url = f"{srv.base_url}/chat/completions"
        with pytest.raises(httpx.TimeoutException):
            httpx.post(url, json={"messages": []}, timeout=0.2)
        with pytest.raises(httpx.TransportError):
            httpx.post(url, json={"messages": []}, timeout=1.0)
        assert httpx.post(url, json={"messages": []}).status_code == 200
