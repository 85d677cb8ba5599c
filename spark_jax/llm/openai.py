"""OpenAI-compatible chat-completions backend over httpx, with retries and backoff.

`base_url` is the API root *including* its version prefix, e.g.
`http://127.0.0.1:8000/v1` or `https://api.openai.com/v1`; requests go to
`{base_url}/chat/completions`. A trailing '/' is dropped, and a bare host with no
path at all (`http://host:8000`) gets '/v1' appended.

The API key is read from the environment variable `api_key_env` at request time
only; it is never stored on the object, and any error text that could echo it is
redacted to '***'. Pass `api_key_env=None` for servers without authentication.
"""

from __future__ import annotations

import asyncio
import dataclasses
import email.utils
import json
import logging
import os
import random
import time
import urllib.parse
from typing import Any, Awaitable, Callable

import httpx

from spark_jax.llm import _text
from spark_jax.llm.base import (
    LLMBackend,
    LLMError,
    LLMHTTPError,
    LLMResponse,
    LLMResponseError,
    LLMRetriesExhausted,
)

__all__ = ["OpenAIBackend", "RETRYABLE_STATUS"]

_log = logging.getLogger(__name__)

# 408 Request Timeout, 409 Conflict, 425 Too Early, 429 Too Many Requests, and all 5xx.
RETRYABLE_STATUS = frozenset({408, 409, 425, 429})


def _normalize_base_url(base_url: str) -> str:
    url = base_url.rstrip("/")
    if urllib.parse.urlsplit(url).path in ("", "/"):
        url += "/v1"
    return url


def _parse_retry_after(value: str | None, now: float) -> float | None:
    """Seconds to wait from a Retry-After header (delta-seconds or HTTP-date)."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - now)


def _server_message(response: httpx.Response) -> str:
    """The error message from an OpenAI-style error body, else the body text."""
    try:
        data = response.json()
    except ValueError:
        return response.text.strip()[:500] or response.reason_phrase
    if isinstance(data, dict):
        err = data.get("error", data.get("detail", data.get("message")))
        if isinstance(err, dict):
            err = err.get("message", err)
        if err:
            return str(err)[:500]
    return json.dumps(data)[:500]


class OpenAIBackend(LLMBackend):
    """Calls `POST {base_url}/chat/completions`.

    Retries (exponential backoff with jitter, or the server's Retry-After capped at
    `backoff_max_s`) on 408/409/425/429/5xx, connection errors and timeouts, up to
    `max_retries` retries (so at most `max_retries + 1` requests). A 200 reply with
    malformed JSON or no choices is retried at most `max_response_retries` times,
    after which `LLMResponseError` is raised. Other 4xx fail at once with
    `LLMHTTPError` carrying the server's message.

    Reasoning models: `message.reasoning_content` (or `message.reasoning`) and any
    `<think>...</think>` blocks in `content` go to `LLMResponse.reasoning`.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key_env: str | None = "OPENAI_API_KEY",
        temperature: float = 0.7,
        max_tokens: int | None = 16384,
        timeout_s: float = 120.0,
        max_retries: int = 5,
        backoff_base_s: float = 1.0,
        backoff_max_s: float = 60.0,
        extra_body: dict[str, Any] | None = None,
        *,
        max_response_retries: int = 2,
        sleep: Callable[[float], Awaitable[Any]] | None = None,
        rng: random.Random | None = None,
    ):
        """Initializes the backend (no network activity).

        Args:
          base_url: API root including '/v1' (see module docstring).
          model: model name sent in the request.
          api_key_env: name of the env var holding the key, or None for no auth.
          temperature: sampling temperature.
          max_tokens: completion cap sent as `max_tokens` (None: not sent); the default
            leaves room for a reasoning model's thinking plus a whole program. A reply
            with finish_reason 'length' is returned as is; the editor counts it truncated.
          timeout_s: per-request timeout (connect, read, write, pool).
          max_retries: retries after the first request for retryable failures.
          backoff_base_s: first backoff delay; doubles each retry.
          backoff_max_s: cap on any delay, Retry-After included.
          extra_body: extra JSON fields merged into every request body.
          max_response_retries: retries allowed for malformed 200 replies.
          sleep: coroutine function used to wait (default `asyncio.sleep`).
          rng: random source for jitter (default: a fresh `random.Random()`).
        """
        if max_retries < 0 or max_response_retries < 0:
            raise ValueError("max_retries and max_response_retries must be >= 0")
        if timeout_s <= 0:
            raise ValueError("timeout_s must be > 0")
        self.base_url = _normalize_base_url(base_url)
        self.model = model
        self.api_key_env = api_key_env
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.max_response_retries = max_response_retries
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self.extra_body = dict(extra_body or {})
        self._sleep = sleep or asyncio.sleep
        self._rng = rng or random.Random()
        self._client: httpx.AsyncClient | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    @property
    def name(self) -> str:
        return f"openai:{self.model}"

    def __repr__(self) -> str:
        return (
            f"OpenAIBackend(base_url={self.base_url!r}, model={self.model!r}, "
            f"api_key_env={self.api_key_env!r})"
        )

    def _api_key(self) -> str | None:
        if self.api_key_env is None:
            return None
        key = os.environ.get(self.api_key_env)
        if not key:
            raise LLMError(
                f"environment variable {self.api_key_env} is not set; set it, "
                "or set `api_key_env: null` in editor.llm for a server without authentication"
            )
        return key

    def _get_client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop or self._client.is_closed:
            # A client is bound to the loop it first ran on; make a new one per loop.
            self._client = httpx.AsyncClient(timeout=httpx.Timeout(self.timeout_s))
            self._client_loop = loop
        return self._client

    async def aclose(self) -> None:
        client, self._client, self._client_loop = self._client, None, None
        if client is not None and not client.is_closed:
            try:
                await client.aclose()
            except RuntimeError:  # Created on another, now closed, event loop.
                pass

    def _backoff(self, retry: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.backoff_max_s)
        delay = min(self.backoff_max_s, self.backoff_base_s * (2 ** (retry - 1)))
        return delay * (0.5 + 0.5 * self._rng.random())

    def _body(self, prompt: str, system: str | None) -> dict[str, Any]:
        messages = []
        if system:
            messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": prompt})
        body: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.temperature,
        }
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        body.update(self.extra_body)
        return body

    def _parse(
        self, role: str, prompt: str, system: str | None, response: httpx.Response
    ) -> LLMResponse:
        """Turns a 200 reply into an LLMResponse; raises LLMResponseError if unusable."""
        try:
            data = response.json()
        except ValueError as e:
            raise LLMResponseError(f"malformed JSON in reply ({type(e).__name__})") from None
        if not isinstance(data, dict):
            raise LLMResponseError("reply JSON is not an object")
        choices = data.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise LLMResponseError("reply has no choices")
        choice = choices[0]
        message = choice.get("message")
        if not isinstance(message, dict):
            raise LLMResponseError("first choice has no message")
        content = message.get("content") or ""
        if not isinstance(content, str):
            raise LLMResponseError("message content is not a string")
        answer, think = _text.split_reasoning(content)
        side = message.get("reasoning_content") or message.get("reasoning") or ""
        reasoning = "\n\n".join(p for p in (str(side).strip(), think) if p)
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        p_tok, c_tok = usage.get("prompt_tokens"), usage.get("completion_tokens")
        estimated = not (isinstance(p_tok, int) and isinstance(c_tok, int))
        if estimated:
            p_tok = _text.estimate_tokens((system or "") + prompt)
            c_tok = _text.estimate_tokens(content + str(side))
        return LLMResponse(
            role=role,
            text=answer,
            reasoning=reasoning,
            model=str(data.get("model") or self.model),
            backend="openai",
            prompt_tokens=int(p_tok),
            completion_tokens=int(c_tok),
            tokens_estimated=estimated,
            finish_reason=str(choice.get("finish_reason") or ""),
        )

    async def _complete(self, role: str, prompt: str, *, system: str | None = None) -> LLMResponse:
        key = self._api_key()
        headers = {"Content-Type": "application/json"}
        if key is not None:
            headers["Authorization"] = f"Bearer {key}"
        url = f"{self.base_url}/chat/completions"
        body = self._body(prompt, system)
        client = self._get_client()
        start = time.perf_counter()
        attempts = retries = response_errors = 0
        while True:
            attempts += 1
            retry_after: float | None = None
            try:
                reply = await client.post(url, json=body, headers=headers)
            except httpx.TimeoutException as e:
                error = f"timeout after {self.timeout_s}s ({type(e).__name__})"
            except httpx.TransportError as e:
                error = _text.redact(f"connection error: {type(e).__name__}: {e}", key)
            else:
                status = reply.status_code
                if status == 200:
                    try:
                        parsed = self._parse(role, prompt, system, reply)
                    except LLMResponseError as e:
                        response_errors += 1
                        if response_errors > self.max_response_retries:
                            failed = LLMResponseError(f"{e} (after {attempts} attempts)")
                            failed.attempts = attempts
                            raise failed from None
                        error = str(e)
                    else:
                        return _with_timing(parsed, time.perf_counter() - start, attempts)
                elif status in RETRYABLE_STATUS or status >= 500:
                    error = _text.redact(f"HTTP {status}: {_server_message(reply)}", key)
                    retry_after = _parse_retry_after(reply.headers.get("retry-after"), time.time())
                else:
                    refused = LLMHTTPError(status, _text.redact(_server_message(reply), key))
                    refused.attempts = attempts
                    raise refused
            if retries >= self.max_retries:
                raise LLMRetriesExhausted(attempts, error)
            retries += 1
            delay = self._backoff(retries, retry_after)
            _log.warning(
                "LLM %s (role=%s) attempt %d failed: %s; retrying in %.2fs",
                self.name,
                role,
                attempts,
                error,
                delay,
            )
            await self._sleep(delay)


def _with_timing(response: LLMResponse, latency_s: float, attempts: int) -> LLMResponse:
    return dataclasses.replace(response, latency_s=latency_s, attempts=attempts)
