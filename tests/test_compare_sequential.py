"""`spark-jax compare --seeds auto`: search seeds added in rounds per undecided method.

The rounds are driven by the finished runs' test scores; here the searches are stood in for
(the runner's `run_comparison` records which runs a round asked for and "finishes" them with a
score drawn for the method), so the test checks which searches each round runs and what is
decided, not a search itself (tests/test_compare.py runs real ones)."""

from __future__ import annotations

import pathlib

import pytest

from spark_jax.compare import runner
from spark_jax.compare import sequential as compare_sequential
from spark_jax.compare.figures import RunFigures
from spark_jax.stats import sequential

DESIGN = {"alpha": 0.05, "delta": 5.0, "seeds_per_round": 3, "max_seeds": 9}


def _plan(methods=("spark", "openevolve", "funsearch")) -> runner.ComparePlan:
    return runner.ComparePlan(
        base={"preset": "tiny"},
        methods=methods,
        seeds=tuple(range(9)),
        budget=4,
        max_attempts=4,
        sequential=DESIGN,
    )


def _figures(method: str, seed: int, test: float | None) -> RunFigures:
    return RunFigures(method, seed, None, "offline", 0, 0, test_best=test)  # type: ignore[arg-type]


SCORE = {  # test OOD fraction by method: openevolve far above spark; funsearch noisy, level
    "spark": lambda s: 0.30 + 0.01 * (s % 3),
    "openevolve": lambda s: 0.50 + 0.01 * (s % 2),
    "funsearch": lambda s: 0.30 + (0.25 if s % 2 else -0.25),
}


@pytest.fixture
def fake_searches(monkeypatch):
    """Searches that finish at once with SCORE; returns the list of rounds run."""
    finished: dict[tuple[str, int], float] = {}
    rounds: list[list[tuple[str, int]]] = []

    def run_comparison(out, plan, *, log, jobs, runs):
        rounds.append([(m.name, s) for m, s in runs])
        for m, s in runs:
            finished[(m.name, s)] = SCORE[m.name](s)
        return {(m.name, s): "finished" for m, s in runs}

    def collect(out, plan):
        return [_figures(m, s, v) for (m, s), v in sorted(finished.items())]

    def run_status(run_dir: pathlib.Path) -> str:
        method, seed = run_dir.parent.name, int(run_dir.name.split("-")[1])
        return "finished" if (method, seed) in finished else "missing"

    monkeypatch.setattr(runner, "run_comparison", run_comparison)
    monkeypatch.setattr(runner, "run_status", run_status)
    monkeypatch.setattr(compare_sequential, "collect", collect)
    return rounds


def test_rounds_run_only_the_undecided_methods(tmp_path, fake_searches):
    plan = _plan()
    compare_sequential.run_sequential(tmp_path, plan)
    rounds = fake_searches
    assert rounds[0] == [(m, s) for s in range(3) for m in ("spark", "openevolve")] + [
        ("funsearch", s) for s in range(3)
    ]
    # openevolve: +20 pp with little spread, a win at the first look (6 seeds); funsearch's
    # +-25 pp swings make it hopeless there (futility): no third round for either.
    assert len(rounds) == 2
    found = compare_sequential.decisions(plan, _grouped(tmp_path, plan))
    assert [(d.method, d.decision.verdict, d.seeds) for d in found] == [
        ("openevolve", sequential.WIN, 6),
        ("funsearch", sequential.CANNOT_TELL, 6),
    ]
    lines = "\n".join(compare_sequential.section_lines(plan, _grouped(tmp_path, plan)))
    assert "| `openevolve` | win | 6 | +19.50 |" in lines
    assert "Bonferroni" in lines and "±5 pp" in lines


def _grouped(out, plan):
    from spark_jax.compare.figures import by_method

    return by_method(compare_sequential.collect(out, plan))


def test_a_fixed_plan_has_no_sequential_section():
    plan = runner.ComparePlan(base={}, methods=("spark",), seeds=(0,), budget=2, max_attempts=2)
    assert compare_sequential.section_lines(plan, {}) == []
    assert "sequential" not in plan.to_dict()  # plans stored before it read the same
    again = runner.ComparePlan.from_dict(_plan().to_dict())
    assert again.sequential == DESIGN
