"""Import-time stand-in for tensorflow / tensorflow_datasets on a GPU machine that cannot
install TensorFlow (the project's device tool carries at most 64 MiB): dm-clrs imports them
for its dataset builder, which spark-jax never calls. Any attribute is a class that can be
subclassed, called or tested with isinstance; nothing real is computed, so any real use of
TensorFlow fails. How results/bench/clrs10-h100 was run (wheels of our pinned flax, optax,
chex, dm-haiku, jmp, ml_collections, dm-tree, libcst and dm-clrs in .whl/):

    pip install --no-index --no-deps --target /tmp/site .whl/*.whl
    PYTHONPATH=/tmp/site:$PWD/scripts/device/tf_stub:$PWD \
        SPARK_JAX="python3 -m spark_jax.cli" scripts/bench_clrs10.sh OUT --tasks quickselect,dfs
"""


class _Meta(type):
    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Stub


class Stub(metaclass=_Meta):
    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Stub


def module_getattr(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return Stub
