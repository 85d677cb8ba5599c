"""The CartPole-v1 task family in one plug-in folder: seeds, contract, checks and evaluation.

What a task family provides, for CartPole-v1: seed programs (`seeds/*.py`), the contract text
for the prompts (`contract.md`), the frozen factory name, the semantic check (`checks`), the
offline editor's catalogue (`transforms`), and PPO training and scoring (`ppo`) wrapped into
one immutable record per candidate.
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Any, Mapping

from spark_jax import families
from spark_jax import program as program_lib
from spark_jax.plugins.cartpole import ppo as cartpole_ppo

__all__ = [
    "BENCHMARK",
    "FAMILY",
    "CartPoleFamily",
    "FACTORY",
    "NAME",
    "CartPoleEvaluation",
    "build_policy",
    "contract_text",
    "evaluate_program",
    "seed_path",
    "seed_programs",
]

NAME = "cartpole"
BENCHMARK = "cartpole_v1"  # Its rows in reference/extra_benchmarks.csv.
FACTORY = "make_policy"
# The PPO preset's fields a data record carries under their own names (after the training seed).
_DATA_FIELDS = ("eval_seed", "val_seed", "eval_episodes", "num_envs", "total_timesteps")
# What a `CartPoleEvaluation` gives the family's `families.Evaluation` as it is.
_SHARED_FIELDS = tuple("preset seed program program_sha256 score params macs train_seconds".split())


def _family_dir() -> pathlib.Path:
    return pathlib.Path(__file__).resolve().parent


def seed_programs() -> dict[str, pathlib.Path]:
    """Every shipped CartPole seed program, by name."""
    return {p.stem: p for p in sorted((_family_dir() / "seeds").glob("*.py"))}


def seed_path(name: str = "mlp") -> pathlib.Path:
    """The shipped seed program `name`; raises ValueError naming the known ones."""
    seeds = seed_programs()
    if name not in seeds:
        raise ValueError(f"unknown CartPole seed {name!r}; known: {', '.join(seeds)}")
    return seeds[name]


def contract_text() -> str:
    """The policy contract for the prompts (replaces the CLRS processor contract)."""
    return (_family_dir() / "contract.md").read_text(encoding="utf-8").strip()


def build_policy(module: Any, hidden: int) -> Any:
    """Calls the program's frozen `make_policy(hidden)`; checks it is a Flax linen module."""
    import flax.linen as nn

    policy = getattr(module, FACTORY)(hidden)
    if not isinstance(policy, nn.Module):
        raise program_lib.ProgramError(
            f"{FACTORY} returned {type(policy).__name__}, not a flax.linen.Module"
        )
    return policy


@dataclasses.dataclass(frozen=True, kw_only=True)
class CartPoleEvaluation(cartpole_ppo.CartPoleScore):
    """One candidate trained and scored on CartPole-v1: its `ppo.CartPoleScore` (score,
    test_return, train_return, train_seconds, params, macs, part, val_return) with what was
    trained and on which episodes.

    Attributes:
      program, program_sha256: the candidate's name and normalized-source hash.
      preset, seed: the PPO preset and training seed.
      eval_seed, eval_episodes: the fixed episodes of the scored part (`val_seed` for 'val').
    """

    program: str
    program_sha256: str
    preset: str
    seed: int
    eval_seed: int
    eval_episodes: int


def evaluate_program(
    program: program_lib.Program, preset: str, seed: int | None = None, part: str = "test"
) -> CartPoleEvaluation:
    """Trains `program`'s policy with PPO under `preset` (training seed `seed`, default the
    preset's) and scores it on the fixed episodes of `part` ('val' or 'test') only."""
    cfg = cartpole_ppo.preset(preset)
    if seed is not None:
        cfg = dataclasses.replace(cfg, seed=int(seed))
    module = program_lib.load_module(program, FACTORY)
    result = cartpole_ppo.train_and_score(build_policy(module, cfg.hidden), cfg, part)
    return CartPoleEvaluation(
        program=program.name,
        program_sha256=program.sha256,
        preset=preset,
        seed=cfg.seed,
        eval_seed=cfg.val_seed if part == "val" else cfg.eval_seed,
        eval_episodes=cfg.eval_episodes,
        **result.to_dict(),
    )


@dataclasses.dataclass(frozen=True)
class CartPoleFamily:
    """CartPole-v1 behind the task-family boundary (`spark_jax.families.TaskFamily`).

    The score is the scored episodes' return / 500; metrics are the paper's train return
    and the return on the scored episodes: `val_return` (part 'val', the search's selection)
    or `test_return` (part 'test', the final programs).
    """

    name: str = NAME
    benchmarks: tuple[str, ...] = (BENCHMARK,)
    factory: str = FACTORY
    presets: tuple[str, ...] = tuple(cartpole_ppo.PRESETS)
    default_seed: str = "mlp"
    test_part: str = "cartpole test split"
    val_part: str = "a validation split"
    score_metric: Mapping[str, Any] = dataclasses.field(  # the report's score (return / 500)
        default_factory=lambda: dict(
            name="return", word="return", scale=500.0, unit="", digits=1, diff_unit=""
        )
    )
    paper_keys: Mapping[str, str] = dataclasses.field(
        default_factory=lambda: {BENCHMARK: "cartpole_v1"}  # its row in extra_benchmarks.csv
    )

    def seed_programs(self) -> dict[str, pathlib.Path]:
        return seed_programs()

    def contract_text(self) -> str:
        return contract_text()

    def _benchmark(self, benchmark: str) -> None:
        if benchmark != BENCHMARK:
            raise ValueError(f"unknown CartPole benchmark {benchmark!r}; known: {BENCHMARK}")

    def check(self, source: str, benchmark: str, preset: str) -> str | None:
        """In-process semantic check (the search runs it in the sandbox instead)."""
        from spark_jax.feasibility.stage_checks import CheckFailure
        from spark_jax.plugins.cartpole import checks as cartpole_check

        self._benchmark(benchmark)
        try:
            module = program_lib.load_module(program_lib.Program(source=source), FACTORY)
            cartpole_check.build_and_check(module, cartpole_ppo.preset(preset).hidden, 3, {})
        except program_lib.ProgramError as e:
            return str(e)
        except CheckFailure as e:
            return f"{e.failure_type}: {e.reason}"
        return None

    def evaluate(
        self, source: str, benchmark: str, preset: str, seed: int, split: str = "test"
    ) -> families.Evaluation:
        self._benchmark(benchmark)
        ev = evaluate_program(program_lib.Program(source=source), preset, seed, split)
        scored = ev.val_return if split == "val" else ev.test_return
        metrics = {"train_return": ev.train_return, f"{split}_return": scored}
        shared = {name: getattr(ev, name) for name in _SHARED_FIELDS}
        return families.Evaluation(task=benchmark, family=self.name, metrics=metrics, **shared)

    def data_record(self, benchmark: str, preset: str) -> dict[str, Any]:
        self._benchmark(benchmark)
        cfg = cartpole_ppo.preset(preset)
        fields = {name: getattr(cfg, name) for name in _DATA_FIELDS}
        return dict(env="gymnax CartPole-v1", preset=preset, train_seed=cfg.seed, **fields)

    def sandbox_spec(self, benchmark: str, preset: str) -> dict[str, Any]:
        self._benchmark(benchmark)
        return dict(hidden=cartpole_ppo.preset(preset).hidden)

    def model_args(self, spec: dict[str, Any]) -> tuple[int]:
        return (int(spec["hidden"]),)

    def example_width(self, spec: dict[str, Any]) -> int:
        from spark_jax.plugins.cartpole import checks

        return checks.OBS_SIZE

    def check_semantic(self, model: Any, spec: dict[str, Any], batch: int, info: dict) -> None:
        from spark_jax.plugins.cartpole import checks

        checks.check_policy_semantic(model, batch, info)

    def offline_transforms(self) -> tuple:
        from spark_jax.plugins.cartpole.transforms import POLICY_TRANSFORMS

        return POLICY_TRANSFORMS


FAMILY = CartPoleFamily()
