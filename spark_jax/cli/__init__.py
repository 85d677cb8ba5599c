"""The `spark-jax` command line: one module per command over library functions."""

from spark_jax.cli.main import main

__all__ = ["main"]
