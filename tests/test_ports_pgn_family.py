"""Equivalence of the PGN-family seeds (the gated, triplet and `_mask` variants of CLRS's `PGN`)
with DeepMind's Haiku processors, by weight transfer as in `test_ports`.

Also checked against the official processors: each seed's MASKS_NON_EDGES claim (the official
node output ignores non-edge features exactly when the seed claims it does) and the decoders'
non-edge bias (`inf_bias`, `inf_bias_edge`) that the bridge adapter reports for the seed.
"""

from __future__ import annotations

import haiku as hk
import jax
import numpy as np
import pytest
from test_ports import B, H, N, _haiku_to_flax_names, _inputs, _transfer

from spark_jax import program as program_lib
from spark_jax.evaluation import bridge

# kind -> (triplets, gated); each seed is processors/KIND.py.
KINDS = {
    "pgn_mask": (False, False),
    "gpgn": (False, True),
    "gpgn_mask": (False, True),
    "gmpnn": (False, True),
    "triplet_mpnn": (True, False),
    "triplet_pgn": (True, False),
    "triplet_pgn_mask": (True, False),
    "triplet_gpgn": (True, True),
    "triplet_gpgn_mask": (True, True),
}
NB_TRIPLET_FTS = 8


@pytest.fixture(scope="module")
def modules(seed_paths):
    root = next(iter(seed_paths.values())).parent
    return {k: program_lib.load_module(program_lib.read_program(root / f"{k}.py")) for k in KINDS}


def _official(kind: str, use_ln: bool = True):
    return hk.transform(
        lambda **kw: bridge.official_processor_factory(kind, use_ln, NB_TRIPLET_FTS)(H)(**kw)
    )


def _port(module, use_ln: bool = True):
    return program_lib.build_flax_processor(module, H, use_ln, NB_TRIPLET_FTS)


@pytest.mark.parametrize("use_ln", [True, False])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_port_matches_official_with_same_weights(kind, use_ln, modules):
    triplets, gated = KINDS[kind]
    x = _inputs(0)
    hk_fn = _official(kind, use_ln)
    hk_params = hk_fn.init(jax.random.PRNGKey(0), **x)
    hk_nodes, hk_edges = hk_fn.apply(hk_params, None, **x)
    variables = _transfer(hk_params, triplets, gated, use_ln)
    fx_nodes, fx_edges = _port(modules[kind], use_ln).apply(variables, **x)
    assert fx_nodes.shape == hk_nodes.shape == (B, N, H)
    np.testing.assert_allclose(fx_nodes, hk_nodes, rtol=1e-5, atol=1e-5)
    assert (hk_edges is None) == (not triplets)
    if hk_edges is None:
        assert fx_edges is None
    else:
        assert fx_edges.shape == hk_edges.shape == (B, N, N, H)
        np.testing.assert_allclose(fx_edges, hk_edges, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_port_initializers_match_haiku(kind, modules):
    """Same parameter shapes; biases (zeros, gate -3) and kernel scales as hk.Linear's."""
    x = _inputs(1)
    hk_params = _official(kind).init(jax.random.PRNGKey(3), **x)
    fx_params = _port(modules[kind]).init(jax.random.PRNGKey(3), **x)["params"]
    mapping = _haiku_to_flax_names(*KINDS[kind])
    assert len(fx_params) == len(hk_params) == len(mapping)
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


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_masking_claim_matches_official(kind, modules):
    """MASKS_NON_EDGES is True exactly when the official node output ignores non-edges."""
    x = _inputs(2)
    noise = 3.0 * jax.random.normal(jax.random.PRNGKey(5), x["edge_fts"].shape) + 1.0
    perturbed = dict(x, edge_fts=x["edge_fts"] + noise * (1.0 - x["adj_mat"])[..., None])
    hk_fn = _official(kind)
    hk_params = hk_fn.init(jax.random.PRNGKey(0), **x)
    official_ignores = np.allclose(
        hk_fn.apply(hk_params, None, **x)[0], hk_fn.apply(hk_params, None, **perturbed)[0]
    )
    assert program_lib.masks_non_edges(modules[kind]) == official_ignores
    assert official_ignores == ("mpnn" not in kind)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_bridge_decoder_bias_matches_official(kind, modules):
    """The `_mask` kinds differ from their base kind only in the decoders' non-edge bias."""

    def flags():
        official = bridge.official_processor_factory(kind, True, NB_TRIPLET_FTS)(H)
        ours = bridge.module_processor_factory(modules[kind], True, NB_TRIPLET_FTS)(H)
        return (official.inf_bias, official.inf_bias_edge), (ours.inf_bias, ours.inf_bias_edge)

    official, ours = hk.transform(flags).apply({}, None)
    assert ours == official == (kind.endswith("_mask"),) * 2


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_seed_passes_feasibility(kind, modules, seed_paths, sandbox_worker, check_options):
    from spark_jax.feasibility.checker import check_program

    source = (next(iter(seed_paths.values())).parent / f"{kind}.py").read_text()
    report = check_program(source, options=check_options, worker=sandbox_worker)
    assert report.feasible, report.reason
    assert report.masks_non_edges == program_lib.masks_non_edges(modules[kind])
    assert report.params > 0 and report.macs > 0


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_seed_macs_equal_official(kind, modules):
    from spark_jax.program import macs

    ours = macs.flax_processor_macs(
        program_lib.build_flax_processor(modules[kind], 32, True, 8), 6, 32
    )
    official = macs.haiku_processor_macs(bridge.official_processor_factory(kind, True, 8), 6, 32)
    assert ours == official > 0
