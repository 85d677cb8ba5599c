"""Configuration, owned in one place: protocol presets, the task list, and the search's
YAML config with one frozen record per section. Loading a config imports no stage code
(no sandbox, no HTTP client, no JAX).

  protocol  `ProtocolConfig` and the presets `paper` / `smoke` / `tiny`
  tasks     the static list of CLRS tasks (`check_task`, no TensorFlow import)
  search    `SearchConfig` and its sections; `load(path)`, `from_dict`, `default_config`
"""

from spark_jax.config.protocol import ConfigError, ProtocolConfig, get_preset
from spark_jax.config.tasks import TaskError, check_task

__all__ = ["ConfigError", "ProtocolConfig", "TaskError", "check_task", "get_preset"]
