"""The task-family boundary's registry: register, look up, reject duplicates and gaps."""

import dataclasses
import types

import pytest

from spark_jax import families
from spark_jax.families import registry


@pytest.fixture(autouse=True)
def _registry_restored(monkeypatch):
    """The toy families registered here leave with their test: a later test in the same
    process (the rendered configuration docs list every registered family) sees only the
    shipped ones."""
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))


@dataclasses.dataclass
class _Toy:
    name: str = "toy_boundary"
    benchmarks: tuple = ("toy",)
    factory: str = "make_classifier"
    presets: tuple = ("tiny", "smoke")
    default_seed: str = "mlp"
    test_part: str = "toy test split"
    val_part: str = "a validation split"

    def seed_programs(self):
        return {}

    def contract_text(self):
        return "contract"

    def check(self, source, benchmark, preset):
        return None if "def make_classifier" in source else "no make_classifier"

    def evaluate(self, source, benchmark, preset, seed, split="test"):
        return families.Evaluation(
            task=benchmark, preset=preset, seed=seed, program="candidate", program_sha256="",
            score=1.0, params=0, macs=0, train_seconds=0.0, metrics={"accuracy": 1.0, "loss": 0.0},
        )  # fmt: skip

    def data_record(self, benchmark, preset):
        return {"split_seed": 0}

    def sandbox_spec(self, benchmark, preset):
        return {"features": 4}


def test_register_and_get_round_trip():
    toy = families.register(_Toy())
    assert isinstance(toy, families.TaskFamily)
    assert families.get("toy_boundary") is toy
    assert "toy_boundary" in families.names()


def test_a_family_lacking_a_member_of_the_interface_is_not_a_task_family():
    toy = _Toy()
    members = {n: getattr(toy, n) for n in dir(toy) if not n.startswith("_")}
    assert isinstance(types.SimpleNamespace(**members), families.TaskFamily)
    del members["sandbox_spec"]  # e.g. a plug-in written before the sandbox asked for it
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


def test_clrs_answers_the_optional_members_and_another_family_takes_the_defaults():
    """CLRS's own path is its answers to the contract's optional members; a family without
    them (classify here) takes the defaults the stages write."""
    from spark_jax.families import DEFAULT_FAMILY
    from spark_jax.jobs import family_jobs
    from spark_jax.report import spread

    clrs, classify = families.get(DEFAULT_FAMILY), families.get("classify")
    assert clrs.name == DEFAULT_FAMILY and clrs.sandbox_spec("dfs", "tiny") is None
    assert family_jobs.check_options(DEFAULT_FAMILY, "dfs", "tiny") == {}
    assert clrs.job_fields("dfs", "tiny", "val") == {} and clrs.prompt_contract() == ""
    assert clrs.benchmark_task("dfs") == "dfs" and clrs.report_section({}, None, None) == []
    for member in ("evaluate_job", "job_fields", "prompt_contract", "benchmark_task"):
        assert callable(getattr(clrs, member)) and not hasattr(classify, member), member
    assert spread.metric_for(None).name == "OOD accuracy" and spread.metric_for(None).note
    assert spread.metric_for("classify").word == "accuracy"
    assert spread.metric_for("not_installed").word == "score"


def test_no_stage_outside_the_families_asks_which_family_it_is():
    """Stages call the family's members: no `.hosted` read and no 'clrs' literal outside the
    registry, the plug-ins and the config (whose one constant names the default family)."""
    import pathlib
    import re

    package = pathlib.Path(families.__file__).resolve().parents[1]
    pattern = re.compile(r"\.hosted\b|[\"']clrs[\"']")
    bad = [
        f"{p.relative_to(package)}:{n}"
        for p in package.rglob("*.py")
        if p.relative_to(package).parts[0] not in ("families", "plugins", "config", "assets")
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert bad == []
    assert pattern.search("if fam.hosted:") and pattern.search("family='clrs'")
