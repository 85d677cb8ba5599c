"""The per-candidate fast path: concurrent ahead-of-time compiles and the batch prefetcher
change nothing about the result for a seed, and leave no threads behind."""

from __future__ import annotations

import threading

import jax
import numpy as np
import pytest

from spark_jax import program as program_lib
from spark_jax.config import protocol
from spark_jax.evaluation import bridge, compiling, data, evaluate
from spark_jax.evaluation.prefetch import THREAD_NAME, Prefetcher

CFG = protocol.get_preset("tiny")


def _our_threads() -> list[str]:
    return [
        t.name
        for t in threading.enumerate()
        if t.name.startswith((THREAD_NAME, compiling.THREAD_PREFIX))
    ]


def _same(a, b) -> bool:
    la, ta = jax.tree_util.tree_flatten(a)
    lb, tb = jax.tree_util.tree_flatten(b)
    return ta == tb and all(np.array_equal(np.asarray(x), np.asarray(y)) for x, y in zip(la, lb))


def test_prefetcher_yields_the_same_batches_in_the_same_order():
    direct = data.make_task_data("bfs", CFG, seed=3).train
    expected = [next(direct) for _ in range(6)]
    with Prefetcher(data.make_task_data("bfs", CFG, seed=3).train, depth=2) as batches:
        got = [next(batches) for _ in range(6)]
    assert all(_same(x, y) for x, y in zip(expected, got))
    assert not _our_threads()


def test_prefetcher_applies_the_transform_and_ends_with_its_source():
    with Prefetcher(iter(range(5)), depth=3, transform=lambda x: 10 * x) as batches:
        assert list(batches) == [0, 10, 20, 30, 40]
    assert not _our_threads()


def test_prefetcher_raises_the_source_error_and_stops():
    def source():
        yield 1
        raise ValueError("sampler broke")

    batches = Prefetcher(source(), depth=1)
    assert next(batches) == 1
    with pytest.raises(ValueError, match="sampler broke"):
        next(batches)
    assert not batches.alive and not _our_threads()


def test_prefetcher_close_stops_a_producer_blocked_on_a_full_queue():
    def endless():
        n = 0
        while True:
            yield n
            n += 1

    batches = Prefetcher(endless(), depth=1)
    assert next(batches) == 0
    batches.close()
    batches.close()  # idempotent
    assert not batches.alive and not _our_threads()
    with pytest.raises(ValueError, match="depth"):
        Prefetcher(endless(), depth=0)


def test_compile_all_compiles_every_entry_and_joins_its_threads():
    f = jax.jit(lambda x: 2 * x)
    lowerings = {
        n: (lambda n=n: f.lower(jax.ShapeDtypeStruct((n,), np.float32))) for n in (1, 2, 3)
    }
    report = compiling.compile_all(lowerings, max_workers=3)
    assert report.count == 3 and set(report.executables) == {1, 2, 3}
    assert report.seconds > 0 and report.wall_seconds > 0
    assert np.array_equal(report.executables[2](np.ones(2, np.float32)), [2.0, 2.0])
    assert not _our_threads()


def test_compile_all_raises_a_lowering_error():
    def broken():
        raise RuntimeError("cannot lower")

    with pytest.raises(RuntimeError, match="cannot lower"):
        compiling.compile_all({"x": broken})
    assert not _our_threads()


def test_ahead_of_time_and_prefetch_match_the_lazy_loop(seed_paths):
    program = program_lib.read_program(seed_paths["mpnn"])
    factory = bridge.processor_factory(program, CFG.use_ln, CFG.nb_triplet_fts)
    fast, trainer = evaluate.train_and_score(factory, "bfs", CFG, seed=0)
    lazy, _ = evaluate.train_and_score(factory, "bfs", CFG, seed=0, precompile=False, prefetch=0)
    for key in ("ood_score", "val_score", "best_step", "final_loss", "steps", "params"):
        assert fast[key] == lazy[key], key
    # init, one step shape, one validation and one test shape: all compiled before step 0
    assert trainer.compile_stats.count == 4 and fast["compile_wall_seconds"] > 0
    assert not _our_threads()


def test_an_error_mid_training_leaves_no_thread(seed_paths):
    program = program_lib.read_program(seed_paths["mpnn"])
    factory = bridge.processor_factory(program, CFG.use_ln, CFG.nb_triplet_fts)

    def progress(step, loss):
        if step == 2:
            raise KeyboardInterrupt("stop at step 2")

    with pytest.raises(KeyboardInterrupt, match="step 2"):
        evaluate.train_and_score(factory, "bfs", CFG, seed=0, progress=progress)
    assert not _our_threads()
