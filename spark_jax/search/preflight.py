"""The LLM preflight: before the seed trains, one cheap call to the editor's backend.

It catches what would otherwise cost a whole seed training and then every attempt: an
unreachable URL, a rejected or unset key, a wrong model name, a server that answers
garbage. Skipped for the offline editor, for replay cassettes and when
`editor.preflight` is false. The call goes to a fresh backend with at most one retry (not
the recorded one: a cassette never holds the preflight).
"""

from __future__ import annotations

import asyncio
import dataclasses

from spark_jax.config.sections import EditorConfig, OpenAILLMConfig
from spark_jax.llm import LLMError, LLMHTTPError, make_backend
from spark_jax.search.stops import SearchUsageError

__all__ = ["PREFLIGHT_PROMPT", "needs_preflight", "preflight"]

PREFLIGHT_PROMPT = "This is a connectivity check. Answer with the single word: OK"
_HINTS = {
    401: "the server rejected the API key (check api_key_env and its value)",
    403: "the server refused access (check the API key's permissions)",
    404: "not found (check base_url, which usually ends in /v1, and the model name)",
}


def needs_preflight(editor: EditorConfig) -> bool:
    """Whether `editor` calls a live backend that the preflight should check."""
    return editor.kind == "llm" and editor.preflight and not editor.replay and bool(editor.llm)


def preflight(editor: EditorConfig) -> None:
    """Makes one call per backend; raises SearchUsageError naming the problem."""
    if not needs_preflight(editor):
        return
    llm = editor.llm
    where = llm.model or llm.kind
    if isinstance(llm, OpenAILLMConfig):
        llm = dataclasses.replace(llm, max_retries=min(llm.max_retries, 1))
        where = f"model {llm.model!r} at {llm.base_url}"
    try:
        text = asyncio.run(_ask(llm))
    except LLMHTTPError as e:
        hint = _HINTS.get(e.status_code, "")
        raise SearchUsageError(
            f"LLM preflight failed for {where}: {_one_line(str(e))}" + (f"; {hint}" if hint else "")
        ) from None
    except LLMError as e:
        raise SearchUsageError(f"LLM preflight failed for {where}: {_one_line(str(e))}") from None
    if not text.strip():
        raise SearchUsageError(
            f"LLM preflight failed for {where}: the answer had no text (a reasoning model "
            "may need a larger max_tokens, or the server returns an unusable body)"
        )


async def _ask(llm) -> str:
    backend = make_backend(llm)
    try:
        response = await backend.complete("preflight", PREFLIGHT_PROMPT)
        if response.finish_reason == "length":
            return ""
        return response.text
    finally:
        await backend.aclose()


def _one_line(text: str) -> str:
    return " ".join(text.split())[:400]
