"""The operator modes: the config's list and `make_operator`'s agree, and an unknown mode fails."""

from __future__ import annotations

import types

import pytest

from spark_jax.config.sections import MODES
from spark_jax.operator.baselines import BASELINES, make_operator


def test_config_modes_are_the_operators_make_operator_builds():
    assert set(MODES) == {"spark", "rewrite", *BASELINES}


def test_unknown_mode_names_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown operator mode 'nope'; known: spark, rewrite, "):
        make_operator(None, None, types.SimpleNamespace(mode="nope"))
