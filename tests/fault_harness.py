"""A fast, deterministic search for fault-injection tests: the real loop, run database, lock,
CLI and signal handling, with a scripted executor (scores by hash, after a short delay) and
a scripted feasibility check instead of training and the sandbox.

  python tests/fault_harness.py search RUN_DIR [--resume] [--eval-s S]   (the CLI path)
  python tests/fault_harness.py hold RUN_DIR                             (holds the lock)
  python tests/fault_harness.py orphan                                   (a worker, then waits)
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import hashlib
import json
import pathlib
import sys
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
TINY = ROOT / "configs" / "tiny.yaml"
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # this checkout's spark_jax

import records  # noqa: E402


def config(**changes):
    from spark_jax.config import search as search_config

    cfg = search_config.load(TINY)
    return dataclasses.replace(cfg, **{"budget": 6, "max_attempts": 10, **changes})


class ScriptedExecutor:
    """Scores a program by its hash after `eval_s` seconds (the seed at once), on a daemon
    timer thread."""

    capacity = 1

    def __init__(self, eval_s: float = 0.02) -> None:
        self.eval_s = eval_s

    def submit(self, job):
        from spark_jax.jobs.executors import EvalResult

        h = int(hashlib.sha256(job.source.encode()).hexdigest(), 16)
        future: concurrent.futures.Future = concurrent.futures.Future()
        result = EvalResult(
            job_id=job.job_id,
            ok=True,
            error_type=None,
            error="",
            worker="scripted",
            wall_seconds=0.0,
            evaluation=records.evaluation(
                0.3 + (h % 7) / 100, val_score=0.5, macs=1000 + h % 5, params=10
            ),
        )
        delay = 0.02 if job.job_id == "seed" else self.eval_s  # slow candidates only
        timer = threading.Timer(delay, future.set_result, args=(result,))
        timer.daemon = True
        timer.start()
        return future

    def shutdown(self, wait: bool = True) -> None:
        pass


def checker(child, parent, factor):
    """Feasible unless the child's hash says otherwise; deterministic."""
    from spark_jax.feasibility.checker import FeasibilityReport

    time.sleep(0.01)
    if int(hashlib.sha256(child.encode()).hexdigest(), 16) % 4 == 0:
        return FeasibilityReport(False, ("template",), "smoke", "runtime_error", "scripted")
    return FeasibilityReport(True, ("template", "smoke"), None, None, "", params=10, macs=1000)


def run(run_dir, *, resume=False, eval_s=0.02, **changes):
    """The harness search in-process (as tests call it)."""
    from spark_jax.search import loop

    return loop.run_search(
        config(**changes),
        run_dir,
        resume=resume,
        command=["harness"],
        executor=ScriptedExecutor(eval_s),
        checker=checker,
    )


def summary(run_dir) -> dict:
    """What must be identical between an interrupted-and-resumed run and an uninterrupted one."""
    from spark_jax.search.rundb import RunDB

    with RunDB.open(pathlib.Path(run_dir) / "run.db") as db:
        proposals = [
            (
                p.attempt,
                p.status,
                p.island,
                p.parent_id,
                p.factor,
                db.program_id(p.child_source or ""),
            )
            for p in db.proposals()
        ]
        evaluations = sorted(
            (
                -1 if e["proposal_attempt"] is None else e["proposal_attempt"],
                e["program_id"],
                e["status"],
                e["ood_score"],
            )
            for e in db.evaluations()
        )
        calls = [(c["attempt"], c["role"], c["prompt_sha256"]) for c in db.llm_calls()]
        archive = json.dumps(db.latest_archive_snapshot()[1]["archive"], sort_keys=True)
        finished = db.get_meta("finished_at") is not None
    return dict(
        proposals=proposals,
        evaluations=evaluations,
        calls=calls,
        archive=archive,
        finished=finished,
    )


def _search_cli(run_dir: str, resume: bool, eval_s: float) -> int:
    from spark_jax import cli
    from spark_jax.search import loop

    cfg = config()
    real = loop.run_search

    def run_search(_cfg, run_dir, **kw):
        return real(cfg, run_dir, executor=ScriptedExecutor(eval_s), checker=checker, **kw)

    loop.run_search = run_search
    argv = (
        ["search", "--resume", run_dir]
        if resume
        else ["search", "--config", str(TINY), "--run-dir", run_dir]
    )
    return cli.main([*argv, "--no-progress"])


def _orphan() -> None:
    from spark_jax import workers

    child = workers.ChildProcess(
        [
            sys.executable,
            "-c",
            "from spark_jax.workers.child import serve; serve(lambda r, s: None)",
        ],
        env=workers.python_env(),
    )
    child.wait_ready(time.monotonic() + 60)
    print(child.pid, flush=True)
    time.sleep(600)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "search":
        eval_s = float(sys.argv[sys.argv.index("--eval-s") + 1]) if "--eval-s" in sys.argv else 0.02
        sys.exit(_search_cli(sys.argv[2], "--resume" in sys.argv, eval_s))
    if mode == "hold":
        from spark_jax.search.lock import RunLock

        pathlib.Path(sys.argv[2]).mkdir(parents=True, exist_ok=True)
        lock = RunLock.acquire(sys.argv[2])
        print("locked", flush=True)
        time.sleep(600)
    if mode == "orphan":
        _orphan()
