"""Tests for the feasibility pipeline, its sandbox worker and `spark-jax check`.

One session-scoped warm worker serves every check (tiny sizes: H 16, N 5, B 2).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import pathlib
import pickle
import sys
import time

import pytest

from spark_jax.cli import check as feasibility_cli
from spark_jax.config import protocol as config
from spark_jax.feasibility import checker as feasibility
from spark_jax.feasibility.checker import CheckOptions, FeasibilityReport, check_program
from spark_jax.feasibility.sandbox import SandboxWorker

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import feasibility_corpus as corpus  # noqa: E402

PROCESSORS = pathlib.Path(__file__).resolve().parents[1] / "processors"
SEEDS = ("triplet_gmpnn", "mpnn", "pgn")
MASKING = {"triplet_gmpnn": False, "mpnn": False, "pgn": True}
# The tiny preset's processor settings (as `--preset tiny`); the conftest fixture's limits.
OPTIONS = CheckOptions.from_protocol(config.get_preset("tiny"), timeout_s=60.0, memory_mb=1024)
CASE_NAMES = [c.name for c in corpus.build_cases((PROCESSORS / "pgn.py").read_text(), True)]


@pytest.fixture(scope="session")
def worker(sandbox_worker, check_options):
    assert check_options == OPTIONS
    return sandbox_worker


@pytest.fixture(scope="session")
def seeds(seed_paths) -> dict[str, str]:
    return {name: seed_paths[name].read_text() for name in SEEDS}


def _check(case: corpus.Case, worker: SandboxWorker) -> FeasibilityReport:
    options = dataclasses.replace(OPTIONS, **dict(case.overrides))
    return check_program(
        case.source, parent_source=case.parent, factor=case.factor, options=options, worker=worker
    )


@pytest.mark.parametrize("name", CASE_NAMES)
@pytest.mark.parametrize("seed", SEEDS)
def test_corpus(seed, name, seeds, worker):
    case = next(c for c in corpus.build_cases(seeds[seed], MASKING[seed]) if c.name == name)
    report = _check(case, worker)
    got = (report.failure_stage, report.failure_type)
    assert got == (case.stage, case.failure_type), report.reason
    assert report.feasible == (case.stage is None)
    if case.parent is not None:
        assert report.entanglement == case.entanglement
    else:
        assert report.entanglement is None
    if report.feasible:
        assert report.stages_passed[-4:] == ("syntax", "interface", "semantic", "budget")
        assert report.params > 0 and report.macs > 0
        assert report.reason == ""
    else:
        assert report.reason
        assert case.stage not in report.stages_passed
        assert set(report.stages_passed) < set(feasibility.STAGES)
        assert case.failure_type in (
            feasibility.FAILURE_TYPES[case.stage] + feasibility.RUNTIME_FAILURES
        )
    assert case.stage is None or case.stage in report.timings


def test_jax_memory_bomb_is_memory(seeds, worker):
    source = corpus.jax_memory_bomb(seeds["triplet_gmpnn"])
    report = check_program(source, options=OPTIONS, worker=worker)
    assert (report.failure_stage, report.failure_type) == ("semantic", "memory"), report.reason


def test_not_stubbed_subtle_shape(seeds, worker):
    """A rank- and size-preserving shape bug passes every static stage but semantic."""
    seed = seeds["pgn"]
    child = corpus.sub(seed, corpus.RETURN, "return jnp.transpose(ret, (1, 0, 2)),")
    report = check_program(
        child, parent_source=seed, factor="ACTION", options=OPTIONS, worker=worker
    )
    assert report.stages_passed == ("template", "locality", "syntax", "interface")
    assert (report.failure_stage, report.failure_type) == ("semantic", "shape_mismatch")
    assert "(5, 2, 16)" in report.reason and "(2, 5, 16)" in report.reason


def test_seed_params_and_macs_are_real(seed_paths, seeds, worker):
    """The worker's counts equal the ones computed in this process on the trusted seed."""
    import jax

    from spark_jax import program
    from spark_jax.program import macs

    module = program.load_module(program.read_program(seed_paths["triplet_gmpnn"]))
    proc = program.build_flax_processor(
        module, OPTIONS.hidden_size, OPTIONS.use_ln, OPTIONS.nb_triplet_fts
    )
    shapes = jax.eval_shape(
        lambda x: proc.init(jax.random.PRNGKey(0), **x),
        macs.reference_inputs(OPTIONS.nodes, OPTIONS.hidden_size),
    )
    params = sum(leaf.size for leaf in jax.tree_util.tree_leaves(shapes))
    expected_macs = macs.flax_processor_macs(proc, OPTIONS.macs_nodes, OPTIONS.hidden_size)
    report = check_program(seeds["triplet_gmpnn"], options=OPTIONS, worker=worker)
    assert (report.params, report.macs) == (params, expected_macs)
    assert report.masks_non_edges is False


def test_budget_caps(seeds, worker):
    ok = check_program(seeds["mpnn"], options=OPTIONS, worker=worker)
    capped = dataclasses.replace(OPTIONS, max_params=ok.params - 1, max_macs=ok.macs)
    report = check_program(seeds["mpnn"], options=capped, worker=worker)
    assert (report.failure_stage, report.failure_type) == ("budget", "over_budget")
    assert "max_params" in report.reason and "max_macs" not in report.reason
    exact = dataclasses.replace(OPTIONS, max_params=ok.params, max_macs=ok.macs)
    assert check_program(seeds["mpnn"], options=exact, worker=worker).feasible


def test_crash_and_timeout_do_not_affect_next_check(seeds, worker):
    first = worker.check(seeds["pgn"], OPTIONS.to_dict())
    assert first["ok"] and not first["recycled"]
    crash = worker.check("import os\nos.kill(os.getpid(), 11)\n", OPTIONS.to_dict())
    assert (crash["failure_stage"], crash["failure_type"]) == ("syntax", "crash")
    assert "SIGSEGV" in crash["reason"] and crash["recycled"]
    after = worker.check(seeds["pgn"], OPTIONS.to_dict())
    assert after["ok"] and after["worker_pid"] != first["worker_pid"]

    hang = dict(OPTIONS.to_dict(), timeout_s=2.0)
    begin = time.perf_counter()
    timeout = worker.check("import time\nwhile True:\n    time.sleep(0.01)\n", hang)
    assert time.perf_counter() - begin < 10
    assert (timeout["failure_stage"], timeout["failure_type"]) == ("syntax", "timeout")
    report = check_program(seeds["pgn"], options=OPTIONS, worker=worker)
    assert report.feasible, report.reason


def test_exit_in_candidate_is_classified(seeds, worker):
    source = corpus.prepend(seeds["mpnn"], "ACTION", ["raise SystemExit(3)"])
    report = check_program(source, options=OPTIONS, worker=worker)
    assert (report.failure_stage, report.failure_type) == ("semantic", "runtime_error")
    assert "SystemExit" in report.reason
    assert check_program(seeds["mpnn"], options=OPTIONS, worker=worker).feasible


def test_closed_worker_is_a_sandbox_error(seeds):
    closed = SandboxWorker()
    closed.close()
    report = check_program(seeds["mpnn"], options=OPTIONS, worker=closed)
    assert (report.failure_stage, report.failure_type) == ("syntax", "sandbox_error")


def test_caller_errors_raise(seeds):
    with pytest.raises(ValueError, match="factor"):
        check_program(seeds["mpnn"], factor="ACTION", options=OPTIONS)
    with pytest.raises(ValueError, match="Unexpected factor"):
        check_program(seeds["mpnn"], parent_source=seeds["mpnn"], factor="BOTH")
    with pytest.raises(ValueError, match="hidden_size"):
        CheckOptions(hidden_size=0)


def test_report_record(seeds, worker):
    report = check_program(seeds["pgn"], parent_source=seeds["pgn"], options=OPTIONS, worker=worker)
    assert report.feasible and report.entanglement == "none"
    assert report.masks_non_edges is True
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.feasible = False  # type: ignore[misc]
    with pytest.raises((TypeError, AttributeError)):
        report.timings["semantic"] = 0.0  # type: ignore[index]
    assert list(report.timings) == ["template", "syntax", "interface", "semantic", "budget"]
    assert pickle.loads(pickle.dumps(report)) == report
    data = json.loads(report.to_json())
    assert data["feasible"] is True and data["failure_type"] is None
    assert data["timings"]["semantic"] > 0 and data["params"] == report.params
    assert hash(report) == hash(pickle.loads(pickle.dumps(report)))


def test_masking_claim_is_the_parents(seeds, worker):
    """A child cannot drop its parent's MASKS_NON_EDGES claim to skip the masking check."""
    leak = corpus.sub(seeds["pgn"], corpus.MASKED_MAX, "maxarg = msgs")
    dropped = leak.replace("MASKS_NON_EDGES = True", "MASKS_NON_EDGES = False")
    assert dropped != leak
    report = check_program(dropped, parent_source=seeds["pgn"], options=OPTIONS, worker=worker)
    assert (report.failure_stage, report.failure_type) == ("semantic", "mask_leak"), report.reason
    assert report.masks_non_edges is True
    # A seed (no parent) is held to its own claim; a child can still not add one it breaks.
    assert check_program(dropped, options=OPTIONS, worker=worker).feasible
    claimed = seeds["mpnn"].replace("MASKS_NON_EDGES = False", "MASKS_NON_EDGES = True")
    report = check_program(claimed, parent_source=seeds["mpnn"], options=OPTIONS, worker=worker)
    assert report.feasible and report.masks_non_edges is False


def test_semantic_check_runs_at_a_second_larger_size(seeds, worker):
    line = "        ret = jax.nn.relu(self.o1(z) + self.o2(msgs))  # [B, N, H]\n"
    assert line in seeds["mpnn"]
    small_only = seeds["mpnn"].replace(line, line + "        ret = ret / (n < 8)\n")
    report = check_program(small_only, parent_source=seeds["mpnn"], options=OPTIONS, worker=worker)
    assert (report.failure_stage, report.failure_type) == ("semantic", "non_finite")
    assert "N=13" in report.reason
    options = dataclasses.replace(OPTIONS, large_nodes=7)
    assert options.semantic_sizes == (5, 7)
    assert check_program(small_only, options=options, worker=worker).feasible


def test_options_from_protocol():
    options = CheckOptions.from_protocol(config.get_preset("smoke"), max_params=10)
    assert (options.hidden_size, options.nb_triplet_fts, options.max_params) == (64, 8, 10)


# CLI.
def _cli(argv: list[str], worker: SandboxWorker, capsys) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser()
    feasibility_cli.add_arguments(parser)
    code = feasibility_cli.run(parser.parse_args(argv), worker=worker)
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_feasible_json(seed_paths, worker, capsys):
    code, out, _ = _cli(
        [str(seed_paths["triplet_gmpnn"]), "--preset", "tiny", "--json"], worker, capsys
    )
    assert code == 0
    data = json.loads(out)
    assert data["feasible"] is True and data["macs"] > 0
    assert (data["nodes"], data["large_nodes"]) == (5, 13)  # the semantic check's two sizes


def test_cli_infeasible(seed_paths, seeds, worker, capsys, tmp_path):
    child = tmp_path / "child.py"
    child.write_text(corpus.sub(seeds["pgn"], corpus.MASKED_MAX, "maxarg = msgs"))
    code, out, _ = _cli(
        [str(child), "--parent", str(seed_paths["pgn"]), "--factor", "action", "--preset", "tiny"],
        worker,
        capsys,
    )
    assert code == 1
    assert "infeasible: semantic/mask_leak" in out and "entanglement: action" in out
    code, out, _ = _cli(
        [
            str(child),
            "--parent",
            str(seed_paths["pgn"]),
            "--factor",
            "OPERATOR",
            "--preset",
            "tiny",
            "--json",
        ],
        worker,
        capsys,
    )
    assert code == 1 and json.loads(out)["failure_type"] == "locality"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["missing.py"], "not found"),
        (["{seed}", "--factor", "ACTION"], "--factor needs --parent"),
        (["{seed}", "--parent", "{seed}", "--factor", "BOTH"], "--factor must be"),
        (["{seed}", "--preset", "huge"], "unknown preset"),
        (
            ["{seed}", "--nodes", "6", "--large-nodes", "6"],
            "large_nodes: must be an integer > nodes",
        ),
        (["{seed}", "--parent", "missing.py"], "parent file not found"),
    ],
)
def test_cli_usage_errors(argv, message, seed_paths, worker, capsys):
    argv = [a.format(seed=seed_paths["mpnn"]) for a in argv]
    code, out, err = _cli(argv, worker, capsys)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and message in err and err.count("\n") == 1
