"""The LLM backend records of an 'llm' editor (`editor.llm` in the search config)."""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

from spark_jax.config.checks import check_number as _check_number
from spark_jax.config.protocol import ConfigError

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "LLM_CONFIGS",
    "PRICE_KEYS",
    "CommandLLMConfig",
    "OpenAILLMConfig",
    "check_prices",
    "llm_config_from_dict",
]

DEFAULT_MAX_TOKENS = 16384
PRICE_KEYS = ("prompt_per_mtok", "completion_per_mtok")


def check_prices(prices: Any) -> None:
    """Raises ConfigError unless `prices` maps model names to {prompt_per_mtok,
    completion_per_mtok} (prices per million tokens, >= 0)."""
    if not isinstance(prices, Mapping):
        raise ConfigError(f"prices: must map model names to {PRICE_KEYS} (got {prices!r})")
    for model, entry in prices.items():
        if not isinstance(entry, Mapping) or set(entry) != set(PRICE_KEYS):
            raise ConfigError(
                f"prices.{model}: must be a mapping with exactly {', '.join(PRICE_KEYS)} "
                f"(got {entry!r})"
            )
        for key in PRICE_KEYS:
            _check_number(f"prices.{model}.{key}", entry[key], minimum=0.0)


@dataclasses.dataclass(frozen=True)
class OpenAILLMConfig:
    """An OpenAI-compatible `/v1/chat/completions` endpoint (vLLM, Ollama, llama.cpp, ...).

    The API key is read from the environment variable `api_key_env` (never stored); null
    means no authentication. `temperature` 0.7 as the paper; `max_tokens` (default 16384,
    sized for reasoning models: their thinking plus a whole program) null: no cap. An answer
    cut off at the cap is a `truncated` failure, never parsed.

    Attributes:
      kind: 'openai'.
      base_url: the endpoint's base URL, up to `/v1` (e.g. http://127.0.0.1:8000/v1).
      model: the model name the endpoint serves.
      api_key_env: the environment variable holding the API key (null: no authentication).
      temperature: sampling temperature.
      max_tokens: cap on an answer's tokens (null: no cap).
      timeout_s: per-request timeout in seconds.
      max_retries: retries after the first request for retryable failures (408, 409, 425,
        429, 5xx, connection errors, timeouts); other 4xx fail at once.
      backoff_base_s, backoff_max_s: the retry backoff's first delay (doubling each retry,
        with jitter) and its cap (which also caps a server's Retry-After).
      extra_body: extra JSON fields sent with every request (e.g. a server's sampling options).
      max_response_retries: retries of a 200 reply with malformed JSON or no choices
        before the call fails.
    """

    kind: str = "openai"
    base_url: str = ""
    model: str = ""
    api_key_env: str | None = "OPENAI_API_KEY"
    temperature: float = 0.7
    max_tokens: int | None = DEFAULT_MAX_TOKENS
    timeout_s: float = 120.0
    max_retries: int = 5
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60.0
    extra_body: Mapping[str, Any] | None = None
    max_response_retries: int = 2

    def __post_init__(self) -> None:
        for key in ("base_url", "model"):
            if not isinstance(getattr(self, key), str) or not getattr(self, key):
                raise ConfigError(
                    f"{key}: required for an 'openai' backend (got {getattr(self, key)!r})"
                )
        if self.api_key_env is not None and not isinstance(self.api_key_env, str):
            raise ConfigError(
                f"api_key_env: must be an environment variable name or null "
                f"(got {self.api_key_env!r})"
            )
        _check_number("temperature", self.temperature, minimum=0.0)
        _check_number("max_tokens", self.max_tokens, minimum=1, optional=True, integer=True)
        _check_number("timeout_s", self.timeout_s, positive=True)
        _check_number("max_retries", self.max_retries, minimum=0, integer=True)
        _check_number("max_response_retries", self.max_response_retries, minimum=0, integer=True)
        _check_number("backoff_base_s", self.backoff_base_s, minimum=0.0)
        _check_number("backoff_max_s", self.backoff_max_s, minimum=0.0)
        if self.extra_body is not None and not isinstance(self.extra_body, Mapping):
            raise ConfigError(f"extra_body: must be a mapping (got {self.extra_body!r})")


@dataclasses.dataclass(frozen=True)
class CommandLLMConfig:
    """A shell command that reads the prompt on stdin and answers on stdout.

    Attributes:
      kind: 'command'.
      command: the command line (a string, run by the shell, or a list of arguments).
      timeout_s: seconds to wait for the command's answer.
      model: the name recorded for the model behind the command (null: the command's
        program name).
    """

    kind: str = "command"
    command: str | tuple[str, ...] = ""
    timeout_s: float = 600.0
    model: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.command, (list, tuple)):
            object.__setattr__(self, "command", tuple(str(c) for c in self.command))
        if not self.command or not isinstance(self.command, (str, tuple)):
            raise ConfigError(f"command: required for a 'command' backend (got {self.command!r})")
        _check_number("timeout_s", self.timeout_s, positive=True)


LLM_CONFIGS: Mapping[str, type] = {"openai": OpenAILLMConfig, "command": CommandLLMConfig}


def llm_config_from_dict(values: Any, path: str) -> OpenAILLMConfig | CommandLLMConfig:
    """The typed backend record of a YAML `llm` mapping; errors name `path`.KEY."""
    if not isinstance(values, Mapping):
        raise ConfigError(f"{path}: expected a mapping with a 'kind' (got {values!r})")
    kind = values.get("kind")
    cls = LLM_CONFIGS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ConfigError(f"{path}.kind: must be one of {tuple(LLM_CONFIGS)} (got {kind!r})")
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise ConfigError(
            f"{path}: unknown key(s) {', '.join(f'{path}.{k}' for k in unknown)}"
            f"; known keys for kind {kind!r}: {', '.join(sorted(names))}"
        )
    try:
        return cls(**dict(values))
    except ConfigError as e:
        raise ConfigError(f"{path}.{e}") from None
