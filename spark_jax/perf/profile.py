"""Where one evaluation's time goes: the parts of `train_and_score`, timed one by one.

`profile_evaluation` builds the task data, compiles every executable concurrently as a
candidate does (each executable's own lowering + compile time kept), initializes, then times
`steps` training steps (host sampling, host->device placement and the step itself apart, no
prefetch), one validation pass and one test pass (per batch: placement, prediction with its
device->host fetch, then `clrs.evaluate`). The estimate of a whole evaluation scales the
measured parts to the protocol's counts (scoring: one batch of each shape timed, scaled by
the batches of that shape) (train_steps steps, one validation every
eval_every steps and at step 0, one test pass); sampling, which a real run overlaps on its
prefetch thread, is listed apart. For each fixed set it also states how much of the scored
work is padding: every sample runs as many processor steps as its batch's hint length.
`profile_to_files` also appends the table to a Markdown file and writes the raw figures as
JSON; `scripts/profile_evaluation.py` runs it and prints the table.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import statistics
import time
from typing import Any, Sequence

import clrs
import jax
import numpy as np

from spark_jax import program as program_lib
from spark_jax.config.protocol import ProtocolConfig
from spark_jax.evaluation import bridge, data
from spark_jax.evaluation.train import Trainer
from spark_jax.util import markdown

__all__ = ["Part", "format_profile", "padding_figures", "profile_evaluation", "profile_to_files"]


@dataclasses.dataclass(frozen=True)
class Part:
    """One timed part: `count` items costing `seconds` in all (per run of an evaluation)."""

    name: str
    count: int
    seconds: float
    note: str = ""
    overlapped: bool = False


def _hint_len(features) -> int:
    return int(features.hints[0].data.shape[0])


def _batch_size(features) -> int:
    return int(features.lengths.shape[0])


def padding_figures(batches: Sequence[clrs.Feedback]) -> dict[str, Any]:
    """Processor steps scored per sample, padded (each batch to its hint length) vs needed
    (each sample its own length), and the distinct batch shapes."""
    padded = sum(_hint_len(fb.features) * _batch_size(fb.features) for fb in batches)
    lengths = np.concatenate([np.asarray(fb.features.lengths) for fb in batches])
    shapes = sorted({(_hint_len(fb.features), _batch_size(fb.features)) for fb in batches})
    return dict(
        samples=int(lengths.size),
        batches=len(batches),
        shapes=shapes,
        length_min=int(lengths.min()),
        length_mean=float(lengths.mean()),
        length_max=int(lengths.max()),
        padded_steps=int(padded),
        needed_steps=int(lengths.sum()),
        padding_fraction=1.0 - float(lengths.sum()) / padded,
    )


def _factory(program: str, cfg: ProtocolConfig):
    if program.startswith(program_lib.OFFICIAL_PREFIX):
        kind = program[len(program_lib.OFFICIAL_PREFIX) :]
        return bridge.official_processor_factory(kind, cfg.use_ln, cfg.nb_triplet_fts)
    return bridge.processor_factory(
        program_lib.read_program(program), cfg.use_ln, cfg.nb_triplet_fts
    )


def _shape_sig(tree) -> tuple:
    return tuple(np.shape(x) for x in jax.tree_util.tree_leaves(tree))


def _compile_parts(trainer: Trainer, first, lookahead, evals) -> list[Part]:
    report = trainer.precompile(first.features, lookahead, evals)
    labels = ["init"]
    for kind, batches in (("step", lookahead), ("predict", evals)):
        seen: dict = {}
        for fb in batches:
            sig = _shape_sig(fb if kind == "step" else fb.features)
            seen.setdefault(
                sig, f"compile {kind} T={_hint_len(fb.features)} B={_batch_size(fb.features)}"
            )
        labels += list(seen.values())
    times = list(report.times.values())
    if len(times) != len(labels):
        labels = [f"compile {k[0]} #{i}" for i, k in enumerate(report.times)]
    parts = [Part(label, 1, t, overlapped=True) for label, t in zip(labels, times)]
    parts.append(
        Part("compile: wall (all concurrently)", len(times), report.wall_seconds, "waited for")
    )
    return parts


def _score_pass(trainer: Trainer, key, batches, name: str, times: int) -> list[Part]:
    """One batch of each distinct shape timed (after one untimed run), scaled by how many
    batches have that shape; `clrs.evaluate` timed on those batches, scaled per sample."""
    by_shape: dict = {}
    for fb in batches:
        by_shape.setdefault(_shape_sig(fb.features), []).append(fb)
    place = predict = metric = 0.0
    samples = sum(_batch_size(fb.features) for fb in batches)
    preds, outputs = [], []
    for group in by_shape.values():
        fb = group[0]
        for _ in range(2):  # the second run is timed
            key, sub = jax.random.split(key)
            t0 = time.perf_counter()
            feats = jax.block_until_ready(trainer.shard_features(fb.features))
            t1 = time.perf_counter()
            pred = trainer.predict(sub, feats)
            t2 = time.perf_counter()
        place, predict = place + len(group) * (t1 - t0), predict + len(group) * (t2 - t1)
        preds.append(pred)
        outputs.append(fb.outputs)
    t0 = time.perf_counter()
    cat = lambda *xs: np.concatenate(xs, axis=0)  # noqa: E731
    clrs.evaluate(jax.tree_util.tree_map(cat, *outputs), jax.tree_util.tree_map(cat, *preds))
    timed = sum(_batch_size(g[0].features) for g in by_shape.values())
    metric = (time.perf_counter() - t0) * samples / timed
    n = len(batches) * times
    note = f"{len(by_shape)} shape(s) timed"
    return [
        Part(f"{name}: host->device per batch", n, place * times, note),
        Part(f"{name}: predict + fetch per batch", n, predict * times, note),
        Part(f"{name}: clrs.evaluate per pass", times, metric * times),
    ]


def _train_parts(trainer: Trainer, train_iter, key, steps: int, cfg: ProtocolConfig):
    sample, place, step = [], [], []
    for _ in range(steps):
        t0 = time.perf_counter()
        fb = next(train_iter)
        t1 = time.perf_counter()
        placed = jax.block_until_ready(trainer.shard_feedback(fb))
        t2 = time.perf_counter()
        key, sub = jax.random.split(key)
        trainer.step(sub, placed)
        t3 = time.perf_counter()
        sample.append(t1 - t0)
        place.append(t2 - t1)
        step.append(t3 - t2)
    n = cfg.train_steps
    med = statistics.median
    return key, [
        Part("train: host sampling per batch", n, med(sample) * n, "prefetch thread", True),
        Part("train: host->device per batch", n, med(place) * n, "prefetch thread", True),
        Part("train: step (+ loss fetch)", n, med(step) * n, f"median of {steps} timed"),
    ]


def profile_evaluation(
    program: str,
    task: str,
    cfg: ProtocolConfig,
    seed: int = 42,
    steps: int = 30,
    buckets: bool = True,
) -> dict[str, Any]:
    """Profiles one evaluation of `program` (a path or `official:KIND`) on `task`
    (`buckets`: hint-length buckets for validation and test, as evaluations score)."""
    t0 = time.perf_counter()
    task_data = data.make_task_data(task, cfg, seed, buckets=buckets)
    lookahead = [next(task_data.train) for _ in data.train_lengths(task, cfg)]
    parts = [Part("data: build samplers, validation and test sets", 1, time.perf_counter() - t0)]
    first = lookahead[0]
    trainer = Trainer(task_data.spec, first, _factory(program, cfg), cfg)
    evals = task_data.val_batches + task_data.test_batches
    parts += _compile_parts(trainer, first, lookahead, evals)
    t0 = time.perf_counter()
    trainer.init(first.features, seed + 1)
    jax.block_until_ready(trainer.params)
    parts.append(Part("init parameters", 1, time.perf_counter() - t0))
    key = task_data.rng_key
    for fb in lookahead:  # the first pass: every step shape runs once
        key, sub = jax.random.split(key)
        trainer.step(sub, fb)
    key, train = _train_parts(trainer, task_data.train, key, steps, cfg)
    parts += train
    n_val = 1 + (cfg.train_steps - 1) // cfg.eval_every
    key, val_key, test_key = jax.random.split(key, 3)
    parts += _score_pass(trainer, val_key, task_data.val_batches, "validation", n_val)
    parts += _score_pass(trainer, test_key, task_data.test_batches, "test", 1)
    total = sum(p.seconds for p in parts if not p.overlapped)
    return dict(
        program=program,
        task=task,
        preset=cfg.name,
        seed=seed,
        timed_steps=steps,
        buckets=buckets,
        backend=jax.default_backend(),
        parts=[dataclasses.asdict(p) for p in parts],
        estimated_total_s=total,
        padding=dict(
            validation=padding_figures(task_data.val_batches),
            test=padding_figures(task_data.test_batches),
        ),
    )


def format_profile(report: dict[str, Any], label: str = "") -> str:
    """The profile as a Markdown table (share = of the estimated evaluation's wall)."""
    total = report["estimated_total_s"]
    lines = [
        f"### {report['program']} on {report['task']}, {report['preset']} preset"
        + (f" ({label})" if label else "")
        + ("" if report.get("buckets", True) else ", padded sets (no buckets)"),
        "",
        f"Backend {report['backend']}; training steps timed: {report['timed_steps']} (scaled "
        f"to the protocol's); estimated evaluation wall {total:.1f} s. Rows marked * overlap "
        "other work (compiles run concurrently; sampling and placement on the prefetch "
        "thread) and are not added to the total.",
        "",
    ]
    parts = []
    for p in report["parts"]:
        share = "" if p["overlapped"] else f"{100 * p['seconds'] / total:.1f}%"
        name = p["name"] + (" *" if p["overlapped"] else "")
        per = 1000 * p["seconds"] / max(p["count"], 1)
        parts.append([name, p["count"], f"{p['seconds']:.2f}", f"{per:.1f}", share])
    lines += markdown.table(["part", "count", "seconds", "per item (ms)", "share"], parts, "lrrrr")
    sets = [
        [name, f["samples"], f["batches"], ", ".join(f"({t}, {b})" for t, b in f["shapes"])]
        + [f"{f['length_min']}/{f['length_mean']:.1f}/{f['length_max']}", f["padded_steps"]]
        + [f["needed_steps"], f"{100 * f['padding_fraction']:.1f}%"]
        for name, f in report["padding"].items()
    ]
    head = ["fixed set", "samples", "batches", "shapes (T, B)", "length min/mean/max"]
    head += ["padded steps", "needed", "padding"]
    lines += [""] + markdown.table(head, sets, "lrrllrrr")
    return markdown.document([lines])


def profile_to_files(
    program: str,
    task: str,
    cfg: ProtocolConfig,
    seed: int,
    steps: int,
    buckets: bool,
    label: str = "",
    out: str | pathlib.Path | None = None,
    json_path: str | pathlib.Path | None = None,
) -> str:
    """Profiles one evaluation (`profile_evaluation`, the report labelled with `label`);
    appends the table to `out` and writes the raw figures to `json_path` (each when given);
    returns the table."""
    report = profile_evaluation(program, task, cfg, seed, steps, buckets=buckets)
    report["label"] = label
    text = format_profile(report, label)
    if out:
        out = pathlib.Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        with out.open("a", encoding="utf-8") as f:
            f.write(text + "\n\n")
    if json_path:
        pathlib.Path(json_path).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return text
