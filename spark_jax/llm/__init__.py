"""The LLM boundary of spark-jax: backends behind one async contract, and parsers.

  backend = make_backend({'kind': 'openai', 'base_url': 'http://127.0.0.1:8000/v1',
                          'model': 'qwen3-8b', 'api_key_env': None})
  response = await backend.complete('route', prompt, system=system)

Backend kinds built here: 'openai', 'command', 'record' (needs 'path' and an
'inner' config), 'replay' (needs 'path'). The rule-based 'offline' kind lives
elsewhere and plugs in with `register_backend('offline', factory)`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping

from spark_jax.llm import base
from spark_jax.llm.base import *  # noqa: F403 - re-exports base.__all__
from spark_jax.llm.base import LLMBackend
from spark_jax.llm.cassette import RecordBackend, ReplayBackend
from spark_jax.llm.command import CommandBackend
from spark_jax.llm.openai import OpenAIBackend

__all__ = [
    *base.__all__,  # the contract, the response record and the errors
    "OpenAIBackend",
    "RecordBackend",
    "ReplayBackend",
    "CommandBackend",
    "make_backend",
    "register_backend",
    "backend_kinds",
]

BackendFactory = Callable[[dict[str, Any]], LLMBackend]

_OPENAI_KEYS = (
    "base_url",
    "model",
    "api_key_env",
    "temperature",
    "max_tokens",
    "timeout_s",
    "max_retries",
    "backoff_base_s",
    "backoff_max_s",
    "extra_body",
    "max_response_retries",
)


def _take(
    config: dict[str, Any], kind: str, required: tuple[str, ...], optional: tuple[str, ...]
) -> dict[str, Any]:
    missing = [k for k in required if config.get(k) is None]
    if missing:
        raise ValueError(f"LLM backend {kind!r} needs config keys: {', '.join(missing)}")
    known = set(required) | set(optional)
    return {k: v for k, v in config.items() if k in known and v is not None}


def _make_openai(config: dict[str, Any]) -> LLMBackend:
    kwargs = _take(config, "openai", ("base_url", "model"), _OPENAI_KEYS)
    if "api_key_env" in config and config["api_key_env"] in (None, ""):
        kwargs["api_key_env"] = None  # Explicitly no authentication.
    return OpenAIBackend(**kwargs)


def _make_command(config: dict[str, Any]) -> LLMBackend:
    return CommandBackend(**_take(config, "command", ("command",), ("timeout_s", "model")))


def _make_record(config: dict[str, Any]) -> LLMBackend:
    _take(config, "record", ("path", "inner"), ())
    return RecordBackend(make_backend(config["inner"]), config["path"])


def _make_replay(config: dict[str, Any]) -> LLMBackend:
    return ReplayBackend(**_take(config, "replay", ("path",), ()))


_FACTORIES: dict[str, BackendFactory] = {
    "openai": _make_openai,
    "command": _make_command,
    "record": _make_record,
    "replay": _make_replay,
}


def register_backend(kind: str, factory: BackendFactory, *, replace: bool = False) -> None:
    """Adds a backend kind to `make_backend` (e.g. 'offline', defined elsewhere).

    Args:
      kind: the string key.
      factory: `(config dict) -> LLMBackend`; the dict includes 'kind'.
      replace: allow overriding an existing kind.
    """
    if kind in _FACTORIES and not replace:
        raise ValueError(f"LLM backend kind already registered: {kind}")
    _FACTORIES[kind] = factory


def backend_kinds() -> tuple[str, ...]:
    """The registered backend kinds, sorted."""
    return tuple(sorted(_FACTORIES))


def make_backend(config: Mapping[str, Any] | Any) -> LLMBackend:
    """Builds a backend from a config mapping or dataclass with a 'kind' field.

    Fields a kind does not use are ignored, and None means "use the default", so
    one config record can hold the settings of every kind (exception: an explicit
    `api_key_env` of None or '' means "no authentication"). 'offline' is only
    available once registered with `register_backend`.

    Raises:
      ValueError: 'Unknown LLM backend kind: ...' for unregistered kinds, or on
        missing required keys.
    """
    if dataclasses.is_dataclass(config) and not isinstance(config, type):
        config = dataclasses.asdict(config)
    if not isinstance(config, Mapping):
        raise TypeError(f"LLM backend config must be a mapping or dataclass, got {type(config)}")
    config = dict(config)
    kind = config.get("kind")
    factory = _FACTORIES.get(kind) if isinstance(kind, str) else None
    if factory is None:
        raise ValueError(
            f"Unknown LLM backend kind: {kind!r} (known: {', '.join(backend_kinds())})"
        )
    return factory(config)
