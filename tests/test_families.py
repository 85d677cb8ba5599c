"""The task-family boundary's registry: register, look up, reject duplicates and gaps."""

import dataclasses
import types

import pytest

from spark_jax import families


@dataclasses.dataclass
class _Toy:
    name: str = "toy_boundary"
    benchmarks: tuple = ("toy",)
    factory: str = "make_classifier"
    presets: tuple = ("tiny", "smoke")
    default_seed: str = "mlp"
    hosted: bool = True
    test_part: str = "toy test split"
    val_part: str = "a validation split"

    def seed_programs(self):
        return {}

    def contract_text(self):
        return "contract"

    def check(self, source, benchmark, preset):
        return None if "def make_classifier" in source else "no make_classifier"

    def evaluate(self, source, benchmark, preset, seed, split="test"):
        return families.Evaluation(1.0, {"accuracy": 1.0, "loss": 0.0}, 0, 0, 0.0)

    def data_record(self, benchmark, preset):
        return {"split_seed": 0}


def test_register_and_get_round_trip():
    toy = families.register(_Toy())
    assert isinstance(toy, families.TaskFamily)
    assert families.get("toy_boundary") is toy
    assert "toy_boundary" in families.names()


def test_a_family_lacking_a_member_of_the_interface_is_not_a_task_family():
    toy = _Toy()
    members = {n: getattr(toy, n) for n in dir(toy) if not n.startswith("_")}
    assert isinstance(types.SimpleNamespace(**members), families.TaskFamily)
    del members["hosted"]  # e.g. a plug-in written before `hosted` existed
    assert not isinstance(types.SimpleNamespace(**members), families.TaskFamily)


def test_unknown_family_names_the_registered_ones():
    with pytest.raises(ValueError, match="unknown task family 'nope'"):
        families.get("nope")


def test_a_family_without_the_tiny_preset_is_refused():
    with pytest.raises(ValueError, match="lacks presets"):
        families.register(_Toy(name="toy_no_tiny", presets=("smoke",)))


def test_a_second_family_under_a_taken_name_is_refused():
    families.register(_Toy(name="toy_dup"))
    with pytest.raises(ValueError, match="already registered"):
        families.register(_Toy(name="toy_dup"))
