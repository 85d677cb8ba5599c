"""The offline editor's catalogues per task family, and CLRS behind the family boundary."""

from __future__ import annotations

import random

import pytest

from spark_jax import families
from spark_jax.jobs import family_jobs
from spark_jax.operator.offline import family_catalogue
from spark_jax.plugins import classify as classify_family
from spark_jax.program import locality, regions

SEEDS = classify_family.FAMILY.seed_programs()


def test_classifier_transforms_make_feasible_different_scoped_children():
    checked = set()  # each transform's child is trained-shape-checked once (compiles cost)
    for seed in ("mlp", "cnn", "gru", "lr"):
        source = SEEDS[seed].read_text()
        applied = [t for t in family_catalogue("classify") if t.applies(source)]
        assert len(applied) >= 2, (seed, [t.name for t in applied])  # LR too
        children = set()
        for t in applied:
            child = t.apply(source, random.Random(0))
            parsed = regions.parse_regions(source), regions.parse_regions(child)
            diff = locality.diff_parsed(*parsed)
            assert locality.locality_of(diff, t.factor, *parsed).ok, (seed, t.name)
            if t.name not in checked:
                assert classify_family.check_program(child, 40, 10) is None, (seed, t.name)
                checked.add(t.name)
            children.add(child)
        assert source not in children and len(children) == len(applied)
    assert checked == {t.name for t in family_catalogue("classify")}


def test_each_family_has_its_own_catalogue():
    names = {f: {t.name for t in family_catalogue(f)} for f in ("clrs", "classify", "cartpole")}
    assert not names["classify"] & names["clrs"] and not names["cartpole"] & names["classify"]
    with pytest.raises(ValueError, match="no offline catalogue for task family 'vision'"):
        family_catalogue("vision")


def test_clrs_is_a_family_behind_the_boundary():
    clrs = family_jobs.get("clrs")
    assert isinstance(clrs, families.TaskFamily) and "clrs" in families.names()
    assert "dfs" in clrs.benchmarks and clrs.factory == "make_processor"
    assert "triplet_gmpnn" in clrs.seed_programs() and "adj_mat" in clrs.contract_text()
    record = clrs.data_record("dfs", "tiny")
    assert record["task"] == "dfs" and record["test_seed"] == 3
    assert {"clrs", "classify", "cartpole"} <= set(families.names())


@pytest.mark.parametrize(
    "mode", ["openevolve", "openevolve-full", "evoprompting", "funsearch", "eoh"]
)
def test_baseline_offline_analogues_edit_family_programs_with_the_family_catalogue(mode):
    import asyncio

    from spark_jax.config.sections import OperatorConfig
    from spark_jax.operator.baselines import make_operator
    from spark_jax.operator.editors import ProgramView, StepContext
    from spark_jax.operator.offline import OfflineEditor

    source = SEEDS["mlp"].read_text()
    names = {t.name for t in family_catalogue("classify")}
    editor = OfflineEditor(0, family_catalogue("classify"))
    op = make_operator(editor, None, OperatorConfig(mode=mode))
    op.observe("s", source, type("E", (), {"score": 0.5, "macs": 1.0})(), None)
    ctx = StepContext(task="mnist1d", parent=ProgramView("s", source))
    child = asyncio.run(op.propose(ctx, 0))
    assert child.child is not None and child.child != source, child.error
    used = child.calls[0].model.split(":", 1)[1] if ":" in child.calls[0].model else ""
    assert any(name in child.calls[0].response for name in names) or any(
        name in used for name in names
    ), child.calls[0]
