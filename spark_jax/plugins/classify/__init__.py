"""The classification task family (MNIST-1D, Breast Cancer, 20News, Mice Protein): a plug-in.

Implements `spark_jax.families.TaskFamily`: seeds in `seeds/` (LR, MLP, CNN, GRU), the
classifier contract (`contract.md`), the data (`data`), the sandbox's semantic stage
(`checks`), the offline editor's catalogue (`transforms`), a semantic check (logits shape [B, C], float dtype,
finite), and training (full-batch Adam on softmax cross-entropy, fixed seed, on the train
part) scored on one part of the split: 'val' (the search's selection: metrics `val_accuracy`,
`val_loss`) or 'test' (the final programs: `accuracy`, `loss`, the paper's metrics), with MACs
of one example and parameter count. One evaluation never reads the other part.
"""

from __future__ import annotations

import dataclasses
import pathlib
import time
from typing import Any, Mapping

from spark_jax import families
from spark_jax import program as program_lib
from spark_jax.plugins.classify import data as classify_data

__all__ = ["FACTORY", "FAMILY", "ClassifyFamily", "TrainPreset", "check_program", "evaluate"]

FACTORY = "make_classifier"


@dataclasses.dataclass(frozen=True)
class TrainPreset:
    steps: int
    hidden: int
    learning_rate: float = 1e-2


PRESETS = {"tiny": TrainPreset(steps=20, hidden=16), "smoke": TrainPreset(steps=300, hidden=64)}


def _family_dir() -> pathlib.Path:
    return pathlib.Path(__file__).resolve().parent


def _build(source: str, num_classes: int, hidden: int) -> Any:
    import flax.linen as nn

    module = program_lib.load_module(program_lib.Program(source=source), FACTORY)
    model = getattr(module, FACTORY)(num_classes, hidden)
    if not isinstance(model, nn.Module):
        raise program_lib.ProgramError(f"{FACTORY} returned {type(model).__name__}, not a Module")
    return model


def check_program(source: str, features: int, num_classes: int, hidden: int = 16) -> str | None:
    """None if the classifier maps x [4, F] to finite float logits [4, C]; else the reason."""
    import jax
    import jax.numpy as jnp

    try:
        model = _build(source, num_classes, hidden)
        x = jax.random.normal(jax.random.PRNGKey(0), (4, features), jnp.float32)  # [4, F]
        variables = model.init(jax.random.PRNGKey(1), x)
        logits = model.apply(variables, x)  # [4, C]
    except Exception as e:  # noqa: BLE001 - any failure of candidate code is infeasibility
        return f"classifier failed: {type(e).__name__}: {e}"
    if getattr(logits, "shape", None) != (4, num_classes):
        return f"logits shape {getattr(logits, 'shape', None)}, expected (4, {num_classes})"
    if not jnp.issubdtype(logits.dtype, jnp.floating):
        return f"logits dtype {logits.dtype}, expected floating"
    if not bool(jnp.all(jnp.isfinite(logits))):
        return "logits are not finite"
    return None


NAME = "classify"
# The metric names of each scored part: the paper's names mean the test part.
METRIC_NAMES = {"val": ("val_accuracy", "val_loss"), "test": ("accuracy", "loss")}


def evaluate(
    source: str, split: classify_data.Split, preset: str, seed: int, part: str = "test"
) -> families.Evaluation:
    """Trains the classifier on `split`'s train part (seed `seed`) and scores it on `part`
    ('val' or 'test') only."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    import optax

    from spark_jax.program import macs as macs_lib

    cfg = PRESETS[preset]
    model = _build(source, split.num_classes, cfg.hidden)
    x_tr, y_tr = jnp.asarray(split.x_train), jnp.asarray(split.y_train)  # [N, F], [N]
    x_part, y_part = split.part(part)
    x_te, y_te = jnp.asarray(x_part), jnp.asarray(y_part)  # [M, F], [M] of the scored part
    variables = model.init(jax.random.PRNGKey(seed), x_tr[:1])
    opt = optax.adam(cfg.learning_rate)

    def loss_fn(v, x, y):
        logits = model.apply(v, x)  # [B, C]
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean(), logits

    @jax.jit
    def step(carry, _):
        v, s = carry
        grads = jax.grad(lambda p: loss_fn(p, x_tr, y_tr)[0])(v)
        updates, s = opt.update(grads, s, v)
        return (optax.apply_updates(v, updates), s), None

    start = time.perf_counter()
    (variables, _), _ = jax.lax.scan(step, (variables, opt.init(variables)), None, cfg.steps)
    loss, logits = loss_fn(variables, x_te, y_te)
    accuracy = float(jnp.mean(jnp.argmax(logits, -1) == y_te))
    loss = float(loss)
    seconds = time.perf_counter() - start
    params = int(sum(np.prod(p.shape) for p in jax.tree_util.tree_leaves(variables)))
    macs = macs_lib.count_macs(lambda v, x: model.apply(v, x), variables, x_tr[:1])
    score = accuracy if np.isfinite(loss) else 0.0
    acc_name, loss_name = METRIC_NAMES[part]
    program = program_lib.Program(source=source)
    return families.Evaluation(
        task=split.record["dataset"],
        preset=preset,
        seed=seed,
        program=program.name,
        program_sha256=program.sha256,
        score=score,
        params=params,
        macs=int(macs),
        train_seconds=seconds,
        family=NAME,
        metrics={acc_name: accuracy, loss_name: loss},
    )


@dataclasses.dataclass(frozen=True)
class ClassifyFamily:
    """The classification benchmarks behind the task-family boundary."""

    name: str = NAME
    benchmarks: tuple[str, ...] = classify_data.BENCHMARKS
    factory: str = FACTORY
    presets: tuple[str, ...] = tuple(PRESETS)
    default_seed: str = "mlp"
    test_part: str = "classify test split"
    val_part: str = "a validation split"
    score_metric: Mapping[str, Any] = dataclasses.field(  # the report's score (a fraction)
        default_factory=lambda: dict(
            name="accuracy", word="accuracy", scale=100.0, unit="%", digits=2, diff_unit="pp"
        )
    )
    # Benchmark -> its key in reference/extra_benchmarks.csv (MNIST-1D: per seed backbone).
    paper_keys: Mapping[str, str] = dataclasses.field(
        default_factory=lambda: {
            "mnist1d": "mnist1d_{seed}",
            "breast_cancer": "breast_cancer_wisconsin",
            "news20": "20news",
            "mice_protein": "mice_protein",
        }
    )
    # Benchmark -> the seed programs the paper reports on it (others: `default_seed`).
    paper_seeds: Mapping[str, tuple[str, ...]] = dataclasses.field(
        default_factory=lambda: {"mnist1d": ("lr", "mlp", "cnn", "gru")}
    )
    data_dir: str | None = None  # None: $SPARK_JAX_DATA_DIR, else ./data

    def seed_programs(self) -> dict[str, pathlib.Path]:
        return {p.stem: p for p in sorted((_family_dir() / "seeds").glob("*.py"))}

    def contract_text(self) -> str:
        return (_family_dir() / "contract.md").read_text(encoding="utf-8").strip()

    def check(self, source: str, benchmark: str, preset: str) -> str | None:
        split = classify_data.load(benchmark, preset, self.data_dir)
        return check_program(source, split.x_train.shape[1], split.num_classes)

    def evaluate(
        self, source: str, benchmark: str, preset: str, seed: int, split: str = "test"
    ) -> families.Evaluation:
        data = classify_data.load(benchmark, preset, self.data_dir)
        return evaluate(source, data, preset, seed, split)

    def data_record(self, benchmark: str, preset: str) -> dict[str, Any]:
        return dict(classify_data.load(benchmark, preset, self.data_dir).record)

    def sandbox_spec(self, benchmark: str, preset: str) -> dict[str, Any]:
        """Loads the data for its shapes: features F, classes C, the preset's hidden width."""
        split = classify_data.load(benchmark, preset, self.data_dir)
        return dict(
            features=int(split.x_train.shape[1]),
            num_classes=int(split.num_classes),
            hidden=PRESETS[preset].hidden,
        )

    def model_args(self, spec: dict[str, Any]) -> tuple[int, int]:
        return int(spec["num_classes"]), int(spec["hidden"])

    def example_width(self, spec: dict[str, Any]) -> int:
        return int(spec["features"])

    def check_semantic(self, model: Any, spec: dict[str, Any], batch: int, info: dict) -> None:
        from spark_jax.plugins.classify import checks

        checks.check_classifier(model, spec, batch, info)

    def offline_transforms(self) -> tuple:
        from spark_jax.plugins.classify.transforms import CLASSIFIER_TRANSFORMS

        return CLASSIFIER_TRANSFORMS


FAMILY = ClassifyFamily()
