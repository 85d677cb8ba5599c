"""Island MAP-Elites archive of evaluated candidates (paper Algorithm 1, lines 8 and 19-20).

OpenEvolve's database scheme (the paper's backbone), deterministic from one seed: every random
choice uses the archive's `random.Random`; containers are insertion-ordered (never iterated
sets), so behaviour does not depend on hash seeds.

  islands     a candidate lives on `candidate.island`; each island has its own MAP-Elites grid
              over `feature_dimensions` (ood_acc in [0, 1], MACs; MACs bins adapt to the
              observed min/max when `macs_range` is None; a member keeps the cell it got when
              placed). A cell keeps its fittest member (ood_acc, ties -> fewer MACs); a loser
              still joins the island as a non-elite; a displaced incumbent leaves it.
  cap         over `population_size` an island evicts its worst non-elite, then its worst
              cell owner; never the member just placed, never the global best.
  elites      up to `archive_size` ids of the fittest; when full a fitter newcomer replaces
              the worst. Exploitation draws parents from here.

Parent selection (`sample`, as OpenEvolve's `sample_from_island`), one uniform draw r:
r < exploration_ratio: uniform island member; r < exploration + exploitation: uniform elite
living on the island (any elite if none does); else fitness-weighted island member (weights
max(ood_acc, 0.001)). Inspirations, parent excluded: the best candidate so far when it lives on
another island (as OpenEvolve adds the absolute best), then the island's fittest members, up to
`num_top_inspirations`; and `num_diverse_inspirations` island members of distinct cells (not
the parent's).

Migration (OpenEvolve's generation counting): each `add` is a generation of its island;
`should_migrate()` once the most advanced island is `migration_interval` generations past the
last migration (5 islands round-robin: about every 50 evaluated candidates). `migrate()` copies
each island's top max(1, int(size * migration_rate)) members to the next island of the ring.
A copy keeps the id with `migrated=True`, never migrates again, and is not sent where its id
or source hash already is. `len`, the elites and `best()` count distinct ids: no double count.
The caller: `archive.add(c); if archive.should_migrate(): archive.migrate()`.

`to_state()` is JSON-serializable (RNG included); `from_state` continues identically.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any, Mapping

from spark_jax.config.sections import ArchiveConfig
from spark_jax.search.candidate import AddResult, Candidate, Cell, Sample, fitness_key, is_better
from spark_jax.util import rngstate

__all__ = [
    "Cell",
    "ArchiveConfig",
    "Candidate",
    "AddResult",
    "Sample",
    "IslandArchive",
    "fitness_key",
    "is_better",
]

STATE_VERSION = 1


class IslandArchive:
    """Island MAP-Elites archive; see the module docstring for the scheme."""

    def __init__(self, config: ArchiveConfig | None = None) -> None:
        self.config = config if config is not None else ArchiveConfig()
        n = self.config.num_islands
        self._rng = random.Random(self.config.seed)
        self._records: dict[str, Candidate] = {}  # id -> the added record
        self._islands: list[dict[str, Candidate]] = [{} for _ in range(n)]
        self._member_cells: list[dict[str, Cell]] = [{} for _ in range(n)]
        self._grids: list[dict[Cell, str]] = [{} for _ in range(n)]
        self._elite: list[str] = []
        self._best_id: str | None = None
        self._current_island = 0
        self._generations = [0] * n
        self._last_migration_generation = 0
        self._feature_min: dict[str, float] = {}
        self._feature_max: dict[str, float] = {}
        self._num_added = 0

    # ---------------------------------------------------------------- queries

    def __len__(self) -> int:
        """Number of distinct live candidates (a migrated copy is not counted again)."""
        return len(self._records)

    def __contains__(self, candidate_id: object) -> bool:
        return candidate_id in self._records

    def get(self, candidate_id: str) -> Candidate | None:
        return self._records.get(candidate_id)

    def best(self) -> Candidate | None:
        """The fittest candidate ever added (never evicted), or None when empty."""
        return None if self._best_id is None else self._records[self._best_id]

    def members(self, island: int) -> list[Candidate]:
        """Members of `island`, copies included, in placement order."""
        return list(self._islands[self._island_index(island)].values())

    def elites(self) -> list[Candidate]:
        return [self._records[i] for i in self._elite]

    def cells(self, island: int | None = None) -> dict[Cell, Candidate]:
        """Cell -> incumbent of `island`'s grid; with None, the fittest incumbent per cell
        over all islands."""
        if island is not None:
            i = self._island_index(island)
            return {cell: self._islands[i][cid] for cell, cid in self._grids[i].items()}
        merged: dict[Cell, Candidate] = {}
        for i, grid in enumerate(self._grids):
            for cell, cid in grid.items():
                if cell not in merged or is_better(self._islands[i][cid], merged[cell]):
                    merged[cell] = self._islands[i][cid]
        return merged

    @property
    def generations(self) -> tuple[int, ...]:
        return tuple(self._generations)

    @property
    def num_added(self) -> int:
        return self._num_added

    # ---------------------------------------------------------------- updates

    def add(self, candidate: Candidate) -> AddResult:
        """Places a newly evaluated candidate on its island and in its cell."""
        if candidate.id in self._records:
            raise ValueError(f"candidate {candidate.id!r} is already in the archive")
        if candidate.migrated:
            raise ValueError(
                f"candidate {candidate.id!r}: migrated copies come from migrate(), not add()"
            )
        island = self._island_index(candidate.island)
        previous_best = self.best()
        self._records[candidate.id] = candidate
        self._num_added += 1
        self._generations[island] += 1
        cell, replaced, accepted = self._place(candidate, island)
        self._update_elite(candidate.id)
        is_new_best = previous_best is None or is_better(candidate, previous_best)
        if is_new_best:
            self._best_id = candidate.id
        evicted = self._enforce_cap(island, candidate.id)
        return AddResult(cell, replaced, is_new_best, accepted, evicted)

    def next_island(self) -> int:
        """The island whose turn it is (round-robin from 0); advances the pointer."""
        island = self._current_island
        self._current_island = (island + 1) % self.config.num_islands
        return island

    def sample(self, island: int) -> Sample:
        """Parent (see module docstring) and inspirations from `island`. An empty island
        first receives a copy of the best candidate."""
        if self._best_id is None:
            raise ValueError("cannot sample from an empty archive")
        i = self._island_index(island)
        members = self._islands[i]
        if not members:
            best = self._records[self._best_id]
            copy = dataclasses.replace(best, island=i, migrated=True)
            self._place(copy, i)
        cfg = self.config
        r = self._rng.random()
        if r < cfg.exploration_ratio:
            parent = self._rng.choice(list(members.values()))
        elif r < cfg.exploration_ratio + cfg.exploitation_ratio:
            on_island = [members[cid] for cid in self._elite if cid in members]
            if on_island:
                parent = self._rng.choice(on_island)
            elif self._elite:
                parent = self._live_copy(self._rng.choice(self._elite))
            else:
                parent = self._weighted(i)
        else:
            parent = self._weighted(i)
        ranked = sorted(
            (m for m in members.values() if m.id != parent.id), key=fitness_key, reverse=True
        )
        best = self._records[self._best_id]
        if best.id != parent.id and best.id not in members and cfg.num_top_inspirations > 0:
            ranked.insert(0, best)  # the best so far, from another island (as OpenEvolve)
        top = tuple(ranked[: cfg.num_top_inspirations])
        return Sample(parent, top, self._diverse(i, parent, {m.id for m in top}))

    def should_migrate(self) -> bool:
        return (
            self.config.num_islands > 1
            and max(self._generations) - self._last_migration_generation
            >= self.config.migration_interval
        )

    def migrate(self) -> list[Candidate]:
        """Copies each island's top members to the next island of the ring; returns the
        copies placed. Plans from the pre-migration state, so island order is moot."""
        n = self.config.num_islands
        plan: list[tuple[int, Candidate]] = []
        if n > 1:
            for i, members in enumerate(self._islands):
                ranked = sorted(members.values(), key=fitness_key, reverse=True)
                k = max(1, int(len(ranked) * self.config.migration_rate))
                plan += [((i + 1) % n, m) for m in ranked[:k] if not m.migrated]
        placed = []
        for target, migrant in plan:
            members = self._islands[target]
            if migrant.id in members or any(
                m.source_sha == migrant.source_sha for m in members.values()
            ):
                continue
            copy = dataclasses.replace(migrant, island=target, migrated=True)
            self._place(copy, target)
            self._enforce_cap(target, copy.id)
            placed.append(copy)
        self._last_migration_generation = max(self._generations)
        return placed

    # ---------------------------------------------------------------- internals

    def _island_index(self, island: int) -> int:
        if not isinstance(island, int) or not 0 <= island < self.config.num_islands:
            raise ValueError(f"island must be in [0, {self.config.num_islands}) (got {island!r})")
        return island

    def _live_copy(self, candidate_id: str) -> Candidate:
        record = self._records[candidate_id]
        if candidate_id in self._islands[record.island]:
            return record
        return next(m[candidate_id] for m in self._islands if candidate_id in m)

    def _bin(self, candidate: Candidate) -> Cell:
        coords = []
        for dim in self.config.feature_dimensions:
            value = candidate.feature(dim)
            lo = self._feature_min[dim] = min(self._feature_min.get(dim, value), value)
            hi = self._feature_max[dim] = max(self._feature_max.get(dim, value), value)
            fixed = self.config.feature_range(dim)
            if fixed is not None:
                lo, hi = fixed
            scaled = (value - lo) / (hi - lo) if hi > lo else 0.5
            bins = self.config.bins(dim)
            coords.append(min(bins - 1, max(0, int(scaled * bins))))
        return tuple(coords)

    def _place(self, member: Candidate, island: int) -> tuple[Cell, str | None, bool]:
        cell = self._bin(member)
        grid = self._grids[island]
        incumbent = grid.get(cell)
        accepted = incumbent is None or is_better(member, self._islands[island][incumbent])
        self._islands[island][member.id] = member
        self._member_cells[island][member.id] = cell
        if accepted:
            if incumbent is not None:
                self._remove(island, incumbent)
            grid[cell] = member.id
        return cell, incumbent if accepted else None, accepted

    def _remove(self, island: int, candidate_id: str) -> None:
        del self._islands[island][candidate_id]
        cell = self._member_cells[island].pop(candidate_id)
        if self._grids[island].get(cell) == candidate_id:
            del self._grids[island][cell]
        if not any(candidate_id in members for members in self._islands):
            del self._records[candidate_id]
            if candidate_id in self._elite:
                self._elite.remove(candidate_id)

    def _update_elite(self, candidate_id: str) -> None:
        if len(self._elite) < self.config.archive_size:
            self._elite.append(candidate_id)
            return
        worst = min(self._elite, key=lambda cid: fitness_key(self._records[cid]))
        if is_better(self._records[candidate_id], self._records[worst]):
            self._elite.remove(worst)
            self._elite.append(candidate_id)

    def _enforce_cap(self, island: int, protect: str) -> tuple[str, ...]:
        members = self._islands[island]
        evicted = []
        while len(members) > self.config.population_size:
            owners = set(self._grids[island].values())
            pool = [m for m in members.values() if m.id not in (protect, self._best_id)]
            victims = [m for m in pool if m.id not in owners] or pool
            if not victims:
                break
            victim = min(victims, key=fitness_key)  # ties: the earliest placed
            self._remove(island, victim.id)
            evicted.append(victim.id)
        return tuple(evicted)

    def _weighted(self, island: int) -> Candidate:
        members = list(self._islands[island].values())
        weights = [max(m.ood_acc, 0.001) for m in members]
        return self._rng.choices(members, weights=weights, k=1)[0]

    def _diverse(self, island: int, parent: Candidate, exclude: set[str]) -> tuple[Candidate, ...]:
        parent_cell = self._member_cells[parent.island].get(parent.id)
        by_cell: dict[Cell, list[Candidate]] = {}
        for m in self._islands[island].values():
            cell = self._member_cells[island][m.id]
            if m.id != parent.id and m.id not in exclude and cell != parent_cell:
                by_cell.setdefault(cell, []).append(m)
        count = min(self.config.num_diverse_inspirations, len(by_cell))
        cells = self._rng.sample(list(by_cell), count)
        return tuple(self._rng.choice(by_cell[cell]) for cell in cells)

    # ---------------------------------------------------------------- state

    def to_state(self) -> dict[str, Any]:
        """A JSON-serializable snapshot, RNG state included."""
        return {
            "version": STATE_VERSION,
            "config": self.config.to_dict(),
            "rng": rngstate.dump(self._rng),
            "records": [c.to_dict() for c in self._records.values()],
            "islands": [
                [[m.id, m.migrated, list(self._member_cells[i][m.id])] for m in members.values()]
                for i, members in enumerate(self._islands)
            ],
            "grids": [[[list(cell), cid] for cell, cid in grid.items()] for grid in self._grids],
            "elite": list(self._elite),
            "best_id": self._best_id,
            "current_island": self._current_island,
            "generations": list(self._generations),
            "last_migration_generation": self._last_migration_generation,
            "feature_min": dict(self._feature_min),
            "feature_max": dict(self._feature_max),
            "num_added": self._num_added,
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> IslandArchive:
        """Restores `to_state()` output; the result behaves exactly as the original."""
        if state.get("version") != STATE_VERSION:
            raise ValueError(
                f"archive state version {state.get('version')!r} (expected {STATE_VERSION})"
            )
        archive = cls(ArchiveConfig.from_dict(state["config"]))
        rngstate.load(archive._rng, state["rng"])
        archive._records = {c["id"]: Candidate.from_dict(c) for c in state["records"]}
        for i, members in enumerate(state["islands"]):
            for cid, migrated, cell in members:
                archive._islands[i][cid] = dataclasses.replace(
                    archive._records[cid], island=i, migrated=migrated
                )
                archive._member_cells[i][cid] = tuple(cell)
        for i, grid in enumerate(state["grids"]):
            archive._grids[i] = {tuple(cell): cid for cell, cid in grid}
        archive._elite = list(state["elite"])
        archive._best_id = state["best_id"]
        archive._current_island = state["current_island"]
        archive._generations = list(state["generations"])
        archive._last_migration_generation = state["last_migration_generation"]
        archive._feature_min = dict(state["feature_min"])
        archive._feature_max = dict(state["feature_max"])
        archive._num_added = state["num_added"]
        return archive
