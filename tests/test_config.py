"""Protocol presets and config validation."""

from __future__ import annotations

import dataclasses

import pytest

from spark_jax.config import protocol as config


def test_paper_preset_is_run_py_protocol():
    p = config.get_preset("paper")
    assert p.train_lengths == (4, 7, 11, 13, 16)
    assert (p.batch_size, p.train_steps, p.hidden_size) == (32, 10_000, 128)
    assert (p.learning_rate, p.grad_clip_max_norm, p.nb_triplet_fts) == (1e-3, 1.0, 8)
    assert p.encode_hints and p.decode_hints and p.use_ln
    assert (p.hint_repred_mode, p.encoder_init) == ("soft", "xavier_on_scalars")
    assert p.random_pos and p.enforce_permutations and p.enforce_pred_as_input
    assert p.validation_length == 16
    assert (p.test_length, p.test_samples, p.test_seed) == (64, 32, 3)


def test_presets_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.get_preset("smoke").train_steps = 1  # type: ignore[misc]


def test_unknown_preset_names_known_ones():
    with pytest.raises(config.ConfigError, match="unknown preset 'big'.*paper, smoke, tiny"):
        config.get_preset("big")


def test_from_dict_rejects_unknown_key():
    with pytest.raises(config.ConfigError, match="unknown key\\(s\\) trian_steps"):
        config.from_dict({"name": "x", "trian_steps": 3})


@pytest.mark.parametrize(
    "key,value,match",
    [
        ("train_steps", 0, "protocol.train_steps: must be a positive integer"),
        ("train_steps", "10", "protocol.train_steps: expected int"),
        ("use_ln", "yes", "protocol.use_ln: expected bool"),
        ("hint_mode", "both", "protocol.hint_mode: must be one of"),
        ("learning_rate", -1.0, "protocol.learning_rate: must be positive"),
        ("train_lengths", [], "protocol.train_lengths"),
        ("train_lengths", ["a"], "protocol.train_lengths: must be a list of integers"),
    ],
)
def test_bad_values_name_the_key(key, value, match):
    with pytest.raises(config.ConfigError, match=match):
        config.from_dict({key: value}, base=config.get_preset("tiny"))


def test_replace_keeps_validation():
    tiny = config.get_preset("tiny")
    assert tiny.replace(train_steps=3).train_steps == 3
    with pytest.raises(config.ConfigError):
        tiny.replace(batch_size=-1)
