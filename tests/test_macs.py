"""MACs counted from the traced computation."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import pytest

from spark_jax import program as program_lib
from spark_jax.evaluation import bridge
from spark_jax.program import macs


def test_dense_and_einsum_macs_by_hand():
    x = jax.ShapeDtypeStruct((3, 5, 7), jnp.float32)
    w = jax.ShapeDtypeStruct((7, 11), jnp.float32)
    assert macs.count_macs(lambda a, b: a @ b, x, w) == 3 * 5 * 7 * 11
    y = jax.ShapeDtypeStruct((3, 7, 2), jnp.float32)
    assert macs.count_macs(lambda a, b: jnp.einsum("bnk,bkm->bnm", a, b), x, y) == 3 * 5 * 2 * 7
    assert macs.count_macs(lambda a: jnp.tanh(a) * 2 + 1, x) == 0  # elementwise is not MACs


def test_scan_multiplies_body():
    x = jax.ShapeDtypeStruct((4, 4), jnp.float32)

    def f(a):
        return jax.lax.scan(lambda c, _: (c @ a, None), a, None, length=5)[0]

    assert macs.count_macs(f, x) == 5 * 4 * 4 * 4


def test_flax_module_macs():
    module = nn.Dense(8)
    x = jax.ShapeDtypeStruct((2, 3), jnp.float32)
    variables = jax.eval_shape(lambda a: module.init(jax.random.PRNGKey(0), a), x)
    assert macs.count_macs(module.apply, variables, x) == 2 * 3 * 8


@pytest.mark.parametrize("kind", ["triplet_gmpnn", "mpnn", "pgn"])
def test_seed_macs_equal_official(kind, seed_paths):
    module = program_lib.load_module(program_lib.read_program(seed_paths[kind]))
    ours = macs.flax_processor_macs(program_lib.build_flax_processor(module, 32, True, 8), 6, 32)
    official = macs.haiku_processor_macs(bridge.official_processor_factory(kind, True, 8), 6, 32)
    assert ours == official > 0
