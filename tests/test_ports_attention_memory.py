"""Equivalence of the DeepSets, GAT, GATv2 and MemNet seeds with DeepMind's Haiku processors.

Haiku parameters are drawn at random (biases and embeddings too: MemNet's zero-initialized
embeddings would make every output zero), transferred into the Flax port, and both are
applied to the same random inputs with sparse adjacency; node and edge outputs must agree
at float32 precision. Each seed also passes the feasibility pipeline with its masking claim.
"""

from __future__ import annotations

import pathlib

import haiku as hk
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from spark_jax import program as program_lib
from spark_jax.evaluation.bridge import official_processor_factory
from spark_jax.feasibility.checker import check_program
from spark_jax.program import macs

PROCESSORS = pathlib.Path(__file__).resolve().parents[1] / "processors"
B, N, H = 2, 6, 16
# kind -> (Haiku parameter family, MASKS_NON_EDGES).
KINDS = {
    "deepsets": ("pgn", False),
    "gat": ("gat", True),
    "gat_full": ("gat", False),
    "gatv2": ("gatv2", True),
    "gatv2_full": ("gatv2", False),
    "memnet_full": ("memnet", False),
    "memnet_masked": ("memnet", True),
}
ATTENTION = ("gat", "gat_full", "gatv2", "gatv2_full")


def _inputs(seed: int, scale: float = 1.0):
    # MemNet reads truncated feature values as word ids: `scale` spreads them over more of
    # the vocabulary (ids must stay within +-H, else both implementations give NaN).
    rng = np.random.default_rng(seed)
    adj = (rng.random((B, N, N)) < 0.3).astype(np.float32)
    adj = np.maximum(adj, np.eye(N, dtype=np.float32)[None])  # CLRS adjacency has self-loops

    def normal(*shape):
        return jnp.asarray(scale * rng.normal(size=shape), jnp.float32)

    return dict(
        node_fts=normal(B, N, H),
        edge_fts=normal(B, N, N, H),
        graph_fts=normal(B, H),
        adj_mat=jnp.asarray(adj),
        hidden=normal(B, N, H),
    )


def _scale(kind: str) -> float:
    return 3.0 if kind.startswith("memnet") else 1.0


# Haiku module names (in creation order) -> the port's attribute names.
def _linear_names(family: str, nb_heads: int) -> dict[str, str]:
    if family == "pgn":
        names = ["m_1", "m_2", "m_e", "m_g", "o1", "o2"]
        extra = {"mlp/~/linear_0": "msg_mlp_1", "mlp/~/linear_1": "msg_mlp_2"}
    elif family == "gat":
        names, extra = ["m", "skip", "a_1", "a_2", "a_e", "a_g"], {}
    elif family == "gatv2":
        names = ["m", "skip", "w_1", "w_2", "w_e", "w_g"]
        names += [f"a_heads_{i}" for i in range(nb_heads)]
        extra = {}
    else:  # memnet: '~_apply/linear' (intermediate hops) is never called with one hop.
        return {"~_apply/linear_1": "output_linear", "~_apply/linear_2": "w"}
    mapping = {("linear" if i == 0 else f"linear_{i}"): name for i, name in enumerate(names)}
    return {**mapping, **extra, "layer_norm": "ln"}


def _official(kind: str, use_ln: bool, nb_heads: int):
    return hk.transform(
        lambda **kw: official_processor_factory(kind, use_ln, 8, nb_heads=nb_heads)(H)(**kw)
    )


def _randomize(params, seed: int):
    leaves, treedef = jax.tree_util.tree_flatten(params)
    keys = jax.random.split(jax.random.PRNGKey(seed), len(leaves))
    return jax.tree_util.tree_unflatten(
        treedef, [0.5 * jax.random.normal(k, x.shape, x.dtype) for k, x in zip(keys, leaves)]
    )


def _transfer(kind: str, hk_params, nb_heads: int):
    mapping = _linear_names(KINDS[kind][0], nb_heads)
    flax_params = {}
    for full_name, leaves in hk_params.items():
        scope, _, local = full_name.partition("/")
        assert scope.endswith("clrs_processor"), full_name
        if not local:  # MemNet's own parameters (embeddings, memory slots): same names.
            flax_params.update(leaves)
        elif local == "layer_norm":
            flax_params[mapping[local]] = {"scale": leaves["scale"], "bias": leaves["offset"]}
        else:
            target = {"kernel": leaves["w"]}
            if "b" in leaves:
                target["bias"] = leaves["b"]
            flax_params[mapping[local]] = target
    return {"params": flax_params}


def _flax(kind: str, use_ln: bool, nb_heads: int):
    module = program_lib.load_module(program_lib.read_program(PROCESSORS / f"{kind}.py"))
    if nb_heads == 1:
        return module, program_lib.build_flax_processor(module, H, use_ln, 8)
    return module, module.Processor(out_size=H, use_ln=use_ln, nb_triplet_fts=8, nb_heads=nb_heads)


def _run_both(kind: str, use_ln: bool = True, nb_heads: int = 1, x=None, seed: int = 0):
    x = _inputs(seed, _scale(kind)) if x is None else x
    hk_fn = _official(kind, use_ln, nb_heads)
    hk_params = _randomize(hk_fn.init(jax.random.PRNGKey(seed), **x), seed + 1)
    _, proc = _flax(kind, use_ln, nb_heads)
    fx_out = proc.apply(_transfer(kind, hk_params, nb_heads), **x)
    return hk_fn.apply(hk_params, None, **x), fx_out


def _assert_same(hk_out, fx_out):
    (hk_nodes, hk_edges), (fx_nodes, fx_edges) = hk_out, fx_out
    assert fx_nodes.shape == hk_nodes.shape == (B, N, H)
    assert np.isfinite(np.asarray(hk_nodes)).all()
    assert float(jnp.std(hk_nodes)) > 1e-3  # Not a degenerate (constant) output.
    np.testing.assert_allclose(fx_nodes, hk_nodes, rtol=1e-5, atol=1e-5)
    if hk_edges is None:
        assert fx_edges is None
    else:
        np.testing.assert_allclose(fx_edges, hk_edges, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("use_ln", [True, False])
def test_port_matches_official_with_same_weights(kind, use_ln):
    _assert_same(*_run_both(kind, use_ln=use_ln))


@pytest.mark.parametrize("kind", ATTENTION)
def test_attention_port_matches_official_with_two_heads(kind):
    _assert_same(*_run_both(kind, nb_heads=2, seed=2))


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_masking_claim_matches_adjacency_use(kind):
    """Masked kinds read the adjacency (and the official does too); the others ignore it."""
    module, _ = _flax(kind, True, 1)
    assert module.MASKS_NON_EDGES is KINDS[kind][1]
    x = _inputs(3, _scale(kind))
    sparse = dict(x, adj_mat=jnp.broadcast_to(jnp.eye(N), (B, N, N)))
    hk_a, fx_a = _run_both(kind, x=x, seed=3)
    hk_b, fx_b = _run_both(kind, x=sparse, seed=3)
    _assert_same(hk_b, fx_b)
    changed = not np.allclose(np.asarray(fx_a[0]), np.asarray(fx_b[0]), atol=1e-3)
    assert changed == KINDS[kind][1]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_port_initializers_match_haiku(kind):
    """Same parameter names and shapes; zero biases and embeddings, hk.Linear kernel scales."""
    x = _inputs(1, _scale(kind))
    hk_params = _official(kind, True, 1).init(jax.random.PRNGKey(3), **x)
    _, proc = _flax(kind, True, 1)
    fx_params = proc.init(jax.random.PRNGKey(3), **x)["params"]
    expected = _transfer(kind, hk_params, 1)["params"]
    assert jax.tree_util.tree_structure(fx_params) == jax.tree_util.tree_structure(expected)
    for path, leaf in jax.tree_util.tree_leaves_with_path(fx_params):
        name = jax.tree_util.keystr(path)
        ref = expected
        for key in path:
            ref = ref[key.key]
        assert leaf.shape == ref.shape, name
        if "kernel" not in name:  # Biases, layer norms and MemNet's embeddings.
            np.testing.assert_array_equal(leaf, ref, err_msg=name)
            continue
        fan_in = leaf.shape[0]
        # Truncated normal (+-2 std) with stddev 1/sqrt(fan_in): empirical std ~0.88/sqrt(fan_in).
        assert np.max(np.abs(leaf)) <= 2.0 / np.sqrt(fan_in) + 1e-6, name
        if leaf.size >= 64:  # Too few draws to test the spread of a [8, 1] head readout.
            assert 0.6 < np.std(leaf) * np.sqrt(fan_in) < 1.1, name


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_seed_macs_equal_official(kind):
    module = program_lib.load_module(program_lib.read_program(PROCESSORS / f"{kind}.py"))
    ours = macs.flax_processor_macs(program_lib.build_flax_processor(module, 32, True, 8), 6, 32)
    official = macs.haiku_processor_macs(official_processor_factory(kind, True, 8), 6, 32)
    assert ours == official > 0


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_seed_is_feasible(kind, sandbox_worker, check_options):
    report = check_program(
        (PROCESSORS / f"{kind}.py").read_text(), options=check_options, worker=sandbox_worker
    )
    assert report.feasible, report.reason
    assert report.masks_non_edges is KINDS[kind][1]
    assert report.params > 0 and report.macs > 0
