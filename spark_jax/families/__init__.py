"""The task-family boundary: what a family provides (`contract`) and how the search finds it
by name (`registry`), so the search runs beyond CLRS.

A task family is one benchmark domain (CLRS processors, MNIST-1D classifiers, CartPole
policies, ...). The operator, archive, search, report and compare code talk to a family only
through `TaskFamily` (`contract`: its members, the optional ones and their defaults); a
family is one plug-in folder, `spark_jax/plugins/<name>/` or a folder on
`$SPARK_JAX_FAMILIES`, imported by name the first time it is asked for (`registry`). This
package imports nothing else of `spark_jax`, so every floor can name the boundary.
"""

from spark_jax.families.contract import SPLITS, Evaluation, TaskFamily
from spark_jax.families.registry import DEFAULT_FAMILY, PATH_VARIABLE, PLUGINS, get, names, register

__all__ = [
    "DEFAULT_FAMILY",
    "PATH_VARIABLE",
    "PLUGINS",
    "SPLITS",
    "Evaluation",
    "TaskFamily",
    "get",
    "names",
    "register",
]
