"""CartPole-v1 at a preset: the seed policy, then a short offline-catalogue hill climb.

Not the SPARK search loop (no archive islands, no LLM): each round picks a factor at random,
applies one untried policy transform (`transforms_policy`) to the best program so far, runs
the semantic check and trains/scores the child; a child replaces the best when its validation
return (the `val_seed` episodes) is higher. The test episodes (`eval_seed`) are scored only for
the seed and the final best, after the climb. `climb` prints one row per candidate and the
seed/best rows shaped like the paper's table, validation and test returns labelled
(scripts/cartpole_smoke.py).
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import random
import time

from spark_jax.feasibility.stage_checks import CheckFailure
from spark_jax.operator.offline.roles import CatalogueEditor, NoApplicableTransform
from spark_jax.plugins.cartpole import checks as cartpole_check
from spark_jax.plugins.cartpole import ppo as cartpole_ppo
from spark_jax.plugins.cartpole.transforms import POLICY_TRANSFORMS
from spark_jax.program import source as program_source

__all__ = ["SEED", "climb"]

SEED = pathlib.Path(cartpole_check.__file__).parent / "seeds" / "mlp.py"


def _score(source: str, name: str, cfg: cartpole_ppo.PPOConfig, part: str = "val"):
    module = program_source.load_module(program_source.Program(source, name), "make_policy")
    policy = module.make_policy(cfg.hidden)
    cartpole_check.check_policy_semantic(policy, 4, {})
    return cartpole_ppo.train_and_score(policy, cfg, part)


def _row(label: str, s) -> dict:
    return dict(
        cand=label,
        val_return=round(s.val_return, 2),
        train_return=round(s.train_return, 2),
        train_s=round(s.train_seconds, 2),
        macs_k=round(s.macs / 1000, 3),
        params=s.params,
    )


@dataclasses.dataclass
class _Climb:
    """The climb so far: the seed's score, the best program and score, training seconds."""

    seed: object
    best: object
    best_src: str
    trains: list[float]


def _climb(cfg: cartpole_ppo.PPOConfig, budget: int, seed: int) -> _Climb:
    """The seed, then `budget` candidates, a JSON line per candidate to stdout."""
    seed_src = SEED.read_text()
    seed_score = _score(seed_src, "seed", cfg)
    print(json.dumps(_row("seed", seed_score)), flush=True)
    state = _Climb(seed_score, seed_score, seed_src, [seed_score.train_seconds])
    editor, rng = CatalogueEditor(seed, POLICY_TRANSFORMS), random.Random(seed)
    for i in range(budget):
        factor = rng.choice(("OPERATOR", "ACTION"))
        try:
            edit = editor.edit(state.best_src, factor, rng=rng)
        except NoApplicableTransform:
            print(json.dumps(dict(cand=i + 1, factor=factor, skipped="no applicable transform")))
            continue
        try:
            s = _score(edit.source, f"c{i + 1}", cfg)
        except CheckFailure as e:
            print(json.dumps(dict(cand=i + 1, transform=edit.transform, infeasible=e.reason)))
            continue
        state.trains.append(s.train_seconds)
        print(json.dumps(dict(_row(i + 1, s), transform=edit.transform)), flush=True)
        if s.val_return > state.best.val_return:
            state.best, state.best_src = s, edit.source
    return state


def climb(preset: str, budget: int, seed: int) -> None:
    """Runs the climb on CartPole preset `preset` with the editor's `seed`; prints the
    candidates, the paper-shaped seed/best rows and the best program."""
    cfg = cartpole_ppo.preset(preset)
    start = time.perf_counter()
    state = _climb(cfg, budget, seed)
    trains = state.trains
    wall_h = (time.perf_counter() - start) / 3600
    # The test episodes, for the final programs only (same training: same parameters).
    tested = {"seed": _score(SEED.read_text(), "seed", cfg, "test")}
    tested["best"] = _score(state.best_src, "best", cfg, "test")
    print(f"preset={preset} candidates={len(trains)} wall_h={wall_h:.4f}")
    print("| row | Cand. | Wall-h | Train(s) | MACs(K) | Val Ret. | Test Ret. | Train Ret. |")
    rows = (("seed", state.seed, 1, None), ("best", state.best, len(trains), wall_h))
    for label, s, n, w in rows:
        mean_train = sum(trains) / len(trains) if label == "best" else s.train_seconds
        print(
            f"| {label} | {n} | {'--' if w is None else f'{w:.3f}'} | {mean_train:.2f} | "
            f"{s.macs / 1000:.3f} | {s.val_return:.2f} | {tested[label].test_return:.2f} | "
            f"{s.train_return:.2f} |"
        )
    print("best program:\n" + state.best_src)
