"""The CartPole-v1 family: the seed policy, its semantic check and deterministic PPO scoring.

Real gymnax CartPole-v1; the tiny PPO preset (a few updates) keeps it to seconds.
"""

from __future__ import annotations

import random
import types

import pytest

from spark_jax.feasibility.stage_checks import CheckFailure
from spark_jax.operator.offline.roles import CatalogueEditor, NoApplicableTransform
from spark_jax.plugins import cartpole as cartpole_family
from spark_jax.plugins.cartpole import checks as cartpole_check
from spark_jax.plugins.cartpole import ppo as cartpole_ppo
from spark_jax.plugins.cartpole.transforms import POLICY_TRANSFORMS
from spark_jax.program import locality, regions
from spark_jax.program import source as program_source

SEED = cartpole_family.seed_path("mlp")


def _load(source: str, name: str) -> types.ModuleType:
    return program_source.load_module(program_source.Program(source, name), "make_policy")


def _policy(source: str, name: str, hidden: int = 8):
    return _load(source, name).make_policy(hidden)


def test_seed_passes_the_semantic_check():
    info: dict = {}
    cartpole_check.build_and_check(_load(SEED.read_text(), "seed"), 8, 3, info)
    assert info["params"] == 2 * (4 * 8 + 8 + 8 * 8 + 8) + (8 * 2 + 2) + (8 + 1)


@pytest.mark.parametrize(
    "old, new, failure_type",
    [
        (
            "self.actor_out = dense(NUM_ACTIONS, gain=0.01)",
            "self.actor_out = dense(3)",
            "shape_mismatch",
        ),
        (
            "value = jnp.squeeze(self.critic_out(c), axis=-1)",
            "value = self.critic_out(c)",
            "shape_mismatch",
        ),
        ("return logits, value", "return logits", "shape_mismatch"),
        ("return logits, value", "return logits.astype(jnp.float16), value", "dtype_mismatch"),
        ("return logits, value", "return logits / 0.0, value", "non_finite"),
        ("return logits, value", "return logits, jnp.log(value - 1e3)", "non_finite"),
        ("return logits, value", "return logits[:3], value[:3]", "shape_mismatch"),
    ],
    ids=["logits3", "value2d", "no_tuple", "float16", "inf_logits", "nan_value", "fixed_batch"],
)
def test_bad_candidates_are_rejected(old, new, failure_type):
    source = SEED.read_text()
    assert old in source
    policy = _policy(source.replace(old, new), failure_type)
    with pytest.raises(CheckFailure) as raised:
        cartpole_check.check_policy_semantic(policy, 3, {})
    assert (raised.value.stage, raised.value.failure_type) == ("semantic", failure_type)


def test_tiny_evaluation_is_deterministic_for_a_fixed_seed():
    cfg = cartpole_ppo.preset("tiny")
    program = program_source.Program(cartpole_family.seed_path("mlp").read_text(), "mlp")
    first, second = (cartpole_family.evaluate_program(program, "tiny", seed=3) for _ in range(2))
    assert (first.test_return, first.train_return) == (second.test_return, second.train_return)
    assert (first.seed, first.preset, first.program_sha256) == (3, "tiny", program.sha256)
    assert 8.0 <= first.test_return <= cartpole_ppo.MAX_RETURN
    assert first.score == pytest.approx(first.test_return / cartpole_ppo.MAX_RETURN)
    policy = _policy(program.source, "det", cfg.hidden)
    assert (first.macs, first.params) == cartpole_ppo.policy_macs(policy)
    # Two trunks 4 -> 16 -> 16, a logits head 16 -> 2 and a value head 16 -> 1.
    assert first.macs == 2 * (4 * 16 + 16 * 16) + 16 * 2 + 16


def test_validation_episodes_are_separate_from_the_test_episodes():
    """Selection scores the `val_seed` episodes only; the test episodes (`eval_seed`) are
    another fixed set, scored only when asked for."""
    cfg = cartpole_ppo.preset("tiny")
    assert len({cfg.seed, cfg.val_seed, cfg.eval_seed}) == 3
    record = cartpole_family.FAMILY.data_record("cartpole_v1", "tiny")
    assert (record["val_seed"], record["eval_seed"]) == (cfg.val_seed, cfg.eval_seed)
    source = cartpole_family.seed_path("mlp").read_text()
    val = cartpole_family.FAMILY.evaluate(source, "cartpole_v1", "tiny", 3, split="val")
    test = cartpole_family.FAMILY.evaluate(source, "cartpole_v1", "tiny", 3, split="test")
    assert set(val.metrics) == {"train_return", "val_return"}  # no test return computed
    assert set(test.metrics) == {"train_return", "test_return"}
    assert val.metrics["train_return"] == test.metrics["train_return"]  # same training
    assert val.score == pytest.approx(val.metrics["val_return"] / cartpole_ppo.MAX_RETURN)
    # The greedy policy is deterministic, so the two episode sets differ only by their resets.
    policy = _policy(source, "episodes", cfg.hidden)
    import jax

    variables = policy.init(jax.random.PRNGKey(0), jax.numpy.zeros((1, 4)))
    keys = {
        part: cartpole_ppo.evaluate_policy(policy, variables, cfg, part) for part in ("val", "test")
    }
    assert keys["val"] != keys["test"]
    with pytest.raises(ValueError, match="unknown CartPole episode set 'train'"):
        cartpole_ppo.evaluate_policy(policy, variables, cfg, "train")


def test_shipped_seed_and_contract():
    assert cartpole_family.seed_path("mlp").read_text() == SEED.read_text()
    assert "logits [B,2]" in cartpole_family.contract_text()
    with pytest.raises(ValueError, match="'nope'"):
        cartpole_family.seed_path("nope")


def test_a_factory_returning_no_module_is_an_interface_failure():
    source = SEED.read_text().replace("return Processor(hidden=hidden)", "return hidden")
    with pytest.raises(CheckFailure) as raised:
        cartpole_check.build_and_check(_load(source, "bad_factory"), 8, 3, {})
    assert (raised.value.stage, raised.value.failure_type) == ("interface", "bad_factory")


def test_unknown_preset_is_named():
    with pytest.raises(ValueError, match="'huge'"):
        cartpole_ppo.preset("huge")


@pytest.mark.parametrize("transform", POLICY_TRANSFORMS, ids=lambda t: t.name)
def test_policy_transforms_edit_the_seed_into_feasible_children(transform):
    source = SEED.read_text()
    child = transform.apply(source, random.Random(0))
    assert child != regions.normalize(source)
    assert locality.check_locality(source, child, transform.factor).ok
    cartpole_check.check_policy_semantic(_policy(child, transform.name), 3, {})


def test_offline_catalogue_editor_walks_the_policy_catalogue():
    """Every policy transform is reachable from the seed through the catalogue editor, one
    untried transform per call, until none is left for the factor."""
    editor, source = CatalogueEditor(0, POLICY_TRANSFORMS), SEED.read_text()
    used = []
    for factor in ("OPERATOR", "ACTION"):
        while True:
            try:
                edit = editor.edit(source, factor, rng=random.Random(len(used)))
            except NoApplicableTransform:
                break
            assert edit.factor == factor and not edit.is_llm
            used.append(edit.transform)
    assert sorted(used) == sorted(t.name for t in POLICY_TRANSFORMS)
