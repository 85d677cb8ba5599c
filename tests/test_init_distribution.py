"""The port draws its initial parameters from DeepMind's distribution (issue 50 item 7).

results/port-vs-official explains the trained gap between our Flax Triplet-GMPNN and
DeepMind's (`official:triplet_gmpnn`) by "the same init distribution, different random
streams". This checks it: both whole models (encoders, processor, decoders) are built as
`train_and_score` builds them at the `smoke` protocol's settings (hidden 64, 8 triplet
features, layer norm, `xavier_on_scalars` encoders) on `articulation_points` (the task with
the largest gap), initialised over many keys at once (`jax.vmap` over the init), and each
parameter is compared leaf by leaf (the official tree renamed into the port's): constants
(biases, layer norm, the gate's -3 bias) equal, random leaves alike in mean, standard
deviation and kurtosis (within 5 standard errors) and not told apart by a two-sample
Kolmogorov-Smirnov test. The encoders draw the very same values from the same key; the
processor's and the decoders' draws differ (the lifted Flax module consumes Haiku's key
sequence in its own way) but come from one distribution. A check that lets a differently
scaled initialiser through would prove nothing, so the same check must reject Flax's default
(`lecun_normal`, truncation-corrected) against Haiku's.
"""

from __future__ import annotations

import math

import jax
import numpy as np
import pytest
from scipy import stats

from spark_jax import program as program_lib
from spark_jax.config import protocol
from spark_jax.evaluation import bridge, data
from spark_jax.evaluation.port_params import PORT_SCOPE, haiku_to_flax_names, official_to_port
from spark_jax.evaluation.train import Trainer

TASK, PRESET, KEYS = "articulation_points", "smoke", 128
Z = 5.0  # standard errors allowed between two moments
KS_ALPHA = 1e-4  # per leaf: about 100 leaves, one false alarm in 100 runs of fresh keys at most


def _init_many(trainer: Trainer, features, keys) -> dict:
    """The model's parameters for every key: each leaf gets a leading axis of len(keys)."""
    return jax.device_get(jax.jit(jax.vmap(lambda k: trainer._init(k, features)))(keys))


@pytest.fixture(scope="module")
def draws(seed_paths):
    cfg = protocol.get_preset(PRESET)
    task_data = data.make_task_data(TASK, cfg, seed=0)
    fb = next(task_data.train)
    prog = program_lib.read_program(seed_paths["triplet_gmpnn"])
    ours = Trainer(
        task_data.spec, fb, bridge.processor_factory(prog, cfg.use_ln, cfg.nb_triplet_fts), cfg
    )
    official = Trainer(
        task_data.spec,
        fb,
        bridge.official_processor_factory("triplet_gmpnn", cfg.use_ln, cfg.nb_triplet_fts),
        cfg,
    )
    keys = jax.random.split(jax.random.PRNGKey(0), KEYS)
    mapping = haiku_to_flax_names(triplets=True, gated=True, use_ln=cfg.use_ln)
    theirs = official_to_port(_init_many(official, fb.features, keys), mapping)
    return cfg, _init_many(ours, fb.features, keys), theirs


def _leaves(tree: dict) -> dict[str, np.ndarray]:
    return {
        f"{m}/{leaf}": np.asarray(v) for m, leaves in tree.items() for leaf, v in leaves.items()
    }


def _moments_differ(a: np.ndarray, b: np.ndarray) -> list[str]:
    """What separates two samples of one parameter: mean, std or kurtosis beyond Z standard
    errors, or the two-sample KS test at KS_ALPHA; [] when nothing does."""
    a, b = a.ravel().astype(np.float64), b.ravel().astype(np.float64)
    found = []
    sa, sb = a.std(ddof=1), b.std(ddof=1)
    if abs(a.mean() - b.mean()) > Z * math.sqrt(sa**2 / a.size + sb**2 / b.size):
        found.append(f"mean {a.mean():.5f} vs {b.mean():.5f}")
    if abs(sa - sb) > Z * math.sqrt(sa**2 / (2 * a.size) + sb**2 / (2 * b.size)):
        found.append(f"std {sa:.5f} vs {sb:.5f}")
    ka, kb = stats.kurtosis(a), stats.kurtosis(b)
    if abs(ka - kb) > Z * math.sqrt(24 / a.size + 24 / b.size):
        found.append(f"excess kurtosis {ka:.3f} vs {kb:.3f}")
    p = stats.ks_2samp(a, b).pvalue
    if p < KS_ALPHA:
        found.append(f"KS p = {p:.2g}")
    return found


def test_same_tree_same_shapes(draws):
    _, ours, theirs = draws
    mine, other = _leaves(ours), _leaves(theirs)
    assert set(mine) == set(other)
    assert any(k.startswith(PORT_SCOPE) for k in mine)
    assert {k: v.shape for k, v in mine.items()} == {k: v.shape for k, v in other.items()}


def test_encoders_draw_the_same_values_from_the_same_key(draws):
    _, ours, theirs = draws
    enc = [k for k in _leaves(ours) if "_enc_" in k]
    assert enc
    for name in enc:
        np.testing.assert_array_equal(_leaves(ours)[name], _leaves(theirs)[name], err_msg=name)


def test_every_parameter_is_drawn_from_the_same_distribution(draws):
    cfg, ours, theirs = draws
    mine, other = _leaves(ours), _leaves(theirs)
    constant, random, same_values = [], [], []
    for name in sorted(mine):
        a, b = mine[name], other[name]
        if np.all(a == a.ravel()[0]) and np.all(b == b.ravel()[0]):
            constant.append(name)
            assert a.ravel()[0] == b.ravel()[0], name  # zeros, ones, the gate's -3
            continue
        random.append(name)
        same_values += [name] if np.array_equal(a, b) else []
        assert not _moments_differ(a, b), f"{name}: {_moments_differ(a, b)}"
    processor = [n for n in random if n.startswith(PORT_SCOPE)]
    decoders = [n for n in random if "_dec_" in n]
    # The processor's 19 linears draw kernels (m_1, m_2, m_e, m_g, o1, o2; 7 triplet linears
    # and o3; 3 gates; the message MLP's 2); the decoders draw too.
    assert len(processor) == 19 and decoders
    # The processor and decoders draw other values than DeepMind's from the same key: the
    # streams differ, the distribution does not.
    assert not set(same_values) & set(processor + decoders)
    assert cfg.hidden_size == 64 and cfg.nb_triplet_fts == 8 and cfg.use_ln


def test_the_check_rejects_another_initialiser(draws):
    # Flax's default kernel init (lecun_normal: truncated normal rescaled so its std is
    # 1/sqrt(fan_in)) against Haiku's (truncated normal whose untruncated std is
    # 1/sqrt(fan_in)): about 14% apart in std. The check must see it.
    _, _, theirs = draws
    name = PORT_SCOPE + "m_1"
    haiku = theirs[name]["kernel"]
    fan_in, fan_out = haiku.shape[1:]
    keys = jax.random.split(jax.random.PRNGKey(1), KEYS)
    init = jax.nn.initializers.lecun_normal()
    flax = np.stack([np.asarray(init(k, (fan_in, fan_out))) for k in keys[:16]])
    assert any(w.startswith("std") for w in _moments_differ(flax, haiku[:16]))
