"""The noise-aware, leak-free search: K seeds per candidate ranked by their mean, an OOD
validation set as the fitness source with the official test set scored only for the final
programs, and the report's verdict against the seed's spread."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import hashlib
import json
import pathlib

import pytest
import records  # noqa: E402 - tests/records.py: record builders

from spark_jax.compare.runner import run_status
from spark_jax.config import search as search_config
from spark_jax.config.protocol import ConfigError
from spark_jax.jobs.executors import EvalResult
from spark_jax.report import tables as report
from spark_jax.search import final_test
from spark_jax.search import loop as search
from spark_jax.search.rundb import RunDB

ROOT = pathlib.Path(__file__).resolve().parents[1]
TINY = ROOT / "configs" / "tiny.yaml"
OFFICIAL_TEST_SEED = 3


# ------------------------------------------------------------------ config


def test_fitness_default_selects_on_a_validation_set_never_the_test_set():
    cfg = search_config.default_config()
    assert (cfg.fitness.seeds, cfg.fitness.source) == (1, "ood_val")
    chosen = cfg.fitness.selection_protocol(cfg.protocol)
    assert chosen.test_seed == cfg.fitness.ood_val_seed != cfg.protocol.test_seed
    for path in (ROOT / "configs").glob("*.yaml"):  # no shipped config selects on test
        assert search_config.load(path).fitness.source == "ood_val", path.name
    paper = search_config.from_dict({"fitness": {"source": "ood_test"}})  # on request
    assert paper.fitness.selection_protocol(paper.protocol) == paper.protocol
    cfg = search_config.from_dict({"fitness": {"seeds": 3}})
    assert search_config.from_dict(cfg.to_dict()) == cfg  # the run's snapshot reads back
    old = cfg.to_dict()
    old.pop("fitness")  # a snapshot from before the key: today's defaults
    assert search_config.from_dict(old).fitness == search_config.FitnessConfig()


@pytest.mark.parametrize(
    "values, match",
    [
        ({"fitness": {"seeds": 0}}, "search.fitness.seeds: must be >= 1"),
        ({"fitness": {"source": "test"}}, "search.fitness.source: must be one of"),
        ({"fitness": {"sede": 2}}, "unknown key\\(s\\) search.fitness.sede"),
        (
            {"fitness": {"source": "ood_val", "ood_val_seed": 3}},
            "search.fitness.ood_val_seed: must differ from protocol.test_seed",
        ),
        (
            {"fitness": {"seeds": 2}, "cascade": {"threshold": 0.5}},
            "search.fitness.seeds: 2 seeds per candidate cannot be combined",
        ),
    ],
)
def test_bad_fitness_config_names_the_key(values, match):
    with pytest.raises(ConfigError, match=match):
        search_config.from_dict(values)


# ------------------------------------------------------------------ search (scripted scores)


def _x(source: str) -> float:
    """A program's hidden quality in [0, 1), from its source."""
    return int(hashlib.sha256(source.encode()).hexdigest(), 16) % 1000 / 1000


class _SeededExecutor:
    """Scores K seeds of a program instantly. Seed 0's score rises with `_x`, the mean falls
    with it: ranking by seed 0 and by the mean disagree. The score depends on the OOD set's
    sampler seed too, so the selection set and the official test set score differently."""

    capacity = 1

    def __init__(self, die_on: str | None = None):
        self.die_on, self.jobs = die_on, []

    def submit(self, job):
        if job.job_id == self.die_on:
            raise KeyboardInterrupt("simulated kill")
        self.jobs.append(job)
        x = _x(job.source)
        shift = 0.0 if job.protocol["test_seed"] == OFFICIAL_TEST_SEED else 0.05
        scores = tuple(round(v + shift, 6) for v in [0.2 + 0.5 * x, 0.9 - x, 0.5][: job.seeds])
        ev = records.evaluation(
            sum(scores) / len(scores),
            val_score=0.5,
            macs=1000,
            seeds=tuple(range(job.seed, job.seed + job.seeds)),
            seed_scores=scores,
            seed_val_scores=(0.5,) * job.seeds,
        )
        future = concurrent.futures.Future()
        future.set_result(EvalResult(job.job_id, True, ev, None, "", "scripted", 0.0))
        return future

    def shutdown(self, wait=True):
        pass


@pytest.fixture(scope="module")
def checker(sandbox_worker, check_options):
    from spark_jax.feasibility import checker as feasibility

    def check(child, parent, factor):
        return feasibility.check_program(
            child, parent_source=parent, factor=factor, options=check_options, worker=sandbox_worker
        )

    return check


def _cfg(**fitness):
    cfg = dataclasses.replace(search_config.load(TINY), budget=5, max_attempts=8)
    return dataclasses.replace(cfg, fitness=search_config.FitnessConfig(**fitness))


def _scored(run_dir: pathlib.Path) -> dict[str, tuple[float, ...]]:
    with RunDB.open(run_dir / search.DB_NAME) as db:
        return {
            e["program_id"]: tuple(json.loads(e["evaluation_json"])["seed_scores"])
            for e in db.evaluations()
            if e["status"] == "ok"
        }


def test_k2_search_ranks_by_the_mean_and_resumes(tmp_path, checker):
    cfg = _cfg(seeds=2)
    ex = _SeededExecutor()
    result = search.run_search(cfg, tmp_path / "a", executor=ex, checker=checker)
    assert ex.jobs[0].job_id == "seed" and {j.seeds for j in ex.jobs} == {2}  # seed too
    scored = _scored(tmp_path / "a")
    assert len(scored) >= 3 and all(len(s) == 2 for s in scored.values())  # per-seed scores
    mean = {pid: sum(s) / 2 for pid, s in scored.items()}
    by_mean = max(mean, key=mean.get)
    by_seed0 = max(scored, key=lambda pid: scored[pid][0])
    assert by_mean != by_seed0  # the two rules disagree here, so this can tell them apart
    assert result.best_program_id == by_mean and result.best_ood == pytest.approx(mean[by_mean])
    with RunDB.open(tmp_path / "a" / search.DB_NAME) as db:
        state = db.latest_archive_snapshot()[1]
        assert db.get_meta("seeds_per_candidate") == 2
        assert db.get_meta("config")["fitness"]["seeds"] == 2
    assert state["archive"]["best_id"] == by_mean
    for c in state["archive"]["records"]:  # archive placement on the mean
        assert c["ood_acc"] == pytest.approx(mean[c["id"]])
    history = state["history"]  # the RC signals see the means too
    assert history["best_score"] == pytest.approx(mean[by_mean])
    landed = [o["ood_score"] for o in history["outcomes"] if o["status"] == "evaluated"]
    assert landed and all(any(v == pytest.approx(m) for m in mean.values()) for v in landed)
    # Killed mid-search, then resumed: the same run.
    with pytest.raises(KeyboardInterrupt):
        search.run_search(
            cfg, tmp_path / "b", executor=_SeededExecutor(die_on="3"), checker=checker
        )
    resumed = search.run_search(
        cfg, tmp_path / "b", resume=True, executor=_SeededExecutor(), checker=checker
    )
    assert _scored(tmp_path / "b") == scored
    assert resumed.best_program_id == result.best_program_id


def ex_seed_id(run_dir: pathlib.Path) -> str:
    with RunDB.open(run_dir / search.DB_NAME) as db:
        return next(e["program_id"] for e in db.evaluations() if e["proposal_attempt"] is None)


def _official(jobs) -> list:
    return [j for j in jobs if j.protocol["test_seed"] == OFFICIAL_TEST_SEED]


def test_ood_val_touches_the_test_set_only_for_the_final_programs(tmp_path, checker):
    cfg = _cfg(seeds=2, source="ood_val")
    ex = _SeededExecutor()
    result = search.run_search(cfg, tmp_path / "a", executor=ex, checker=checker)
    selection = [j for j in ex.jobs if j.protocol["test_seed"] == cfg.fitness.ood_val_seed]
    official = _official(ex.jobs)
    assert len(selection) == len(_scored(tmp_path / "a")) >= 3 and {j.seeds for j in official} == {
        2
    }
    with RunDB.open(tmp_path / "a" / search.DB_NAME) as db:
        seed_id = ex_seed_id(tmp_path / "a")
        stored = db.get_meta("final_test")
        assert db.get_meta("fitness_source") == "ood_val"
        sources = {db.program_source(pid): pid for pid in stored["programs"]}
        evals = {e["program_id"]: e for e in db.evaluations()}
    # Exactly the final programs (the seed and the best), once each, on the official set.
    assert {seed_id, result.best_program_id} <= set(sources.values())
    assert len(official) == len(stored["programs"]) in (2, 3)
    assert sorted(j.source for j in official) == sorted(sources)
    roles = {pid: e["roles"] for pid, e in stored["programs"].items()}
    assert "seed" in roles[seed_id] and any("best" in r for r in roles.values())
    # The selection score is not the test score.
    seed_test = stored["programs"][seed_id]["evaluation"]["ood_score"]
    assert evals[seed_id]["ood_score"] != pytest.approx(seed_test)
    # The final test never trains on a seed the search trained (and selected) with.
    searched = {s for j in selection for s in range(j.seed, j.seed + j.seeds)}
    tested = {s for j in official for s in range(j.seed, j.seed + j.seeds)}
    assert searched == {cfg.seed, cfg.seed + 1} and tested == {cfg.seed + 2, cfg.seed + 3}
    assert stored["train_seeds"] == list(final_test.train_seeds(cfg)) == sorted(tested)
    # Resuming the finished run scores nothing again.
    again = _SeededExecutor()
    search.run_search(cfg, tmp_path / "a", resume=True, executor=again, checker=checker)
    assert again.jobs == []
    assert run_status(tmp_path / "a") == "finished"
    # Killed while scoring the second final program: the resume scores only that one.
    second = sorted(stored["programs"], key=lambda p: p != seed_id)[1]
    with pytest.raises(KeyboardInterrupt):
        search.run_search(
            cfg,
            tmp_path / "b",
            executor=_SeededExecutor(die_on=f"final-test-{second}"),
            checker=checker,
        )
    rest = _SeededExecutor()
    search.run_search(cfg, tmp_path / "b", resume=True, executor=rest, checker=checker)
    assert [j.job_id for j in rest.jobs] == [f"final-test-{second}"]
    md = report.write_report(tmp_path / "a").report.read_text()
    assert "selected on the OOD validation set (`ood_val`, sampler seed 1003)" in md
    assert "official OOD test set; mean over 2 seed(s) per program" in md
    assert "| `final_test." not in md  # the results are in the tables, not the config dump
    assert "selected on the test set" not in md  # validation selection: no such note
    assert "each trained again with training seeds [2, 3], which the search never" in md


def test_a_final_test_on_the_searchs_own_seeds_is_scored_again(tmp_path, checker):
    """A run finished before the fresh-seed rule (its final test reused the search's seeds):
    `compare` sees it as stale, a resume scores the final programs again on fresh seeds and
    keeps the earlier results under `superseded`."""
    cfg = _cfg(seeds=1, source="ood_val")
    search.run_search(cfg, tmp_path / "a", executor=_SeededExecutor(), checker=checker)
    with RunDB.open(tmp_path / "a" / search.DB_NAME) as db:
        fresh = db.get_meta(final_test.META_KEY)
        old = {k: v for k, v in fresh.items() if k != "train_seeds"}
        db.set_meta(final_test.META_KEY, old)  # as a run before the rule stored it
    assert run_status(tmp_path / "a") == "stale"
    md = report.write_report(tmp_path / "a").report.read_text()
    assert "trained again with the search's own seeds" in md and "optimistic" in md
    again = _SeededExecutor()
    search.run_search(cfg, tmp_path / "a", resume=True, executor=again, checker=checker)
    assert len(again.jobs) == len(old["programs"]) and {j.seed for j in again.jobs} == {1}
    with RunDB.open(tmp_path / "a" / search.DB_NAME) as db:
        now = db.get_meta(final_test.META_KEY)
    assert now["train_seeds"] == [1] and now["superseded"] == [old]
    assert set(now["programs"]) == set(old["programs"])
    assert run_status(tmp_path / "a") == "finished"


def test_final_programs_of_an_ood_test_run_are_not_rescored(tmp_path, checker):
    ex = _SeededExecutor()
    search.run_search(
        _cfg(seeds=1, source="ood_test"), tmp_path / "a", executor=ex, checker=checker
    )
    assert {j.seeds for j in ex.jobs} == {1} and len(_official(ex.jobs)) == len(ex.jobs)
    with RunDB.open(tmp_path / "a" / search.DB_NAME) as db:
        assert db.get_meta(final_test.META_KEY) is None


# ------------------------------------------------------------------ the report's verdict

_META = {"task": "dfs", "preset": "smoke", "seed": 0, "seeds_per_candidate": 3}


def _run_with(tmp_path: pathlib.Path, seed_scores, best_scores, best_first_seed=0) -> str:
    meta = dict(_META, seeds_per_candidate=len(seed_scores), fitness_source="ood_test")
    with RunDB.create(tmp_path / "run.db", meta) as db:
        seed_id = db.insert_program("seed = 0\n")
        runs = ((None, seed_id, seed_scores, 0), (0, None, best_scores, best_first_seed))
        for attempt, pid, scores, first in runs:
            if attempt is not None:
                db.record_proposal(records.proposal(0, parent_id=seed_id))
                pid = db.program_id("y = 0\n")
            many = len(scores) > 1
            ev = records.evaluation(
                sum(scores) / len(scores),
                seeds=tuple(range(first, first + len(scores))) if many else None,
                seed_scores=tuple(scores) if many else None,
            )
            result = EvalResult("j", True, ev, None, "", "test", 1.0)
            db.record_evaluation(pid, attempt, records.job(), result)
    return report.write_report(tmp_path).report.read_text()


def _verdict(md: str) -> str:
    return next(line for line in md.splitlines() if line.startswith("**Verdict"))


def test_verdict_with_one_seed_is_cannot_tell(tmp_path):
    md = _run_with(tmp_path, [0.50], [0.60])
    verdict = _verdict(md)
    assert "scores above the seed: OOD 60.00% vs 50.00% (+10.00 pp)" in verdict
    assert "Verdict: cannot tell (fewer than 2 training seeds per program: no test)" in verdict
    assert "beats" not in verdict
    assert "cannot separate them" in verdict and "18% and 29% OOD on dfs" in verdict
    assert "one training seed per program" in md


def test_verdict_margin_inside_the_seeds_spread(tmp_path):
    md = _run_with(tmp_path, [0.40, 0.50, 0.60], [0.50, 0.55, 0.60])  # +5 pp, seed std 10 pp
    verdict = _verdict(md)
    assert "mean over 3 seed(s) per program" in verdict and "(+5.00 pp)" in verdict
    # Per-seed differences +10, +5, 0: |mean| 5 for the flips (+,+) and (-,-) of the non-zero
    # differences, 5/3 for the mixed ones: 4 of the 8 flips are as extreme, p = 0.5.
    assert "Verdict: cannot tell (exact sign-flip on the shared seeds, p = 0.5 > alpha" in verdict
    assert "selected the best on, so the test is optimistic" in verdict
    assert "| seed | `" in md and "50.00 ± 10.00 (40.00, 50.00, 60.00)" in md


def test_verdict_clear_margin_on_three_seeds_still_cannot_tell(tmp_path):
    md = _run_with(tmp_path, [0.48, 0.50, 0.52], [0.60, 0.62, 0.64])  # +12 pp on every seed
    verdict = _verdict(md)
    assert "beats" not in verdict and "(+12.00 pp)" in verdict
    assert "Verdict: cannot tell (exact sign-flip on the shared seeds, p = 0.25" in verdict
    assert "smallest possible p is 0.25" in verdict  # 3 seeds can never reach 0.05
    assert "official OOD test set (`ood_test`, the paper's protocol)" in md


def test_verdict_beats_with_six_shared_seeds(tmp_path):
    seed = [0.48, 0.50, 0.52, 0.47, 0.51, 0.49]
    md = _run_with(tmp_path, seed, [s + 0.1 for s in seed])
    assert "beats the seed: OOD" in _verdict(md)
    assert "exact sign-flip on the shared seeds, p = 0.0312 <= alpha = 0.05" in _verdict(md)


def test_verdict_unpaired_when_the_seeds_differ(tmp_path):
    seed = [0.60, 0.62, 0.64, 0.61]
    md = _run_with(tmp_path, seed, [0.40, 0.42, 0.44, 0.41], best_first_seed=10)
    # 4 vs 4 on different seeds: exact permutation, 2/70.
    assert "is worse than the seed: OOD" in _verdict(md)
    assert "exact permutation, p = 0.0286 <= alpha" in _verdict(md)


def test_an_ood_test_run_says_its_best_was_selected_on_the_test_set(tmp_path):
    md = _run_with(tmp_path / "paper", [0.50], [0.60])  # fitness_source: ood_test
    lines = md.splitlines()
    note = lines.index(next(x for x in lines if x.startswith("**Selection on the test set")))
    assert lines[note - 2].startswith("**Verdict")  # right beside the verdict
    assert "the best program was selected on the test set (official OOD test set" in md
    assert "biased upward" in md and "spark-jax benchmark RUN_DIR" in md


# ------------------------------------------------------------------ the worker carries K


def test_worker_trains_the_jobs_seeds(seed_paths):
    from spark_jax.config import protocol
    from spark_jax.jobs import worker
    from spark_jax.jobs.executors import EvalJob

    cfg = protocol.get_preset("tiny").replace(train_steps=2, eval_every=2)
    job = EvalJob(
        job_id="k2",
        source=seed_paths["mpnn"].read_text(),
        program_name="mpnn",
        task="bfs",
        protocol=cfg.to_dict(),
        seed=5,
        seeds=2,
    )
    out = worker.run_job(job.to_dict())
    assert out["ok"], out["error"]
    ev = out["evaluation"]
    assert ev["seeds"] == [5, 6] and len(ev["seed_scores"]) == 2
    assert ev["ood_score"] == pytest.approx(sum(ev["seed_scores"]) / 2)
