"""Tests for the offline editor's rule-based roles (spark_jax.offline.roles)."""

from __future__ import annotations

import asyncio
import collections
import pathlib
import random

import jax
import numpy as np
import pytest

from spark_jax import program as program_lib
from spark_jax.feasibility import policy as safety
from spark_jax.llm.parsing import sanitize_directive
from spark_jax.operator.editors import ProgramView, StepContext
from spark_jax.operator.offline import (
    CATALOGUE,
    EDITOR_NAME,
    BanditRouter,
    CatalogueEditor,
    Directive,
    NoApplicableTransform,
    OfflineEditor,
    RuleDirector,
    StepSignals,
    applicable_transforms,
    get_transform,
)
from spark_jax.program import locality, regions

ROOT = pathlib.Path(__file__).resolve().parents[1]
SEEDS = ("triplet_gmpnn", "mpnn", "pgn")
SOURCES = {s: (ROOT / "processors" / f"{s}.py").read_text() for s in SEEDS}


def test_every_role_says_it_is_not_an_llm():
    for role in (BanditRouter(0), RuleDirector(), CatalogueEditor(0), OfflineEditor(0)):
        assert role.is_llm is False and role.name == EDITOR_NAME == "offline-rules"


# ASR: the bandit.


def _run_bandit(seed: int, reward) -> list[str]:
    router, picks = BanditRouter(seed), []
    for _ in range(60):
        factor = router.choose()
        router.update(factor, reward(factor))
        picks.append(factor)
    return picks


def test_bandit_is_deterministic_for_a_seed():
    reward = lambda f: f == "ACTION"  # noqa: E731
    assert _run_bandit(3, reward) == _run_bandit(3, reward)
    assert any(_run_bandit(s, reward) != _run_bandit(3, reward) for s in range(4, 8))


@pytest.mark.parametrize("good", ["OPERATOR", "ACTION"])
def test_bandit_shifts_towards_the_rewarded_factor(good):
    picks = _run_bandit(0, lambda f: f == good)
    assert picks[-30:].count(good) >= 27, picks
    router = BanditRouter(1)
    for _ in range(20):
        router.update(good, True)
        router.update("ACTION" if good == "OPERATOR" else "OPERATOR", False)
    assert router.posterior(good) == (21.0, 1.0)
    assert [router.choose() for _ in range(100)].count(good) >= 95


def test_bandit_falls_back_to_what_is_available():
    router = BanditRouter(0)
    for _ in range(30):
        router.update("ACTION", True)
    assert {router.choose(["OPERATOR"]) for _ in range(10)} == {"OPERATOR"}
    assert router.choose([]) == "ACTION"  # nothing applies: the paper's fallback
    with pytest.raises(ValueError, match="Unexpected factor"):
        router.update("BOTH", True)
    with pytest.raises(ValueError, match="Unexpected factors"):
        BanditRouter(0, factors=("OPERATOR", "REWRITE"))


# RC: the rule table.


def _direct(**kw) -> Directive:
    kw.setdefault("factor", "ACTION")
    return RuleDirector().direct(StepSignals(**kw))


@pytest.mark.parametrize(
    "signals,magnitude,phrase",
    [
        (dict(), "small", "refine"),
        (dict(stagnating=True), "large", "stagnating"),
        (dict(stagnating=True, failure_rate=0.6), "small", "conservative"),  # failures win
        (dict(stagnating=True, failure_rate=0.4), "large", "bigger"),
        (dict(failure_rate=0.5), "small", "50% of recent proposals failed"),
    ],
)
def test_director_magnitude_rules(signals, magnitude, phrase):
    directive = _direct(**signals)
    assert directive.magnitude == magnitude
    assert phrase in directive.text


def test_director_failure_type_rules():
    leak = _direct(failure_rate=0.3, dominant_failures=("mask_leak",))
    assert "masking" in leak.prefer_tags and "adjacency mask" in leak.text
    slow = _direct(failure_rate=0.7, dominant_failures=("timeout", "memory"))
    assert slow.avoid_tags == {"width", "depth"} and "Avoid width" in slow.text
    assert slow.magnitude == "small"
    scope = _direct(failure_rate=0.2, dominant_failures=("locality",), factor="OPERATOR")
    assert "inside the OPERATOR region" in scope.text
    unknown = _direct(failure_rate=0.2, dominant_failures=("weird_failure",))
    assert "weird_failure" in unknown.text and "helpers already in the program" in unknown.text
    assert "OPERATOR" in _direct(factor="OPERATOR").text


def test_directives_are_plain_prose():
    cases = [
        dict(stagnating=s, failure_rate=r, dominant_failures=d)
        for s in (False, True)
        for r in (0.0, 0.9)
        for d in ((), ("mask_leak", "non_finite"), ("shape_mismatch", "syntax_error"))
    ]
    for signals in cases:
        text = _direct(**signals).text
        assert sanitize_directive(text) == text  # nothing code-like to strip
        assert "`" not in text and "\n" not in text and len(text) <= 600


# SAR: the catalogue editor.


@pytest.mark.parametrize("seed", SEEDS)
def test_editor_never_repeats_on_a_parent_until_exhausted(seed):
    source = SOURCES[seed]
    for factor in regions.FACTORS:
        editor = CatalogueEditor(0)
        expected = {t.name for t in applicable_transforms(source, factor)}
        seen = []
        while True:
            try:
                edit = editor.edit(source, factor)
            except NoApplicableTransform as e:
                assert factor in str(e)
                break
            assert edit.factor == factor and edit.is_llm is False
            assert edit.editor == EDITOR_NAME
            assert edit.magnitude == get_transform(edit.transform).magnitude
            assert locality.check_locality(source, edit.source, factor).ok
            seen.append(edit.transform)
        assert len(seen) == len(set(seen)) and set(seen) == expected
        assert editor.tried(source) >= expected
        with pytest.raises(NoApplicableTransform):
            editor.edit(source, factor)


def test_editor_tracks_parents_by_normalized_hash():
    editor = CatalogueEditor(0)
    first = editor.edit(SOURCES["mpnn"], "ACTION")
    # The same parent with CRLF line endings and trailing spaces is the same parent.
    same = SOURCES["mpnn"].replace("\n", "  \r\n")
    assert editor.tried(same) == {first.transform}
    assert editor.tried(first.source) == frozenset()  # the child is a fresh parent


def test_editor_is_deterministic_and_follows_the_magnitude():
    source = SOURCES["triplet_gmpnn"]
    picks = [
        CatalogueEditor(s).edit(source, "ACTION", magnitude="large").transform for s in range(24)
    ]
    assert picks == [
        CatalogueEditor(s).edit(source, "ACTION", magnitude="large").transform for s in range(24)
    ]
    large = sum(get_transform(p).magnitude == "large" for p in picks)
    assert large >= 15, picks  # weights 3:1 over 6 large / 6 small -> expected 18
    small = [
        CatalogueEditor(s).edit(source, "ACTION", Directive("x", "small")).transform
        for s in range(24)
    ]
    assert sum(get_transform(p).magnitude == "small" for p in small) >= 15, small


def test_editor_avoids_tags_while_anything_else_applies():
    source = SOURCES["triplet_gmpnn"]
    avoid = frozenset({"width", "depth"})
    editor = CatalogueEditor(0)
    directive = Directive("keep it small", "small", avoid_tags=avoid)
    order = []
    while True:
        try:
            order.append(editor.edit(source, "OPERATOR", directive).transform)
        except NoApplicableTransform:
            break
    flags = [bool(get_transform(n).tags & avoid) for n in order]
    assert flags == sorted(flags) and any(flags) and not all(flags), order


@pytest.mark.parametrize("seed", SEEDS)
def test_chained_random_edits_stay_local_and_load(seed):
    editor, rng = CatalogueEditor(7), random.Random(seed)
    source, applied = SOURCES[seed], []
    for step in range(5):
        factor = regions.FACTORS[step % 2]
        edit = editor.edit(source, factor, rng=rng)
        verdict = locality.check_locality(source, edit.source, factor)
        assert verdict.ok, (applied, edit.transform, verdict.reason)
        assert safety.check_source_safety(edit.source).ok
        source = edit.source
        applied.append(edit.transform)
    assert len(applied) == 5
    module = program_lib.load_module(program_lib.Program(source, "chained"))
    proc = program_lib.build_flax_processor(module, 16, use_ln=True, nb_triplet_fts=4)
    b, n, h = 2, 5, 16
    args = (
        jax.ShapeDtypeStruct((b, n, h), np.float32),
        jax.ShapeDtypeStruct((b, n, n, h), np.float32),
        jax.ShapeDtypeStruct((b, h), np.float32),
        jax.ShapeDtypeStruct((b, n, n), np.float32),
        jax.ShapeDtypeStruct((b, n, h), np.float32),
    )
    params = jax.eval_shape(proc.init, jax.random.PRNGKey(0), *args)
    node, edge = jax.eval_shape(proc.apply, params, *args)
    assert node.shape == (b, n, h), applied
    assert edge is None or edge.shape[:3] == (b, n, n), applied


# The Editor contract.


def test_offline_editor_plays_the_three_roles():
    editor = OfflineEditor(seed=0)
    ctx = StepContext(task="bfs", parent=ProgramView(id="seed", source=SOURCES["pgn"]))

    async def step():
        route = await editor.route(ctx)
        direct = await editor.direct(ctx, route.value, StepSignals(stagnating=True))
        edit = await editor.edit(ctx, route.value, direct.value)
        rewrite = await editor.edit(ctx, None, direct.value)
        return route, direct, edit, rewrite

    route, direct, edit, rewrite = asyncio.run(step())
    assert route.value in regions.FACTORS
    assert "stagnating" in direct.value and direct.call.model == "rules:large"
    assert locality.check_locality(SOURCES["pgn"], edit.value, route.value).ok
    assert locality.classify_entanglement(SOURCES["pgn"], rewrite.value).kind == "entangled"
    for out in (route, direct, edit, rewrite):
        assert out.call.is_llm is False and out.call.backend == EDITOR_NAME and out.call.ok
    assert edit.call.model.startswith("catalogue:")
    assert get_transform(edit.call.model.split(":")[1]).factor == route.value
    before = editor.router.posterior(route.value)
    editor.observe(route.value, True)
    assert editor.router.posterior(route.value) == (before[0] + 1, before[1])
    editor.observe(None, False)  # a rewrite has no factor to credit


def test_offline_editor_reports_exhaustion_as_a_failed_call():
    editor = OfflineEditor(seed=0, catalogue=[get_transform("act_residual_update")])
    ctx = StepContext(task="bfs", parent=ProgramView(id="p", source=SOURCES["mpnn"]))
    first = asyncio.run(editor.edit(ctx, "ACTION", ""))
    second = asyncio.run(editor.edit(ctx, "ACTION", ""))
    assert first.value is not None and second.value is None
    assert second.call.parse_outcome == "no_applicable_transform" and not second.call.ok
    assert asyncio.run(editor.route(ctx)).value == "ACTION"  # nothing left: fallback


def test_catalogue_tag_vocabulary_is_what_the_director_uses():
    tags = collections.Counter(tag for t in CATALOGUE for tag in t.tags)
    for directive_tag in (
        "masking",
        "width",
        "depth",
        "norm",
        "gate",
        "residual",
        "interaction",
        "activation",
    ):
        assert tags[directive_tag] > 0, directive_tag
