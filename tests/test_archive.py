"""Tests for spark_jax.archive: island MAP-Elites, determinism, migration, state round trip."""

from __future__ import annotations

import json
import os
import pathlib
import random
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from spark_jax.search.archive import AddResult, ArchiveConfig, Candidate, IslandArchive, fitness_key

HERE = pathlib.Path(__file__).resolve().parent
FIXED = dict(macs_range=(0.0, 1000.0))  # cells: ood_acc // 0.1, macs // 100


def cand(cid: str, ood: float, macs: int, island: int = 0, **kw: Any) -> Candidate:
    return Candidate(id=cid, source_sha=f"sha-{cid}", ood_acc=ood, macs=macs, island=island, **kw)


def drive(archive: IslandArchive, start: int, steps: int) -> list[Any]:
    """A scripted search: round-robin islands, sample, add a child, migrate when due."""
    log: list[Any] = []
    for step in range(start, start + steps):
        gen = random.Random(step)  # the child's metrics depend on the step only
        island = archive.next_island()
        parent, top, diverse = archive.sample(island)
        child = cand(
            f"c{step}",
            round(gen.random(), 3),
            gen.randrange(600_000, 700_000),
            island=island,
            parent_id=parent.id,
            iteration=step,
        )
        result = archive.add(child)
        log.append((island, parent.id, [t.id for t in top], [d.id for d in diverse], result))
        if archive.should_migrate():
            log.append(("migrate", [(c.id, c.island) for c in archive.migrate()]))
    return log


def seeded(seed: int = 0, **kw: Any) -> IslandArchive:
    archive = IslandArchive(ArchiveConfig(seed=seed, **kw))
    archive.add(cand("seed", 0.4, 650_000))
    return archive


def test_same_seed_same_sequence_and_other_seed_differs():
    a, b, c = seeded(7), seeded(7), seeded(8)
    log_a, log_b, log_c = drive(a, 1, 120), drive(b, 1, 120), drive(c, 1, 120)
    assert log_a == log_b
    assert a.to_state() == b.to_state()
    assert log_a != log_c
    assert any(entry[0] == "migrate" for entry in log_a)


def test_cell_replacement_and_macs_tie_break():
    archive = IslandArchive(ArchiveConfig(num_islands=1, **FIXED))
    first = archive.add(cand("a", 0.55, 150))
    assert first == AddResult((5, 1), None, True, True, ())
    # Same OOD, fewer MACs, same cell: replaces the incumbent, which leaves the archive.
    tie = archive.add(cand("b", 0.55, 120))
    assert (tie.cell, tie.replaced_id, tie.accepted_in_cell, tie.is_new_best) == (
        (5, 1),
        "a",
        True,
        True,
    )
    assert "a" not in archive and archive.cells(0)[(5, 1)].id == "b"
    # An exact tie keeps the incumbent; the newcomer joins the island as a non-elite.
    same = archive.add(cand("c", 0.55, 120))
    assert (same.replaced_id, same.accepted_in_cell, same.is_new_best) == (None, False, False)
    assert [m.id for m in archive.members(0)] == ["b", "c"]
    worse = archive.add(cand("d", 0.52, 110))
    assert not worse.accepted_in_cell and archive.cells(0)[(5, 1)].id == "b"
    better = archive.add(cand("e", 0.58, 190))
    assert (better.replaced_id, better.is_new_best) == ("b", True)
    assert archive.best().id == "e"
    assert fitness_key(archive.best()) == (0.58, -190)


def test_population_cap_evicts_non_elites_first_and_never_the_best():
    archive = IslandArchive(ArchiveConfig(num_islands=1, population_size=4, **FIXED))
    for c in (cand("a", 0.9, 50), cand("b", 0.5, 50), cand("c", 0.3, 50)):
        archive.add(c)
    assert not archive.add(cand("d", 0.5, 60)).accepted_in_cell  # non-elite, fitter than c
    assert archive.add(cand("e", 0.7, 50)).evicted_ids == ("d",)
    assert archive.add(cand("f", 0.1, 50)).evicted_ids == ("c",)  # worst cell owner
    assert [m.id for m in archive.members(0)] == ["a", "b", "e", "f"]
    assert "c" not in archive and "d" not in archive and len(archive) == 4

    archive = seeded(3, num_islands=2, population_size=6, archive_size=5)
    best_seen = archive.best()
    for step in range(1, 200):
        gen = random.Random(step)
        archive.add(cand(f"x{step}", gen.random() * 0.8, gen.randrange(1, 10**6), island=step % 2))
        assert all(len(archive.members(i)) <= 6 for i in range(2))
        assert len(archive.elites()) <= 5
        new_best = archive.best()
        assert fitness_key(new_best) >= fitness_key(best_seen)
        assert new_best.id in {m.id for i in range(2) for m in archive.members(i)}
        best_seen = new_best


def test_inspirations_top_and_diverse():
    archive = IslandArchive(ArchiveConfig(num_islands=1, seed=5, **FIXED))
    gen = random.Random(0)
    for k in range(40):
        archive.add(cand(f"p{k}", round(gen.random(), 3), gen.randrange(0, 1000)))
    cells = {m.id: cell for cell, m in archive.cells(0).items()}
    assert len(cells) >= 15
    for _ in range(30):
        parent, top, diverse = archive.sample(0)
        others = [m for m in archive.members(0) if m.id != parent.id]
        assert [t.id for t in top] == [
            m.id for m in sorted(others, key=fitness_key, reverse=True)[:5]
        ]
        assert len(diverse) == 5
        assert parent.id not in {d.id for d in diverse} | {t.id for t in top}
        assert not {d.id for d in diverse} & {t.id for t in top}
        member_cells = [archive._member_cells[0][d.id] for d in diverse]
        assert len(set(member_cells)) == 5
        assert archive._member_cells[0][parent.id] not in member_cells


def test_parent_selection_modes_follow_ratios():
    explore = IslandArchive(
        ArchiveConfig(num_islands=1, exploration_ratio=1.0, exploitation_ratio=0.0, seed=1, **FIXED)
    )
    for k in range(10):
        explore.add(cand(f"p{k}", 0.05 * k, 100 * k))
    assert len({explore.sample(0).parent.id for _ in range(200)}) == 10
    exploit = IslandArchive(
        ArchiveConfig(
            num_islands=1,
            archive_size=2,
            exploration_ratio=0.0,
            exploitation_ratio=1.0,
            seed=1,
            **FIXED,
        )
    )
    for k in range(10):
        exploit.add(cand(f"p{k}", 0.05 * k, 100 * k))
    assert {exploit.sample(0).parent.id for _ in range(100)} == {"p8", "p9"}


def test_migration_ring_copies_without_double_counting():
    config = ArchiveConfig(num_islands=3, migration_interval=2, migration_rate=0.5, **FIXED)
    archive = IslandArchive(config)
    archive.add(cand("a0", 0.9, 100, island=0))
    assert not archive.should_migrate()
    archive.add(cand("a1", 0.2, 300, island=0))
    archive.add(cand("b0", 0.6, 100, island=1))
    archive.add(cand("c0", 0.3, 100, island=2))
    assert archive.should_migrate() and archive.generations == (2, 1, 1)
    before = (len(archive), archive.best().id, [e.id for e in archive.elites()])
    copies = archive.migrate()
    assert [(c.id, c.island, c.migrated) for c in copies] == [
        ("a0", 1, True),
        ("b0", 2, True),
        ("c0", 0, True),
    ]
    assert {m.id for m in archive.members(1)} == {"b0", "a0"}
    assert (len(archive), archive.best().id, [e.id for e in archive.elites()]) == before
    assert archive.best().migrated is False and archive.best().island == 0
    assert not archive.should_migrate()
    # Copies never migrate again; the ring only moves originals.
    assert archive.migrate() == []
    archive.add(cand("a2", 0.95, 100, island=0))
    assert [(c.id, c.island) for c in archive.migrate()] == [("a2", 1)]


def test_empty_island_is_seeded_with_a_copy_of_the_best():
    archive = seeded(0)
    parent, top, diverse = archive.sample(3)
    assert (parent.id, parent.island, parent.migrated) == ("seed", 3, True)
    assert (top, diverse) == ((), ())
    assert len(archive) == 1 and [m.id for m in archive.members(3)] == ["seed"]


def test_state_round_trip_continues_identically():
    uninterrupted = seeded(11, population_size=8, archive_size=6, migration_interval=3)
    drive(uninterrupted, 1, 60)
    state = json.loads(json.dumps(uninterrupted.to_state()))
    restored = IslandArchive.from_state(state)
    assert restored.to_state() == uninterrupted.to_state()
    assert drive(restored, 61, 80) == drive(uninterrupted, 61, 80)
    assert restored.to_state() == uninterrupted.to_state()


def test_adaptive_macs_bins_and_per_dimension_bins():
    archive = IslandArchive(ArchiveConfig(num_islands=1, feature_bins={"ood_acc": 4, "macs": 3}))
    assert archive.add(cand("a", 0.5, 1000)).cell == (2, 1)  # one value: middle bin
    assert archive.add(cand("b", 0.99, 2000)).cell == (3, 2)
    assert archive.add(cand("c", 0.0, 500)).cell == (0, 0)


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="exploitation_ratio"):
        ArchiveConfig(exploration_ratio=0.5, exploitation_ratio=0.6)
    with pytest.raises(ValueError, match="feature_bins"):
        ArchiveConfig(feature_bins={"ood_acc": 10})
    with pytest.raises(ValueError, match="ood_acc must be finite"):
        cand("n", float("nan"), 1)
    archive = seeded(0)
    with pytest.raises(ValueError, match="already in the archive"):
        archive.add(cand("seed", 0.5, 1))
    with pytest.raises(ValueError, match="island must be"):
        archive.add(cand("z", 0.5, 1, island=9))
    with pytest.raises(ValueError, match="empty archive"):
        IslandArchive().sample(0)
    numpy_made = cand("np", np.float32(0.25), np.int64(7))
    assert (type(numpy_made.ood_acc), type(numpy_made.macs)) == (float, int)


def test_independent_of_the_hash_seed():
    script = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import test_archive as t; "
        "a = t.seeded(2); log = t.drive(a, 1, 40); "
        "print(json.dumps([a.to_state(), repr(log)], sort_keys=True))"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script, str(HERE)],
            check=True,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(HERE.parent)},
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1 and outputs.pop().startswith("[{")


def test_inspirations_include_the_best_from_another_island():
    archive = IslandArchive(ArchiveConfig(num_islands=2, seed=3, **FIXED))
    archive.add(cand("best", 0.9, 500, island=1))
    archive.add(cand("a", 0.2, 500, island=0))
    archive.add(cand("b", 0.1, 400, island=0))
    parent, top, _ = archive.sample(0)
    assert top[0].id == "best" and parent.id != "best"
    assert [t.id for t in top[1:]] == [m for m in ("a", "b") if m != parent.id]
