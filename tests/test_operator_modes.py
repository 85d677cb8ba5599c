"""The operator modes: the config's list and `make_operator`'s agree, an unknown mode fails,
and every method's LLM calls take one path (the same call record)."""

from __future__ import annotations

import asyncio
import types

import pytest

from spark_jax.config.sections import MODES, OperatorConfig
from spark_jax.llm import OpenAIBackend
from spark_jax.llm.loopback import Fault, LoopbackServer
from spark_jax.operator.baselines import BASELINES, make_operator
from spark_jax.operator.editors import LLMEditor


def test_config_modes_are_the_operators_make_operator_builds():
    assert set(MODES) == {"spark", "rewrite", *BASELINES}


def test_unknown_mode_names_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown operator mode 'nope'; known: spark, rewrite, "):
        make_operator(None, None, types.SimpleNamespace(mode="nope"))


@pytest.mark.parametrize("mode", ["openevolve", "sample"])
def test_a_baselines_failed_call_keeps_its_latency_and_retries(mode):
    # One call path for SPARK and every baseline: a call that fails after its retries is
    # recorded with how long it took and how many requests it made (as SPARK's roles are).
    async def no_sleep(_):
        return None

    script = [Fault("503")] * 3
    with LoopbackServer(script=script) as srv:
        backend = OpenAIBackend(
            srv.base_url, "loopback", api_key_env=None, max_retries=2, sleep=no_sleep
        )
        op = make_operator(LLMEditor(backend), None, OperatorConfig(mode=mode))
        value, call = asyncio.run(op.ask("role", "a prompt", lambda text: (text, "ok")))
    assert value is None and not call.ok and call.parse_outcome == "llm_error"
    assert call.attempts == 3 and call.latency_s > 0 and "503" in call.error


def test_editor_kinds_are_one_registry_and_an_unknown_kind_names_the_known_ones():
    import dataclasses

    from spark_jax.config.sections import EDITOR_KINDS, EditorConfig
    from spark_jax.operator import editor_kinds

    assert tuple(editor_kinds.EDITORS) == EDITOR_KINDS
    assert type(editor_kinds.make_editor(EditorConfig())).__name__ == "OfflineEditor"
    bad = dataclasses.replace(EditorConfig(), kind="offline")
    object.__setattr__(bad, "kind", "oracle")  # past the config's own check
    with pytest.raises(
        ValueError, match=r"unknown editor kind 'oracle'; known kinds: offline, llm"
    ):
        editor_kinds.make_editor(bad)
