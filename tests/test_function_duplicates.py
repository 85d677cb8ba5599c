"""The duplicate rule by function (`fitness.duplicates: function`, `search.function_duplicates`):
a child whose function fingerprint on the task equals a trained program's is a duplicate (not
trained, not counted toward B), whatever its source; the same loop serves every method. The
probes are real (`evaluation.identity` in its child process, tiny preset, `bfs`); executor and
operator are scripted (tests/test_budget_rules.py's), so no training runs."""

from __future__ import annotations

import dataclasses

import pytest
from test_budget_rules import SEED, _run, _variant

from spark_jax.config.evaluation import FitnessConfig
from spark_jax.config.protocol import ConfigError
from spark_jax.search.budget import DUPLICATE
from spark_jax.search.function_duplicates import META_KEY


def _different() -> str:
    """The seed with a real change to its function: its message MLP's activation."""
    assert SEED.count("jax.nn.relu") >= 1, "mpnn.py no longer uses jax.nn.relu"
    return SEED.replace("jax.nn.relu", "jax.nn.gelu", 1)


def test_a_child_with_the_seeds_function_is_a_duplicate_by_function(tmp_path, monkeypatch):
    # `a` adds a plain attribute (no parameter, no computation): another source, one function.
    children = [_variant("a"), _different(), _variant("c")]
    fitness = FitnessConfig(duplicates="function")
    result, executor, db = _run(
        tmp_path, children, monkeypatch, budget=3, max_attempts=3, fitness=fitness
    )
    with db:
        dups = [p for p in db.proposals() if p.failure_type == DUPLICATE]
        known = db.get_meta(META_KEY)
    assert [p.attempt for p in dups] == [0, 2]  # `a` and `c`: the seed's function both
    assert "computes the same function as program" in dups[0].reason
    assert executor.trained == ["seed", "seed"]  # the seed, then the gelu child (named seed)
    assert result.evaluated == 2 and result.attempts == 3
    assert len(known) == 2  # the seed's fingerprint and the gelu child's


def test_by_source_the_same_children_are_all_trained(tmp_path, monkeypatch):
    children = [_variant("a"), _variant("c")]
    result, executor, db = _run(tmp_path, children, monkeypatch, budget=3, max_attempts=2)
    db.close()
    assert executor.trained == ["seed", "a", "c"] and result.evaluated == 3


def test_an_unknown_duplicate_rule_is_a_config_error():
    with pytest.raises(ConfigError, match="duplicates: must be one of"):
        dataclasses.replace(FitnessConfig(), duplicates="hash")
