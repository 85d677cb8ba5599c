"""Protocol presets: typed, frozen records of how a candidate is trained and scored.

`paper` is the official CLRS run.py protocol (examples/run.py defaults) with the official OOD
test set rebuilt from the samplers; `smoke` is the same code path sized for a 2-core CPU
(minutes per candidate); `tiny` runs in seconds for tests.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

HINT_MODES = ("encoded_decoded", "decoded_only", "none")
REPRED_MODES = ("soft", "hard", "hard_on_eval")
ENCODER_INITS = ("default", "xavier_on_scalars")


class ConfigError(ValueError):
    """A bad configuration value or key; the message names the key."""


@dataclasses.dataclass(frozen=True)
class ProtocolConfig:
    """How one candidate is trained, validated and tested on one CLRS task.

    Attributes:
      name: preset name.
      train_lengths: graph sizes cycled through during training (one sampler each).
      batch_size: training batch size (split over devices; must divide evenly).
      train_steps: number of optimizer steps.
      eval_every: validation period in steps; the best-validation parameters are tested.
      hidden_size: processor width H.
      learning_rate, grad_clip_max_norm: Adam with global-norm clipping (0 disables clipping).
      hint_mode: 'encoded_decoded' (hints are inputs and targets), 'decoded_only', or 'none'.
      hint_repred_mode: how predicted hints are fed back ('soft', 'hard', 'hard_on_eval').
      use_ln: layer norm in the processor.
      nb_triplet_fts: triplet feature width.
      encoder_init: CLRS encoder initializer.
      random_pos, enforce_permutations, enforce_pred_as_input: run.py's data processing.
      length_needle: needle length for string matchers (negative: random up to -value).
      val_length: validation graph size (None: the largest training length).
      val_samples: validation set size before the task's multiplier (run.py: 32 * 2).
      test_length: OOD test graph size (official: 64).
      test_samples: OOD test set size before the task's multiplier (official: 32).
      test_seed: sampler seed of the OOD test set (official: 3).
      eval_batch_size: batch size for validation and test prediction.
      macs_nodes: N of the reference input used to count MACs (batch 1, width hidden_size).
    """

    name: str
    train_lengths: tuple[int, ...] = (4, 7, 11, 13, 16)
    batch_size: int = 32
    train_steps: int = 10_000
    eval_every: int = 50
    hidden_size: int = 128
    learning_rate: float = 1e-3
    grad_clip_max_norm: float = 1.0
    hint_mode: str = "encoded_decoded"
    hint_repred_mode: str = "soft"
    use_ln: bool = True
    nb_triplet_fts: int = 8
    encoder_init: str = "xavier_on_scalars"
    random_pos: bool = True
    enforce_permutations: bool = True
    enforce_pred_as_input: bool = True
    length_needle: int = -8
    val_length: int | None = None
    val_samples: int = 64
    test_length: int = 64
    test_samples: int = 32
    test_seed: int = 3
    eval_batch_size: int = 32
    macs_nodes: int = 16

    def __post_init__(self):
        _check(self)

    @property
    def encode_hints(self) -> bool:
        return self.hint_mode == "encoded_decoded"

    @property
    def decode_hints(self) -> bool:
        return self.hint_mode in ("encoded_decoded", "decoded_only")

    @property
    def validation_length(self) -> int:
        return self.val_length if self.val_length is not None else max(self.train_lengths)

    def replace(self, **changes: Any) -> "ProtocolConfig":
        return from_dict({**dataclasses.asdict(self), **changes})

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _check(cfg: ProtocolConfig) -> None:
    def need(ok: bool, key: str, why: str):
        if not ok:
            raise ConfigError(f"protocol.{key}: {why} (got {getattr(cfg, key)!r})")

    need(
        len(cfg.train_lengths) > 0 and all(int(n) >= 2 for n in cfg.train_lengths),
        "train_lengths",
        "needs one or more graph sizes >= 2",
    )
    for key in (
        "batch_size",
        "train_steps",
        "eval_every",
        "hidden_size",
        "val_samples",
        "test_samples",
        "eval_batch_size",
        "macs_nodes",
        "test_length",
    ):
        need(
            isinstance(getattr(cfg, key), int) and getattr(cfg, key) > 0,
            key,
            "must be a positive integer",
        )
    need(cfg.learning_rate > 0, "learning_rate", "must be positive")
    need(cfg.grad_clip_max_norm >= 0, "grad_clip_max_norm", "must be >= 0")
    need(cfg.hint_mode in HINT_MODES, "hint_mode", f"must be one of {HINT_MODES}")
    need(cfg.hint_repred_mode in REPRED_MODES, "hint_repred_mode", f"must be one of {REPRED_MODES}")
    need(cfg.encoder_init in ENCODER_INITS, "encoder_init", f"must be one of {ENCODER_INITS}")
    need(cfg.nb_triplet_fts >= 0, "nb_triplet_fts", "must be >= 0")
    need(cfg.val_length is None or cfg.val_length >= 2, "val_length", "must be >= 2 or null")


PRESETS: Mapping[str, ProtocolConfig] = {
    # The official CLRS protocol (clrs/examples/run.py defaults, OOD test at n=64).
    "paper": ProtocolConfig(name="paper"),
    # Same code path, sized for a 2-core CPU: minutes per candidate.
    # OOD at 4x the largest training size, as in the paper (16 -> 64).
    "smoke": ProtocolConfig(
        name="smoke",
        train_lengths=(4, 8),
        batch_size=16,
        train_steps=300,
        eval_every=50,
        hidden_size=64,
        val_length=8,
        val_samples=64,
        test_length=32,
        test_samples=32,
        eval_batch_size=32,
    ),
    # Seconds: for tests.
    "tiny": ProtocolConfig(
        name="tiny",
        train_lengths=(4,),
        batch_size=4,
        train_steps=8,
        eval_every=4,
        hidden_size=16,
        nb_triplet_fts=4,
        val_length=5,
        val_samples=8,
        test_length=8,
        test_samples=8,
        eval_batch_size=8,
        macs_nodes=8,
    ),
}


def get_preset(name: str) -> ProtocolConfig:
    """Returns a preset by name; raises ConfigError naming the known presets."""
    try:
        return PRESETS[name]
    except (KeyError, TypeError):
        raise ConfigError(f"unknown preset {name!r}; known presets: {', '.join(PRESETS)}") from None


def from_dict(values: Mapping[str, Any], base: ProtocolConfig | None = None) -> ProtocolConfig:
    """Builds a ProtocolConfig from a mapping (e.g. YAML); unknown keys are errors."""
    fields = {f.name: f for f in dataclasses.fields(ProtocolConfig)}
    unknown = sorted(set(values) - set(fields))
    if unknown:
        raise ConfigError(
            f"protocol: unknown key(s) {', '.join(unknown)}; known keys: {', '.join(fields)}"
        )
    merged = dataclasses.asdict(base) if base is not None else {}
    merged.update(values)
    if "name" not in merged:
        raise ConfigError("protocol.name: missing")
    if "train_lengths" in merged:
        try:
            merged["train_lengths"] = tuple(int(n) for n in merged["train_lengths"])
        except (TypeError, ValueError):
            raise ConfigError(
                f"protocol.train_lengths: must be a list of integers "
                f"(got {merged['train_lengths']!r})"
            ) from None
    for key, value in merged.items():
        f = fields[key]
        type_name = f.type.removesuffix(" | None")
        if value is None and type_name != f.type:
            continue
        if type_name in ("int", "float", "bool", "str") and not _type_ok(type_name, value):
            raise ConfigError(f"protocol.{key}: expected {f.type}, got {value!r}")
    return ProtocolConfig(**merged)


def _type_ok(type_name: str, value: Any) -> bool:
    if type_name == "str":
        return isinstance(value, str)
    if type_name == "bool":
        return isinstance(value, bool)
    if type_name == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, (int, float)) and not isinstance(value, bool)
