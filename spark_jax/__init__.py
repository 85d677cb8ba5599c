"""spark-jax: factor-scoped, LLM-driven architecture search over CLRS processors, in JAX/Flax.

The few names a researcher scripts against (imported lazily: `import spark_jax` is cheap)::

    import spark_jax
    report = spark_jax.check_program(source)                     # feasibility, sandboxed
    ev = spark_jax.evaluate_program(spark_jax.read_program(path), 'dfs',
                                    spark_jax.get_preset('smoke'),
                                    training=spark_jax.TrainingOptions(seeds=3))
    result = spark_jax.run_search(spark_jax.load_config('configs/tiny.yaml'), 'runs/x')

The subpackages stand on floors (a floor imports only lower ones); docs/layout.md lists every
one with its floor and job, and tests/test_layout.py holds the code to it.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "CheckOptions",
    "Evaluation",
    "FeasibilityReport",
    "Program",
    "ProtocolConfig",
    "SearchConfig",
    "SearchResult",
    "TrainingOptions",
    "check_program",
    "default_config",
    "evaluate_program",
    "get_preset",
    "load_config",
    "read_program",
    "run_search",
]

_EXPORTS = {
    "CheckOptions": "spark_jax.feasibility.checker",
    "FeasibilityReport": "spark_jax.feasibility.checker",
    "check_program": "spark_jax.feasibility.checker",
    "Evaluation": "spark_jax.families",
    "evaluate_program": "spark_jax.evaluation.evaluate",
    "TrainingOptions": "spark_jax.evaluation.training_options",
    "Program": "spark_jax.program.source",
    "read_program": "spark_jax.program.source",
    "ProtocolConfig": "spark_jax.config.protocol",
    "get_preset": "spark_jax.config.protocol",
    "SearchConfig": "spark_jax.config.search",
    "default_config": "spark_jax.config.search",
    "load_config": "spark_jax.config.search",
    "SearchResult": "spark_jax.search.loop",
    "run_search": "spark_jax.search.loop",
}


def __getattr__(name: str) -> Any:
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    attr = "load" if name == "load_config" else name
    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
