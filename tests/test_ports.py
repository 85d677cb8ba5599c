"""Equivalence of our Flax seed processors with DeepMind's Haiku processors.

Haiku weights are transferred into the Flax port, and both are applied to the same random
inputs (with sparse adjacency); node and edge outputs must agree at float32 precision.
"""

from __future__ import annotations

import haiku as hk
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from spark_jax import program as program_lib
from spark_jax.evaluation.bridge import official_processor_factory
from spark_jax.evaluation.port_params import haiku_to_flax_names as _haiku_to_flax_names

B, N, H, T = 2, 6, 16, 4


def _inputs(seed: int):
    rng = np.random.default_rng(seed)
    adj = (rng.random((B, N, N)) < 0.3).astype(np.float32)
    adj = np.maximum(adj, np.eye(N, dtype=np.float32)[None])  # CLRS adjacency has self-loops
    return dict(
        node_fts=jnp.asarray(rng.normal(size=(B, N, H)), jnp.float32),
        edge_fts=jnp.asarray(rng.normal(size=(B, N, N, H)), jnp.float32),
        graph_fts=jnp.asarray(rng.normal(size=(B, H)), jnp.float32),
        adj_mat=jnp.asarray(adj),
        hidden=jnp.asarray(rng.normal(size=(B, N, H)), jnp.float32),
    )


KINDS = {
    "triplet_gmpnn": dict(triplets=True, gated=True),
    "mpnn": dict(triplets=False, gated=False),
    "pgn": dict(triplets=False, gated=False),
}


def _transfer(hk_params, triplets: bool, gated: bool, use_ln: bool = True):
    mapping = _haiku_to_flax_names(triplets, gated, use_ln)
    flax_params = {}
    for full_name, leaves in hk_params.items():
        scope, local = full_name.split("/", 1)
        assert scope.endswith("clrs_processor"), full_name
        target = mapping[local]
        if local == "layer_norm":
            flax_params[target] = {"scale": leaves["scale"], "bias": leaves["offset"]}
        else:
            flax_params[target] = {"kernel": leaves["w"], "bias": leaves["b"]}
    assert len(flax_params) == len(mapping), sorted(set(mapping) - set(hk_params))
    return {"params": flax_params}


def _run_both(kind: str, seed_paths, use_ln: bool = True, nb_triplet_fts: int = 8, seed: int = 0):
    x = _inputs(seed)
    hk_fn = hk.transform(
        lambda **kw: official_processor_factory(kind, use_ln, nb_triplet_fts)(H)(**kw)
    )
    hk_params = hk_fn.init(jax.random.PRNGKey(seed), **x)
    hk_out = hk_fn.apply(hk_params, None, **x)

    module = program_lib.load_module(program_lib.read_program(seed_paths[kind]))
    flax_proc = program_lib.build_flax_processor(module, H, use_ln, nb_triplet_fts)
    variables = _transfer(hk_params, use_ln=use_ln, **KINDS[kind])
    fx_out = flax_proc.apply(variables, **x)
    return hk_out, fx_out, x


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("use_ln", [True, False])
def test_port_matches_official_with_same_weights(kind, use_ln, seed_paths):
    (hk_nodes, hk_edges), (fx_nodes, fx_edges), _ = _run_both(kind, seed_paths, use_ln=use_ln)
    assert fx_nodes.shape == hk_nodes.shape == (B, N, H)
    np.testing.assert_allclose(fx_nodes, hk_nodes, rtol=1e-5, atol=1e-5)
    if hk_edges is None:
        assert fx_edges is None
    else:
        assert fx_edges.shape == hk_edges.shape == (B, N, N, H)
        np.testing.assert_allclose(fx_edges, hk_edges, rtol=1e-5, atol=1e-5)


def test_pgn_port_depends_on_adjacency(seed_paths):
    # A guard against a port that silently ignores adjacency: PGN outputs must change
    # when edges are removed, and so must the official one.
    (hk_a, _), (fx_a, _), x = _run_both("pgn", seed_paths)
    assert not np.allclose(np.asarray(fx_a), np.asarray(x["hidden"]))
    x2 = dict(x, adj_mat=jnp.broadcast_to(jnp.eye(N), (B, N, N)))
    hk_fn = hk.transform(lambda **kw: official_processor_factory("pgn", True, 8)(H)(**kw))
    hk_params = hk_fn.init(jax.random.PRNGKey(0), **x2)
    module = program_lib.load_module(program_lib.read_program(seed_paths["pgn"]))
    proc = program_lib.build_flax_processor(module, H, True, 8)
    fx_b, _ = proc.apply(_transfer(hk_params, False, False), **x2)
    hk_b, _ = hk_fn.apply(hk_params, None, **x2)
    np.testing.assert_allclose(fx_b, hk_b, rtol=1e-5, atol=1e-5)
    assert not np.allclose(np.asarray(fx_b), np.asarray(fx_a), atol=1e-3)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_port_initializers_match_haiku(kind, seed_paths):
    """Same parameter shapes; biases (zeros, gate -3) and kernel scales as hk.Linear's."""
    x = _inputs(1)
    hk_fn = hk.transform(lambda **kw: official_processor_factory(kind, True, 8)(H)(**kw))
    hk_params = hk_fn.init(jax.random.PRNGKey(3), **x)
    module = program_lib.load_module(program_lib.read_program(seed_paths[kind]))
    proc = program_lib.build_flax_processor(module, H, True, 8)
    fx_params = proc.init(jax.random.PRNGKey(3), **x)["params"]
    mapping = _haiku_to_flax_names(**KINDS[kind])
    for hk_name, leaves in hk_params.items():
        local = hk_name.split("/", 1)[1]
        fx = fx_params[mapping[local]]
        if local == "layer_norm":
            np.testing.assert_array_equal(fx["scale"], leaves["scale"])
            np.testing.assert_array_equal(fx["bias"], leaves["offset"])
            continue
        assert fx["kernel"].shape == leaves["w"].shape, hk_name
        np.testing.assert_array_equal(fx["bias"], leaves["b"])
        fan_in = leaves["w"].shape[0]
        # Truncated normal (+-2 std) with stddev 1/sqrt(fan_in): empirical std ~0.88/sqrt(fan_in).
        assert np.max(np.abs(fx["kernel"])) <= 2.0 / np.sqrt(fan_in) + 1e-6
        assert 0.6 < np.std(fx["kernel"]) * np.sqrt(fan_in) < 1.1, hk_name
