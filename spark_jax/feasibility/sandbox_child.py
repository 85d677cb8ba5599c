"""Child side of the feasibility sandbox: imports and runs candidate programs.

Started by `sandbox.SandboxWorker` as `python -m spark_jax.feasibility.sandbox_child`;
pre-imports jax/flax/numpy once, then serves one request at a time through `workers.serve`
(frames on private duplicates of fds 0/1, which then point at /dev/null; fd 2 goes to a
bounded tail in the parent; candidate prints to a bounded counting sink):
  warmup {source, options} -> warmed;  exit
  check {source, parent_source, options} -> {'type': 'stage', 'stage'}* then a result
Worker-side stages (the parent does template, locality, the static half of syntax and the
budget comparison): syntax = exec in a fresh namespace (`program.load_module`); interface;
semantic (`stage_checks.check_semantic`) = `jax.eval_shape` of init + apply, then one
concrete batch run eagerly (op compilations are shared by all candidates; parameter draws
compiled per power-of-two length, `install_bucketed_truncated_normal`) for finiteness and
the masking invariant; budget = params and MACs. jax is imported only in `_preimport`.
"""

from __future__ import annotations

import inspect
import os
import sys
import time
from typing import Any, Callable

from spark_jax import workers
from spark_jax.families import DEFAULT_FAMILY
from spark_jax.feasibility import family_checks
from spark_jax.feasibility.stage_checks import (
    CheckFailure,
    check_semantic,
    failure_from_exception,
    guarded,
    install_bucketed_truncated_normal,
    macs_lib,
)

CALL_PARAMS = ("self", "node_fts", "edge_fts", "graph_fts", "adj_mat", "hidden")
FACTORY_PARAMS = ("out_size", "use_ln", "nb_triplet_fts")
_POS = inspect.Parameter.POSITIONAL_OR_KEYWORD
# Modules whose attributes a candidate could monkeypatch to poison later checks.
_WATCHED_MODULES = (
    "builtins",
    "math",
    "functools",
    "numpy",
    "jax",
    "jax.numpy",
    "jax.nn",
    "jax.lax",
    "jax.random",
    "flax.linen",
    "spark_jax.program.source",
    "spark_jax.program.macs",
)


class _MissingFactory(Exception):
    """The program executed but defines no callable factory."""


class _BoundedSink:
    """A text stream that counts what is written and keeps nothing (candidate prints)."""

    def __init__(self, cap: int, on_overflow: Callable[[], None]) -> None:
        self.cap, self.count, self._on_overflow = cap, 0, on_overflow

    def write(self, text: str) -> int:
        before = self.count
        self.count += len(str(text).encode("utf-8", "replace"))
        if before <= self.cap < self.count:
            self._on_overflow()
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def _vm_size_bytes() -> int | None:
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _fingerprint() -> dict[str, tuple[tuple[str, int], ...]]:
    found = {}
    for name in _WATCHED_MODULES:
        module = sys.modules.get(name)
        if module is not None:
            found[name] = tuple(sorted((k, id(v)) for k, v in vars(module).items()))
    return found


def _changed_modules(before: dict[str, Any]) -> list[str]:
    """Attributes rebound or deleted since `before` (additions, e.g. lazy submodules, pass)."""
    after = _fingerprint()
    changed = []
    for name, items in before.items():
        new = dict(after.get(name, ()))
        changed += [f"{name}.{k}" for k, v in items if new.get(k) != v]
    return changed


class _Runner:
    """Runs the worker-side stages of one check; `progress(stage)` is sent at each start."""

    def __init__(
        self,
        source: str,
        parent_source: str | None,
        options: dict[str, Any],
        progress: Callable[[str], None],
    ) -> None:
        self.source, self.parent_source, self.opts = source, parent_source, options
        self.progress = progress
        self.stage, self.stage_start = "syntax", time.perf_counter()
        self.stages_passed: list[str] = []
        self.timings: dict[str, float] = {}
        self.loaded: list[str] = []
        self.info: dict[str, Any] = {"params": None, "macs": None, "masks_non_edges": None}
        self.parent_claim: bool | None = None  # The parent's masking claim, once loaded.

    def _enter(self, stage: str) -> None:
        self.stage = stage
        self.progress(stage)
        self.stage_start = time.perf_counter()

    def _leave(self) -> None:
        self.timings[self.stage] = time.perf_counter() - self.stage_start
        self.stages_passed.append(self.stage)

    def _load(self, source: str, name: str):
        from spark_jax import program as program_lib

        family = self.opts.get("family", DEFAULT_FAMILY)
        factory = family_checks.factory_of(family)
        try:
            module = program_lib.load_module(program_lib.Program(source=source, name=name), factory)
        except program_lib.ProgramError as e:
            if e.__cause__ is None:  # Executed fine, but the factory is missing.
                raise _MissingFactory(str(e)) from None
            raise failure_from_exception("syntax", e, "import_error") from None
        except BaseException as e:  # noqa: BLE001 - candidate code (SystemExit included).
            raise failure_from_exception("syntax", e, "import_error") from None
        self.loaded.append(module.__name__)
        return module

    def run(self) -> None:
        self._enter("syntax")
        watched = _fingerprint()
        try:
            module = self._load(self.source, "candidate")
        except _MissingFactory as e:
            self._leave()
            self._enter("interface")
            raise CheckFailure("interface", "missing_name", str(e)) from None
        self._check_watched(watched)
        self._leave()
        if family_checks.takes_family_stages(self.opts):
            return self._run_family(module, watched)
        self._enter("interface")
        proc = self._interface(module)
        self._leave()
        self._enter("semantic")
        check_semantic(module, proc, self.opts, self.info, claim=self.parent_claim)
        self._check_watched(watched)
        self._leave()
        self._enter("budget")  # Measured here; the parent compares the caps.
        proc = self._build(module)
        with guarded("budget"):
            self.info["macs"] = int(
                macs_lib().flax_processor_macs(
                    proc, self.opts["macs_nodes"], self.opts["hidden_size"]
                )
            )
        self.timings["budget"] = time.perf_counter() - self.stage_start

    def _run_family(self, module, watched: dict[str, Any]) -> None:
        """interface, semantic and budget of a non-CLRS task family's program."""
        family, spec = family_checks.spec_of(self.opts)
        self._enter("interface")
        load_parent = None
        if self.parent_source is not None:
            load_parent = lambda: self._load_parent()  # noqa: E731
        model = family_checks.check_interface(module, family, spec, load_parent)
        self._leave()
        self._enter("semantic")
        family_checks.check_semantic(model, family, spec, int(self.opts["batch"]), self.info)
        self._check_watched(watched)
        self._leave()
        self._enter("budget")  # Measured here; the parent compares the caps.
        self.info["macs"] = family_checks.measure_macs(model, family, spec)
        self.timings["budget"] = time.perf_counter() - self.stage_start

    def _load_parent(self):
        try:
            return self._load(self.parent_source, "parent")
        except (_MissingFactory, CheckFailure) as e:
            raise CheckFailure(
                "interface",
                "parent_error",
                f"parent program failed to load: {getattr(e, 'reason', e)}",
                recycle=True,
            ) from None

    def _check_watched(self, watched: dict[str, Any]) -> None:
        changed = _changed_modules(watched)
        if changed:
            raise CheckFailure(
                self.stage,
                "unsafe_code",
                f"candidate modified shared module attribute(s): {', '.join(changed[:5])}",
                recycle=True,
            )

    def _build(self, module):
        from spark_jax import program as program_lib

        with guarded(self.stage, "bad_factory" if self.stage == "interface" else "runtime_error"):
            return program_lib.build_flax_processor(
                module, self.opts["hidden_size"], self.opts["use_ln"], self.opts["nb_triplet_fts"]
            )

    def _interface(self, module):
        import flax.linen as nn

        from spark_jax import program as program_lib

        def fail(failure_type: str, reason: str) -> CheckFailure:
            return CheckFailure("interface", failure_type, reason)

        cls = vars(module).get("Processor")
        if not isinstance(cls, type):
            raise fail(
                "missing_name",
                "no class 'Processor' defined"
                if cls is None
                else f"'Processor' is a {type(cls).__name__}, not a class",
            )
        if not issubclass(cls, nn.Module):
            raise fail("bad_base_class", "'Processor' does not subclass flax.linen.Module")
        call = _signature(getattr(cls, "__call__", None))  # noqa: B004 - the method itself
        if _params(call, with_defaults=False) != [(p, _POS) for p in CALL_PARAMS]:
            raise fail(
                "signature_mismatch",
                f"Processor.__call__{call} does not match the "
                f"frozen contract ({', '.join(CALL_PARAMS)})",
            )
        factory = _signature(vars(module).get(program_lib.FACTORY_NAME))
        if factory is None:
            raise fail("missing_name", "no callable 'make_processor' with a signature")
        if self.parent_source is None:
            if _params(factory, with_defaults=False) != [(p, _POS) for p in FACTORY_PARAMS]:
                raise fail(
                    "signature_mismatch",
                    f"make_processor{factory} does not match "
                    f"the contract (out_size, use_ln=..., nb_triplet_fts=...)",
                )
        else:
            parent = self._load_parent()
            self.parent_claim = program_lib.masks_non_edges(parent)
            theirs = _signature(vars(parent).get(program_lib.FACTORY_NAME))
            if _params(factory) != _params(theirs):
                raise fail(
                    "signature_mismatch",
                    f"make_processor{factory} differs from the parent's make_processor{theirs}",
                )
        try:
            proc = self._build(module)
        except program_lib.ProgramError as e:
            raise fail("bad_factory", str(e)) from None
        if not isinstance(proc, cls):
            raise fail(
                "bad_factory", f"make_processor returned {type(proc).__name__}, not a Processor"
            )
        return proc


def _signature(fn: Any) -> inspect.Signature | None:
    if fn is None or not callable(fn):
        return None
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _params(sig: inspect.Signature | None, with_defaults: bool = True) -> list[tuple]:
    """(name, kind[, default repr]) per parameter; [] without a signature."""
    if sig is None:
        return []
    return [
        (p.name, p.kind) + ((repr(p.default),) if with_defaults else ())
        for p in sig.parameters.values()
    ]


def run_check(
    source: str, parent_source: str | None, options: dict[str, Any], progress: Callable[[str], None]
) -> dict[str, Any]:
    """Runs the worker-side stages; returns the result message (never raises)."""
    import resource

    runner = _Runner(source, parent_source, options, progress)
    overflow: list[str] = []
    sink = _BoundedSink(int(options["output_cap_bytes"]), lambda: overflow.append(runner.stage))
    saved_streams = sys.stdout, sys.stderr
    saved_limit = resource.getrlimit(resource.RLIMIT_AS)
    vm = _vm_size_bytes()
    failure: CheckFailure | None = None
    try:
        if vm is not None and options.get("memory_mb"):
            cap = vm + int(options["memory_mb"]) * 2**20
            hard = saved_limit[1]
            resource.setrlimit(
                resource.RLIMIT_AS,
                (cap if hard == resource.RLIM_INFINITY else min(cap, hard), hard),
            )
        sys.stdout = sys.stderr = sink
        runner.run()
    except CheckFailure as e:
        failure = e
    except BaseException as e:  # noqa: BLE001 - never let a candidate end the worker.
        failure = failure_from_exception(runner.stage, e, "runtime_error")
    finally:
        sys.stdout, sys.stderr = saved_streams
        resource.setrlimit(resource.RLIMIT_AS, saved_limit)
        for name in runner.loaded:
            sys.modules.pop(name, None)
    if overflow:
        if overflow[0] in runner.stages_passed:
            del runner.stages_passed[runner.stages_passed.index(overflow[0]) :]
        failure = CheckFailure(
            overflow[0],
            "output_too_large",
            f"candidate wrote {sink.count} bytes to stdout/stderr (cap {sink.cap})",
            recycle=failure is not None and failure.recycle,
        )
    return _result_message(runner, failure)


def _result_message(runner: "_Runner", failure: CheckFailure | None) -> dict[str, Any]:
    """The check's result message: stages passed, timings, measured info, the failure."""
    result: dict[str, Any] = {
        "type": "result",
        "ok": failure is None,
        "stages_passed": runner.stages_passed,
        "timings": runner.timings,
        **runner.info,
        "failure_stage": None,
        "failure_type": None,
        "reason": "",
        "recycle": False,
    }
    if failure is not None:
        runner.timings.setdefault(failure.stage, time.perf_counter() - runner.stage_start)
        result.update(
            failure_stage=failure.stage,
            failure_type=failure.failure_type,
            reason=failure.reason,
            recycle=failure.recycle,
        )
    return result


def _preimport(cache_dir: str | None) -> None:
    import flax.linen  # noqa: F401
    import jax
    import jax.numpy as jnp
    import numpy  # noqa: F401

    from spark_jax.program import macs  # noqa: F401

    if cache_dir:  # Eager op compilations persist across recycled workers.
        jax.config.update("jax_compilation_cache_dir", cache_dir)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
        jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    jnp.ones((2, 2)).block_until_ready()  # Starts the CPU client and its thread pools.
    install_bucketed_truncated_normal()  # New parameter shapes reuse compiled draws.


def main(argv: list[str] | None = None) -> int:
    """Serves requests until EOF or an 'exit' request (`workers.serve`)."""
    argv = sys.argv[1:] if argv is None else argv
    cache_dir = argv[argv.index("--cache-dir") + 1] if "--cache-dir" in argv else None
    return workers.serve(_handle, prepare=lambda: _preimport(cache_dir))


def _handle(request: dict[str, Any], send: workers.Send) -> None:
    if request["type"] == "warmup":
        begin = time.perf_counter()
        result = run_check(request["source"], None, request["options"], lambda s: None)
        send(
            {
                "type": "warmed",
                "seconds": time.perf_counter() - begin,
                "ok": result["ok"],
                "reason": result["reason"],
            }
        )
        return
    progress = lambda stage: send({"type": "stage", "stage": stage})  # noqa: E731
    send(run_check(request["source"], request.get("parent_source"), request["options"], progress))


if __name__ == "__main__":
    sys.exit(main())
