"""Tests for the offline editor's transform catalogue (spark_jax.offline.transforms).

Every transform x every seed it applies to: the child keeps the template, edits only its
factor's region, passes the static safety policy, loads, runs on a small random graph with
the right shapes, trains (30 Adam steps lower a regression loss) and, for programs that
claim masking, keeps non-edge features out of the node output. Then a CLRS check: the
child trains inside `clrs.models.BaselineModel` on `bfs` (a subset by default; every
transform x seed under `-m slow`).
"""

from __future__ import annotations

import concurrent.futures
import functools
import os
import pathlib
import random

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from jax.flatten_util import ravel_pytree

from spark_jax import program as program_lib
from spark_jax.config.protocol import get_preset
from spark_jax.evaluation import bridge, data, evaluate
from spark_jax.evaluation.train import Trainer
from spark_jax.feasibility import policy as safety
from spark_jax.operator.offline import (
    CATALOGUE,
    MAGNITUDES,
    Transform,
    TransformNotApplicable,
    cst_util,
    get_transform,
    transforms_for,
)
from spark_jax.program import locality, regions

ROOT = pathlib.Path(__file__).resolve().parents[1]
SEEDS = ("triplet_gmpnn", "mpnn", "pgn")
SOURCES = {s: (ROOT / "processors" / f"{s}.py").read_text() for s in SEEDS}
CASES = [(t.name, s) for t in CATALOGUE for s in SEEDS if t.applies(SOURCES[s])]
B, N, H, T = 2, 5, 16, 4  # batch, nodes, width, triplet width (the tiny preset's)
STEPS = 30


@functools.lru_cache(maxsize=None)
def child(name: str, seed: str) -> str:
    return get_transform(name).apply(SOURCES[seed], random.Random(0))


def _inputs():
    rs = np.random.RandomState(0)
    node = rs.randn(B, N, H).astype(np.float32)
    edge = rs.randn(B, N, N, H).astype(np.float32)
    graph = rs.randn(B, H).astype(np.float32)
    hidden = rs.randn(B, N, H).astype(np.float32)
    adj = (rs.rand(B, N, N) < 0.35).astype(np.float32)
    adj = np.maximum(adj, np.eye(N, dtype=np.float32)[None])  # sparse, with self-loops
    assert 0 < (adj == 0).sum() and adj.shape == (B, N, N)
    # The same edge features with noise on adjacency-defined non-edges only.
    noise = np.where(adj[..., None] == 0, 10.0 * rs.randn(B, N, N, H), 0.0)
    return (node, edge, graph, adj, hidden), (edge + noise).astype(np.float32)


INPUTS, EDGE_NON_EDGES_PERTURBED = _inputs()


def flax_train(source: str):
    """Loads `source`, inits and trains its processor; returns (module, out, losses, leak).

    out: the node/edge outputs at init; losses: the 30 step losses; leak: max |change| of
    the node output when non-edge features are perturbed (at init).
    """
    module = program_lib.load_module(program_lib.Program(source, "candidate"))
    proc = program_lib.build_flax_processor(module, H, use_ln=True, nb_triplet_fts=T)
    params = proc.init(jax.random.PRNGKey(0), *INPUTS)
    flat, unravel = ravel_pytree(params)  # Adam on one flat vector: a smaller step to compile
    out_shapes = jax.eval_shape(lambda p: proc.apply(p, *INPUTS), params)
    node_target = jax.random.normal(jax.random.PRNGKey(1), out_shapes[0].shape)
    edge_target = (
        None
        if out_shapes[1] is None
        else jax.random.normal(jax.random.PRNGKey(2), out_shapes[1].shape)
    )

    def loss_fn(p):
        out = proc.apply(unravel(p), *INPUTS)
        loss = jnp.mean((out[0] - node_target) ** 2)
        if edge_target is not None:
            loss = loss + jnp.mean((out[1] - edge_target) ** 2)
        return loss, out

    opt = optax.adam(1e-2)

    @jax.jit
    def step(p, state):
        (loss, out), grads = jax.value_and_grad(loss_fn, has_aux=True)(p)
        updates, state = opt.update(grads, state, p)
        return optax.apply_updates(p, updates), state, loss, out

    node, edge, graph, adj, hidden = INPUTS
    perturbed = proc.apply(params, node, EDGE_NON_EDGES_PERTURBED, graph, adj, hidden)[0]
    leak = float(jnp.max(jnp.abs(proc.apply(params, *INPUTS)[0] - perturbed)))
    state, losses, first_out = opt.init(flat), [], None
    for _ in range(STEPS):
        flat, state, loss, out = step(flat, state)
        first_out = out if first_out is None else first_out
        losses.append(float(loss))
    return module, first_out, losses, leak


# The catalogue.


def test_catalogue_size_split_and_records():
    assert len(CATALOGUE) >= 20
    for factor in regions.FACTORS:
        assert len(transforms_for(factor)) >= 8, factor
    assert len({t.name for t in CATALOGUE}) == len(CATALOGUE)
    for t in CATALOGUE:
        assert t.magnitude in MAGNITUDES and t.factor in regions.FACTORS
        assert t.name.startswith("op_" if t.factor == "OPERATOR" else "act_"), t.name
        assert t.description.endswith(".") and "\n" not in t.description
        assert t.description.count(". ") == 0, f"{t.name}: one sentence"


def test_every_transform_applies_to_some_seed():
    covered = {name for name, _ in CASES}
    assert covered == {t.name for t in CATALOGUE}, {t.name for t in CATALOGUE} - covered
    for seed in SEEDS:  # every seed gets both kinds of edit
        assert {get_transform(n).factor for n, s in CASES if s == seed} == set(regions.FACTORS)


def test_lookups_and_errors():
    with pytest.raises(ValueError, match="Unexpected transform"):
        get_transform("op_nope")
    with pytest.raises(ValueError, match="Unexpected factor"):
        transforms_for("BOTH")
    with pytest.raises(TransformNotApplicable, match="self.o3"):
        get_transform("op_widen_triplets").apply(SOURCES["mpnn"], random.Random(0))
    with pytest.raises(TransformNotApplicable, match="override"):
        get_transform("act_adjacency_masking").apply(SOURCES["pgn"], random.Random(0))
    broken = SOURCES["mpnn"].replace("# SPARK:END ACTION", "# SPARK:END ACTON")
    with pytest.raises(TransformNotApplicable, match="bad region tags"):
        get_transform("act_residual_update").apply(broken, random.Random(0))
    assert not get_transform("act_residual_update").applies(broken)
    unchanged = Transform(
        name="act_noop",
        factor="ACTION",
        description="x.",
        magnitude="small",
        edit=lambda ctx, rng: ctx.action.stmts,
    )
    with pytest.raises(TransformNotApplicable, match="no change"):
        unchanged.apply(SOURCES["mpnn"], random.Random(0))


def test_masking_unsafe_transforms_never_apply_to_masked_programs():
    op = get_transform("act_residual_update")
    unsafe = Transform(
        name="act_unsafe",
        factor="ACTION",
        description="x.",
        magnitude="small",
        edit=op.edit,
        masking_safe=False,
    )
    assert not unsafe.applies(SOURCES["pgn"])  # MASKS_NON_EDGES = True
    assert unsafe.applies(SOURCES["mpnn"])
    with pytest.raises(ValueError, match="magnitude"):
        Transform(name="x", factor="ACTION", description="x.", magnitude="huge", edit=op.edit)


def test_action_transforms_may_not_call_undefined_submodules():
    def calls_new_module(ctx, rng):
        return [
            *ctx.action.stmts[:-1],
            *cst_util.parse_stmts("ret = self.extra(ret)\n"),
            ctx.action.stmts[-1],
        ]

    bad = Transform(
        name="act_bad", factor="ACTION", description="x.", magnitude="small", edit=calls_new_module
    )
    with pytest.raises(TransformNotApplicable, match=r"undefined submodule\(s\) \['extra'\]"):
        bad.apply(SOURCES["mpnn"], random.Random(0))
    assert not bad.applies(SOURCES["mpnn"])


# Every transform x every seed it applies to.


@pytest.mark.parametrize("name,seed", CASES)
def test_transform_is_scoped_safe_and_deterministic(name, seed):
    t = get_transform(name)
    out = child(name, seed)
    regions.parse_regions(out)
    verdict = locality.check_locality(SOURCES[seed], out, t.factor)
    assert verdict.ok, verdict.reason
    other = "ACTION" if t.factor == "OPERATOR" else "OPERATOR"
    assert regions.parse_regions(out).body(other) == regions.parse_regions(SOURCES[seed]).body(
        other
    )
    verdict = safety.check_source_safety(out)
    assert verdict.ok, verdict.reason
    assert t.apply(SOURCES[seed], random.Random(0)) == out  # deterministic given rng
    assert not t.applies(out), "a transform must not stack onto its own output"


@pytest.fixture(scope="module")
def flax_runs(request):
    """Futures of `flax_train` for the selected cases, computed two at a time.

    XLA compiles one program on one core; running two cases at once uses both cores of
    the CI machine (the results are the same as sequential runs: fixed seeds, no sharing).
    """
    wanted = [
        item.callspec.params
        for item in request.session.items
        if getattr(item, "originalname", "") == "test_transform_loads_runs_and_trains"
    ]
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1))
    try:
        yield {
            (p["name"], p["seed"]): pool.submit(flax_train, child(p["name"], p["seed"]))
            for p in wanted
        }
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # e.g. after `-x` stopped the run


@pytest.mark.parametrize("name,seed", CASES)
def test_transform_loads_runs_and_trains(name, seed, flax_runs):
    module, out, losses, leak = flax_runs[name, seed].result()
    node, edge = out
    assert node.shape == (B, N, H)
    assert edge is None or (edge.ndim == 4 and edge.shape[:3] == (B, N, N))
    assert bool(jnp.all(jnp.isfinite(node))) and (edge is None or bool(jnp.all(jnp.isfinite(edge))))
    assert np.all(np.isfinite(losses)), losses
    assert losses[-1] < losses[0], losses
    if program_lib.masks_non_edges(module):
        assert leak < 1e-5, f"non-edge features reach the node output ({leak})"


def test_masking_probe_can_fail():
    """The leak probe above detects a program that stops masking."""
    leaky = SOURCES["pgn"].replace(
        "maxarg = jnp.where(jnp.expand_dims(adj_mat, -1), msgs, -BIG_NUMBER)", "maxarg = msgs"
    )
    assert leaky != SOURCES["pgn"]
    _, _, _, leak = flax_train(leaky)
    assert leak > 1e-3


# CLRS: the child trains inside clrs.models.BaselineModel (tiny preset, bfs).

CLRS_CFG = get_preset("tiny").replace(train_steps=12, eval_every=1000, val_length=4, test_length=4)
# One child carrying 4 transforms (2 per factor): one CLRS compile in the default run (each
# costs ~20 s on 2 cores); every transform x seed on its own runs under `-m slow`.
CLRS_SUBSET = (
    "op_maxout_triplet_heads",
    "act_max_mean_aggregation",
    "op_glu_node_projections",
    "act_triplet_topology_mask",
)


def clrs_losses(source: str, cfg=CLRS_CFG) -> list[float]:
    """Training losses of `source` through CLRS's BaselineModel (our Trainer); no eval."""
    prog = program_lib.Program(source, "candidate")
    factory = bridge.processor_factory(prog, cfg.use_ln, cfg.nb_triplet_fts)
    task = data.make_task_data("bfs", cfg, 0)
    feedback = next(task.train)
    trainer = Trainer(task.spec, feedback, factory, cfg)
    trainer.init(feedback.features, 1)
    key, losses = task.rng_key, []
    for i in range(cfg.train_steps):
        if i:
            feedback = next(task.train)
        key, sub = jax.random.split(key)
        losses.append(trainer.step(sub, feedback)["loss"])  # raises on a non-finite loss
    return losses


def _assert_learns(losses: list[float]) -> None:
    assert np.all(np.isfinite(losses)), losses
    # Per-batch losses are noisy: compare the mean of the last 3 with the first 3.
    assert np.mean(losses[-3:]) < np.mean(losses[:3]), losses


def test_clrs_subset_trains():
    factors = [get_transform(n).factor for n in CLRS_SUBSET]
    assert factors.count("OPERATOR") == 2 and factors.count("ACTION") == 2
    source = SOURCES["triplet_gmpnn"]
    for name in CLRS_SUBSET:
        parent, source = source, get_transform(name).apply(source, random.Random(0))
        assert locality.check_locality(parent, source, get_transform(name).factor).ok
    _assert_learns(clrs_losses(source))


@pytest.mark.slow
@pytest.mark.parametrize("name,seed", CASES)
def test_clrs_full_matrix_trains_and_scores(name, seed):
    cfg = get_preset("tiny").replace(train_steps=12, eval_every=6)
    losses: list[float] = []
    factory = bridge.processor_factory(
        program_lib.Program(child(name, seed), name), cfg.use_ln, cfg.nb_triplet_fts
    )
    metrics, _ = evaluate.train_and_score(
        factory, "bfs", cfg, seed=0, progress=lambda _, loss: losses.append(loss)
    )
    _assert_learns(losses)
    assert np.isfinite(metrics["ood_score"]) and np.isfinite(metrics["val_score"])
