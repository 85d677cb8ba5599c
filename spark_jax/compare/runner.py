"""Runs a comparison: methods x search seeds, each search a normal run directory.

The plan (base config, methods, seeds, budget, attempt cap) is written once to
`OUT/compare.json`; each (method, seed) gets `OUT/METHOD/seed-S.yaml` and the run directory
`OUT/METHOD/seed-S/`. Searches run one after another as `spark-jax search` child processes,
so each has its own lock, database and crash recovery: a finished run (its database records
`finished_at`) is never redone, an unfinished one is resumed, a missing one is started.
Re-running the same command after a kill -9 therefore finishes the comparison.

Equal terms (the paper's Figs. 4-5): every method runs the same number of proposal attempts
(`max_attempts`); the evaluated budget B never stops a run early (a run's own `budget` is
set out of reach), so a method whose proposals fail more often evaluates fewer candidates in
the same attempts. The report reads each run's evaluated count and its best at budget (B counts
the seed, as a search's `budget` does: the best of its first B - 1 candidates evaluated after
the seed; `compare.figures.best_at_budget`) beside the attempts.
"""

from __future__ import annotations

import concurrent.futures
import copy
import dataclasses
import json
import os
import pathlib
import shutil
import subprocess
import sys
from typing import Any, Callable, Mapping, Sequence

import yaml

from spark_jax.compare.methods import Method, resolve_methods
from spark_jax.config import search as search_config
from spark_jax.config.protocol import ConfigError
from spark_jax.search import final_test
from spark_jax.search.rundb import RunDB
from spark_jax.search.schema import RunDBError
from spark_jax.util.files import write_atomic
from spark_jax.workers.supervisor import package_pythonpath

__all__ = ["PLAN_FILE", "ComparePlan", "CompareError", "run_comparison", "run_status"]

PLAN_FILE = "compare.json"
# Every run's `executor.compile_cache_dir` unless the base config names one: relative to the
# run directory OUT/METHOD/seed-S, so it is OUT/xla-cache and moves with the comparison.
SHARED_COMPILE_CACHE = "../../xla-cache"
# And its `executor.result_cache_dir`: OUT/eval-cache, so the seed program every method's
# search trains (same job: same program, protocol, task and search seed) trains once per seed.
SHARED_RESULT_CACHE = "../../eval-cache"


class CompareError(ConfigError):
    """A comparison that cannot run as asked; the message names the problem."""


@dataclasses.dataclass(frozen=True)
class ComparePlan:
    """What a comparison runs.

    Attributes:
      base: the base search config as a plain mapping (YAML keys), before per-method keys.
      methods: method names, in table order (the first is the reference of ratios).
      seeds: search seeds (each run's top-level `seed`).
      budget: B, the evaluated programs at which best at budget is read (the seed counted,
        as in `search.budget`: the first B - 1 candidates after it); it does not stop a run.
      max_attempts: the proposal attempts every search runs, the same for every method
        (a method defined by its attempt count, Ours-1it, fixes its own).
      replay: a recorded comparison directory: every LLM run replays its cassette
        (`DIR/METHOD/seed-S.cassette.jsonl`) instead of calling an LLM.
      sequential: None (every seed of `seeds` runs), or a sequential design's fields
        (`stats.sequential.Design`): `seeds` are then the seeds up to the cap, added a round
        at a time for the methods whose pair with the first method is undecided
        (`compare.sequential`).
    """

    base: Mapping[str, Any]
    methods: tuple[str, ...]
    seeds: tuple[int, ...]
    budget: int
    max_attempts: int | None
    replay: str | None = None
    sequential: Mapping[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        d = json.loads(json.dumps(dataclasses.asdict(self)))
        for key in ("replay", "sequential"):  # plans written before them read the same
            if d[key] is None:
                del d[key]
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "ComparePlan":
        """The plan back from `to_dict()` (e.g. read from compare.json)."""
        return cls(
            base=dict(data["base"]),
            methods=tuple(data["methods"]),
            seeds=tuple(int(s) for s in data["seeds"]),
            budget=int(data["budget"]),
            max_attempts=None if data["max_attempts"] is None else int(data["max_attempts"]),
            replay=data.get("replay"),
            sequential=data.get("sequential"),
        )

    def run_config(self, method: Method, seed: int) -> dict[str, Any]:
        """The search config (YAML keys) of one run; validated by the caller."""
        values = copy.deepcopy(dict(self.base))
        attempts = method.max_attempts or self.max_attempts
        # The attempts stop every run: a budget above every possible evaluated count (the
        # seed included) never does.
        values.update(seed=seed, budget=attempts + 1, max_attempts=attempts)
        values["operator"] = {**(values.get("operator") or {}), **method.operator}
        return values

    @property
    def proposal_only(self) -> bool:
        """Whether its runs only propose and check (config key `proposal_only`), never train."""
        return bool(self.base.get("proposal_only"))

    def runs(self) -> list[tuple[Method, int]]:
        return [(m, s) for m in resolve_methods(list(self.methods)) for s in self.seeds]


def run_dir_of(out: pathlib.Path, method: Method, seed: int) -> pathlib.Path:
    return out / method.name / f"seed-{seed}"


def run_status(run_dir: pathlib.Path) -> str:
    """'missing', 'finished' (its database records finished_at), 'stale' (finished, but its
    final test trained on the search's own seeds, as runs before the fresh-seed rule did:
    a resume scores it again) or 'unfinished'."""
    if not (run_dir / "run.db").is_file():
        return "missing"
    try:
        with RunDB.open(run_dir / "run.db") as db:
            if db.get_meta("finished_at") is None:
                return "unfinished"
            stale = final_test.predates_fresh_seeds(db.get_meta(final_test.META_KEY))
            return "stale" if stale else "finished"
    except RunDBError:
        return "unfinished"


def _write_plan(out: pathlib.Path, plan: ComparePlan) -> None:
    path = out / PLAN_FILE
    if path.exists():
        stored = json.loads(path.read_text(encoding="utf-8"))
        if stored != plan.to_dict():
            raise CompareError(
                f"{out} holds a different comparison ({path}); use another --out, or the "
                "same methods, seeds, budget and config to continue it"
            )
        return
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(plan.to_dict(), indent=2) + "\n")


def cassette_of(out: pathlib.Path, method: Method, seed: int) -> pathlib.Path:
    """Where a run of a comparison records (or, replaying, reads) its LLM calls."""
    return out / method.name / f"seed-{seed}.cassette.jsonl"


def _with_cassette(values: dict, out: pathlib.Path, plan: ComparePlan, method, seed) -> None:
    """An LLM editor records every call of the run; with `plan.replay`, replays them."""
    editor = dict(values.get("editor") or {})
    if editor.get("kind") != "llm" and plan.replay is None:
        return
    if plan.replay is not None:
        editor.update(kind="llm", replay=str(cassette_of(pathlib.Path(plan.replay), method, seed)))
        editor.update(record=None, llm=None, preflight=False)
    elif not editor.get("replay"):
        editor["record"] = str(cassette_of(out.resolve(), method, seed))
    values["editor"] = editor


def _check_terms(plan: ComparePlan) -> None:
    """Every method needs the same attempt count; B and it are positive."""
    if plan.max_attempts is None:
        raise CompareError(
            "a comparison runs every method for the same number of attempts: give "
            "--max-attempts (or max_attempts in the config; the paper uses 100)"
        )
    if plan.budget < 1 or plan.max_attempts < 1:
        raise CompareError("--budget and --max-attempts must be at least 1")


def _validated_configs(
    plan: ComparePlan, out: pathlib.Path
) -> dict[tuple[str, int], dict[str, Any]]:
    configs = {}
    for method, seed in plan.runs():
        values = plan.run_config(method, seed)
        _with_cassette(values, out, plan, method, seed)
        try:
            cfg = search_config.from_dict(values)
        except ConfigError as e:
            raise CompareError(f"method {method.name}, seed {seed}: {e}") from None
        values["seed_program"] = cfg.seed_program  # absolute: runs start in their own dirs
        if cfg.proposal_only is not None:
            values["proposal_only"] = dataclasses.asdict(cfg.proposal_only)  # pool: absolute
        executor = dict(values.get("executor") or {})
        if cfg.executor.compile_cache_dir is None:  # one XLA cache for the comparison: the
            # seed program (and any program two runs share) compiles once, not once per run.
            executor["compile_cache_dir"] = SHARED_COMPILE_CACHE
        if cfg.executor.result_cache_dir is None:  # and one store of results
            executor["result_cache_dir"] = SHARED_RESULT_CACHE
        values["executor"] = executor
        configs[(method.name, seed)] = values
    return configs


def run_comparison(
    out_dir: str | pathlib.Path,
    plan: ComparePlan,
    *,
    log: Callable[[str], None] = lambda line: None,
    search_command: Sequence[str] | None = None,
    jobs: int = 1,
    runs: Sequence[tuple[Method, int]] | None = None,
) -> dict[tuple[str, int], str]:
    """Runs every search of `plan` (or of `runs`, a subset: one round of a sequential
    comparison, `compare.sequential`) that has not finished; returns each run's status.

    `search_command` is the argv prefix of `spark-jax search` (default: this interpreter);
    a search that exits non-zero is reported and the comparison goes on with the others.
    `jobs` searches run at once (each is its own process, database and cassette, so what
    each records does not depend on `jobs`).
    """
    out = pathlib.Path(out_dir)
    _check_terms(plan)
    if jobs < 1:
        raise CompareError(f"--jobs must be at least 1 (got {jobs})")
    configs = _validated_configs(plan, out)
    _write_plan(out, plan)
    command = list(search_command or [sys.executable, "-m", "spark_jax.cli", "search"])
    statuses: dict[tuple[str, int], str] = {}
    _run_searches(out, plan, configs, runs or plan.runs(), command, jobs, log, statuses)
    return {(m.name, s): run_status(run_dir_of(out, m, s)) for m, s in plan.runs()}


def _run_searches(out, plan, configs, runs, command, jobs, log, statuses) -> None:
    """Runs the searches of `runs` ((method, seed) pairs) that have not finished, `jobs` at
    once; each one's final status goes into `statuses`."""
    todo = []
    for method, seed in runs:
        run_dir = run_dir_of(out, method, seed)
        status = run_status(run_dir)
        if status == "finished":
            log(f"{method.name} seed {seed}: finished earlier, kept")
            statuses[(method.name, seed)] = status
            continue
        config_path = out / method.name / f"seed-{seed}.yaml"
        if status == "missing":
            config_path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(config_path, yaml.safe_dump(configs[(method.name, seed)]))
            if run_dir.exists():  # left by a kill before its database existed: nothing kept
                shutil.rmtree(run_dir)
            argv = [*command, "--config", str(config_path), "--run-dir", str(run_dir)]
        else:
            argv = [*command, "--resume", str(run_dir)]
        todo.append((method, seed, run_dir, argv, status))

    def one(item) -> None:
        method, seed, run_dir, argv, status = item
        doing = {"missing": "starting", "stale": "scoring its final test again on fresh seeds"}
        log(f"{method.name} seed {seed}: {doing.get(status, 'resuming')}")
        code = _run(argv, run_dir.parent / f"seed-{seed}.log")
        statuses[(method.name, seed)] = run_status(run_dir)
        if code != 0:
            log(f"{method.name} seed {seed}: search exited with {code} (see its log)")

    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for future in [pool.submit(one, item) for item in todo]:
            future.result()


def _run(argv: list[str], log_path: pathlib.Path) -> int:
    env = dict(os.environ)  # the child imports this same spark_jax
    env["PYTHONPATH"] = package_pythonpath(env)
    with log_path.open("ab") as log_file:
        return subprocess.call(argv, stdout=log_file, stderr=subprocess.STDOUT, env=env)
