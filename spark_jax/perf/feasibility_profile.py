"""Where the feasibility check of an unseen program spends its time.

    profile_feasibility(OUT_JSON, preset="smoke", programs=3, label="")
    # python scripts/profile_feasibility.py OUT_JSON [--preset P] [--programs N] [--label TEXT]

First the whole check (`feasibility.check_program` in a warm sandbox worker, as `spark-jax
bench` times it) of the seed and of N unseen programs (the seed with a wider first message
layer: new parameter shapes every time), with the stage times the report records. Then the
semantic stage's parts, replayed in this process on fresh unseen programs: the abstract trace
(`jax.eval_shape` of init and apply), the concrete init, the concrete apply at N nodes and at
the larger size, and, from JAX's compile log, the XLA compile seconds of each jitted function
during the concrete init (for example `jax.random.truncated_normal` for a new kernel shape).
The replay sets up JAX as the sandbox worker does (with `install_bucketed_truncated_normal`
where this version of spark_jax has it).
"""

from __future__ import annotations

import collections
import json
import logging
import re
import time
from pathlib import Path

import jax

from spark_jax import program as program_lib
from spark_jax.config import protocol
from spark_jax.feasibility import checker as feasibility
from spark_jax.feasibility import sandbox, stage_checks
from spark_jax.perf.candidate import SEED_PROGRAM, unseen_program
from spark_jax.util import labels

__all__ = ["profile_feasibility", "semantic_parts", "whole_checks"]

_COMPILED = re.compile(r"Finished XLA compilation of jit\((\w+)\) in ([0-9.eE-]+) sec")


class _CompileLog(logging.Handler):
    """Sums XLA compile seconds by jitted function name from JAX's compile log."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.seconds: dict[str, float] = collections.defaultdict(float)

    def emit(self, record: logging.LogRecord) -> None:
        found = _COMPILED.search(record.getMessage())
        if found:
            self.seconds[found.group(1)] += float(found.group(2))


def whole_checks(source: str, options, n: int) -> list[dict]:
    """The whole check of the seed (it warms the worker) and of `n` unseen programs."""
    rows = []
    with sandbox.SandboxWorker() as worker:
        for i in range(n + 1):
            child = source if i == 0 else unseen_program(source, width=1 + i)
            t0 = time.perf_counter()
            report = feasibility.check_program(child, options=options, worker=worker)
            rows.append(
                dict(
                    program="seed (warms the worker)" if i == 0 else f"unseen, width x{1 + i}",
                    seconds=time.perf_counter() - t0,
                    feasible=report.feasible,
                    stages=report.to_dict()["timings"],
                )
            )
    return rows


def _abstract_pass(proc, key, abstract) -> None:
    """The semantic stage's abstract part: `jax.eval_shape` of init, then of apply."""
    shapes = jax.eval_shape(lambda kw: proc.init(key, **kw), abstract)
    jax.eval_shape(lambda v, kw: proc.apply(v, **kw), shapes, abstract)


def semantic_parts(source: str, cfg, opts: dict, widths: list[int]) -> list[dict]:
    """The semantic stage's parts, timed in this process, for the seed and an unseen program
    per width."""
    b, n, h = opts["batch"], opts["nodes"], opts["hidden_size"]
    large = int(opts.get("large_nodes") or 2 * n + 3)
    install = getattr(stage_checks, "install_bucketed_truncated_normal", None)
    if install is not None:  # what the sandbox worker does at start (versions that have it)
        install()
    log = _CompileLog()
    logger = logging.getLogger("jax")
    logger.addHandler(log)
    logger.setLevel(logging.DEBUG)
    rows = []
    for width in [1, *widths]:  # width 1: the seed itself, compiles everything once
        child = source if width == 1 else unseen_program(source, width=width)
        module = program_lib.load_module(program_lib.Program(source=child, name="profiled"))
        proc = program_lib.build_flax_processor(module, h, cfg.use_ln, cfg.nb_triplet_fts)
        masks = program_lib.masks_non_edges(module)
        key = jax.random.PRNGKey(0)
        t0 = time.perf_counter()
        abstract = stage_checks.macs_lib().reference_inputs(n, h, batch=b)
        _abstract_pass(proc, key, abstract)
        t1 = time.perf_counter()
        with jax.log_compiles(True):
            log.seconds.clear()
            variables = stage_checks.check_concrete_batch(proc, b, n, h, masks, key, None)
            init_compiles = dict(log.seconds)
        t2 = time.perf_counter()
        stage_checks.check_concrete_batch(proc, b, large, h, masks, key, variables)
        t3 = time.perf_counter()
        rows.append(
            dict(
                program="seed" if width == 1 else f"unseen, width x{width}",
                abstract_s=t1 - t0,
                concrete_first_size_s=t2 - t1,
                concrete_large_size_s=t3 - t2,
                compile_s_by_function=dict(sorted(init_compiles.items(), key=lambda kv: -kv[1])),
            )
        )
    logger.removeHandler(log)
    return rows


def profile_feasibility(
    out: Path, preset: str = "smoke", programs: int = 3, label: str = ""
) -> None:
    """Writes OUT_JSON: the whole checks and the semantic stage's parts (see above)."""
    cfg = protocol.get_preset(preset)
    source = program_lib.read_program(SEED_PROGRAM).source
    options = feasibility.CheckOptions.from_protocol(cfg)
    record = dict(
        preset=cfg.name,
        label=label,
        machine=labels.machine_label(),
        whole_checks=whole_checks(source, options, programs),
        semantic_parts=semantic_parts(
            source, cfg, options.to_dict(), [10 + i for i in range(programs)]
        ),
    )
    out.write_text(json.dumps(record, indent=1) + "\n")
