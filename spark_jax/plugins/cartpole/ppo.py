"""CartPole-v1 training and scoring: PPO on gymnax's pure-JAX CartPole, jit over the whole run.

The candidate is a Flax policy `__call__(obs [B, 4]) -> (logits [B, 2], value [B])`. Training
is PureJaxRL's PPO (clipped surrogate, GAE, Adam with global-norm clipping and a linearly
annealed learning rate), with every environment stepped under `vmap` and the whole run one
`jit`-compiled `lax.scan`, so a fixed seed gives the same result on the same device.

Scoring, on one of two disjoint sets of fixed episodes (`eval_episodes` each):
  - validation return (part 'val', what a search selects on): mean undiscounted return of the
    greedy (argmax) policy over episodes whose resets come from the fixed `val_seed`;
  - test return (part 'test', the final programs only): the same over the episodes of the
    fixed `eval_seed` (the test set);
  both capped at 500 steps (CartPole-v1's time limit); the archive's score is the scored
  part's return / 500, in [0, 1]. Training draws its keys from `seed`, never these two.
  - train return: mean return of the episodes (stochastic policy) that ended during the last
    quarter of the training updates; 0 when none ended there.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

__all__ = [
    "MAX_RETURN",
    "PRESETS",
    "PPOConfig",
    "CartPoleScore",
    "preset",
    "train_and_score",
    "evaluate_policy",
    "policy_macs",
]

MAX_RETURN = 500.0  # CartPole-v1's episode cap: the best possible return.
OBS_SIZE = 4
NUM_ACTIONS = 2


@dataclasses.dataclass(frozen=True)
class PPOConfig:
    """PPO hyperparameters and the evaluation protocol (PureJaxRL's CartPole defaults).

    Attributes:
      hidden: the width passed to the program's `make_policy(hidden)`.
      num_envs, num_steps: environments stepped in parallel, steps per env per update.
      total_timesteps: environment steps over the whole run (num_envs * num_steps per update).
      update_epochs, num_minibatches: PPO passes over each rollout and minibatches per pass.
      lr, anneal_lr, max_grad_norm: Adam step size, its linear decay to 0, gradient clipping.
      gamma, gae_lambda, clip_eps, ent_coef, vf_coef: the PPO loss.
      seed: training seed (parameter init, actions, environment resets).
      eval_seed, eval_episodes: the fixed evaluation episodes of the test return.
      val_seed: the fixed episodes of the validation return (the search's selection).
    """

    hidden: int = 64
    num_envs: int = 4
    num_steps: int = 128
    total_timesteps: int = 500_000
    update_epochs: int = 4
    num_minibatches: int = 4
    lr: float = 2.5e-4
    anneal_lr: bool = True
    max_grad_norm: float = 0.5
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_eps: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    seed: int = 0
    eval_seed: int = 1_000_003
    eval_episodes: int = 32
    val_seed: int = 2_000_003

    @property
    def num_updates(self) -> int:
        return max(1, self.total_timesteps // (self.num_envs * self.num_steps))


# tiny: seconds on a CPU (a check that training runs, not a policy); smoke: a short real run;
# paper: PureJaxRL's full CartPole budget (5e5 steps), which solves the task with the seed.
PRESETS: dict[str, PPOConfig] = {
    "tiny": PPOConfig(hidden=16, num_steps=32, total_timesteps=4 * 32 * 4, eval_episodes=4),
    "smoke": PPOConfig(hidden=64, total_timesteps=50_000, eval_episodes=16),
    "paper": PPOConfig(),
}


def preset(name: str) -> PPOConfig:
    """The PPO preset called `name`; raises ValueError naming the known ones."""
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown CartPole preset {name!r}; known: {', '.join(PRESETS)}") from None


@dataclasses.dataclass(frozen=True)
class CartPoleScore:
    """One candidate's CartPole-v1 result.

    Attributes:
      part: the scored episodes: 'val' (`val_seed`) or 'test' (`eval_seed`).
      score: the scored part's return / 500, in [0, 1] (the archive's score).
      test_return, val_return: mean greedy return over the test or validation episodes (None
        for the part not scored).
      train_return: mean return of the episodes that ended in the last quarter of training.
      train_seconds: wall time of training and evaluation, compilation included.
      params: trainable parameters of the policy.
      macs: multiply-accumulates of one policy call on one observation.
    """

    score: float
    test_return: float | None
    train_return: float
    train_seconds: float
    params: int
    macs: int
    part: str = "test"
    val_return: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain data (a `CartPoleEvaluation`'s too, its fields after these)."""
        return dataclasses.asdict(self)


def _env():
    try:
        import gymnax
    except ImportError as e:
        raise ImportError(
            f"CartPole-v1 needs gymnax ({e}); install it with: pip install 'spark-jax[rl]'"
        ) from None

    env, env_params = gymnax.make("CartPole-v1")
    return env, env_params


def policy_macs(policy: Any) -> tuple[int, int]:
    """(MACs, params) of one policy call on a single observation, traced abstractly."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from spark_jax.program import macs as macs_lib

    obs = jax.ShapeDtypeStruct((1, OBS_SIZE), jnp.float32)  # [1, 4]
    variables = jax.eval_shape(lambda o: policy.init(jax.random.PRNGKey(0), o), obs)
    params = int(sum(int(np.prod(x.shape)) for x in jax.tree_util.tree_leaves(variables)))
    return macs_lib.count_macs(lambda v, o: policy.apply(v, o), variables, obs), params


def evaluate_policy(policy: Any, variables: Any, cfg: PPOConfig, part: str = "test") -> float:
    """Mean greedy return over the fixed episodes of `part` ('test': `eval_seed`, 'val':
    `val_seed`), each capped at 500 steps."""
    if part not in ("val", "test"):
        raise ValueError(f"unknown CartPole episode set {part!r}; known: val, test")
    import jax
    import jax.numpy as jnp

    env, env_params = _env()
    steps = int(env_params.max_steps_in_episode)

    def run(key):
        keys = jax.random.split(key, cfg.eval_episodes)
        obs, state = jax.vmap(env.reset, in_axes=(0, None))(keys, env_params)  # [E, 4]

        def step(carry, _):
            obs, state, alive, ret, key = carry
            key, sub = jax.random.split(key)
            logits, _ = policy.apply(variables, obs)  # [E, 2]
            action = jnp.argmax(logits, axis=-1)  # [E]
            subs = jax.random.split(sub, cfg.eval_episodes)
            obs, state, reward, term, trunc, _ = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
                subs, state, action, env_params
            )
            done = term | trunc  # [E]
            ret = ret + reward * alive  # [E]
            alive = alive * (1.0 - done.astype(jnp.float32))
            return (obs, state, alive, ret, key), None

        alive = jnp.ones((cfg.eval_episodes,), jnp.float32)  # [E]
        carry = (obs, state, alive, jnp.zeros_like(alive), key)
        (_, _, _, ret, _), _ = jax.lax.scan(step, carry, None, length=steps)
        return jnp.mean(ret)

    seed = cfg.val_seed if part == "val" else cfg.eval_seed
    return float(jax.jit(run)(jax.random.PRNGKey(seed)))


def train_and_score(policy: Any, cfg: PPOConfig, part: str = "test") -> CartPoleScore:
    """Trains `policy` with PPO under `cfg` and scores it on the episodes of `part` only
    (see the module docstring)."""
    import jax

    start = time.perf_counter()
    variables, train_return = _train(policy, cfg)
    greedy = evaluate_policy(policy, variables, cfg, part)
    seconds = time.perf_counter() - start
    macs, params = policy_macs(policy)
    return CartPoleScore(
        score=min(1.0, max(0.0, greedy / MAX_RETURN)),
        test_return=greedy if part == "test" else None,
        val_return=greedy if part == "val" else None,
        part=part,
        train_return=float(jax.device_get(train_return)),
        train_seconds=seconds,
        params=params,
        macs=macs,
    )


def _optimizer(cfg: PPOConfig) -> Any:
    """Adam behind global-norm clipping, its rate annealed linearly over the updates."""
    import optax

    def schedule(count):
        frac = 1.0 - (count // (cfg.num_minibatches * cfg.update_epochs)) / cfg.num_updates
        return cfg.lr * frac

    return optax.chain(
        optax.clip_by_global_norm(cfg.max_grad_norm),
        optax.adam(schedule if cfg.anneal_lr else cfg.lr, eps=1e-5),
    )


def _loss(policy: Any, cfg: PPOConfig):
    """PPO's clipped surrogate + value loss - entropy bonus, on one minibatch."""
    import jax
    import jax.numpy as jnp

    def loss_fn(params, obs, action, old_logp, adv, target):
        logits, value = policy.apply(params, obs)  # [M, 2], [M]
        logp_all = jax.nn.log_softmax(logits)  # [M, 2]
        logp = jnp.take_along_axis(logp_all, action[:, None], axis=-1)[:, 0]  # [M]
        ratio = jnp.exp(logp - old_logp)
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        actor = -jnp.minimum(
            ratio * adv, jnp.clip(ratio, 1.0 - cfg.clip_eps, 1.0 + cfg.clip_eps) * adv
        ).mean()
        critic = 0.5 * jnp.square(value - target).mean()
        entropy = -(jnp.exp(logp_all) * logp_all).sum(-1).mean()
        return actor + cfg.vf_coef * critic - cfg.ent_coef * entropy

    return loss_fn


def _rollout_step(policy: Any, env: Any, env_params: Any, n_envs: int):
    """One step of the E environments under the policy (a `lax.scan` body)."""
    import jax
    import jax.numpy as jnp

    def rollout_step(carry, _):
        params, obs, state, ep_ret, key = carry
        key, k_act, k_env = jax.random.split(key, 3)
        logits, value = policy.apply(params, obs)  # [E, 2], [E]
        action = jax.random.categorical(k_act, logits)  # [E]
        logp = jnp.take_along_axis(jax.nn.log_softmax(logits), action[:, None], -1)[:, 0]
        keys = jax.random.split(k_env, n_envs)
        nobs, state, reward, term, trunc, _ = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
            keys, state, action, env_params
        )
        done = term | trunc  # [E] (the episode ends; PureJaxRL cuts GAE at either)
        ep_ret = ep_ret + reward  # [E]
        finished = jnp.where(done, ep_ret, 0.0)  # [E]
        ep_ret = jnp.where(done, 0.0, ep_ret)
        trans = (obs, action, logp, value, reward, done.astype(jnp.float32), finished)
        return (params, nobs, state, ep_ret, key), trans

    return rollout_step


def _gae(cfg: PPOConfig, values, rewards, dones, last_value):
    """Generalised advantage estimates and value targets, [T, E] each."""
    import jax
    import jax.numpy as jnp

    def back(carry, x):
        next_adv, next_value = carry
        value, reward, done = x
        delta = reward + cfg.gamma * next_value * (1.0 - done) - value
        adv = delta + cfg.gamma * cfg.gae_lambda * (1.0 - done) * next_adv
        return (adv, value), adv

    init = (jnp.zeros_like(last_value), last_value)
    _, adv = jax.lax.scan(back, init, (values, rewards, dones), reverse=True)
    return adv, adv + values  # [T, E] each


def _epoch(cfg: PPOConfig, loss_fn, tx: Any, flat, batch: int):
    """One pass over the rollout in shuffled minibatches (a `lax.scan` body)."""
    import jax
    import optax

    minibatch = batch // cfg.num_minibatches

    def epoch(carry, _):
        params, opt_state, key = carry
        key, sub = jax.random.split(key)
        perm = jax.random.permutation(sub, batch)
        shuffled = jax.tree_util.tree_map(
            lambda x: x[perm].reshape((cfg.num_minibatches, minibatch) + x.shape[1:]), flat
        )

        def minibatch_step(carry, mb):
            params, opt_state = carry
            grads = jax.grad(loss_fn)(params, *mb)
            updates, opt_state = tx.update(grads, opt_state, params)
            return (optax.apply_updates(params, updates), opt_state), None

        (params, opt_state), _ = jax.lax.scan(minibatch_step, (params, opt_state), shuffled)
        return (params, opt_state, key), None

    return epoch


def _train(policy: Any, cfg: PPOConfig) -> tuple[Any, Any]:
    """PPO; returns (trained variables, train return)."""
    import jax
    import jax.numpy as jnp

    env, env_params = _env()
    n_updates, n_envs, n_steps = cfg.num_updates, cfg.num_envs, cfg.num_steps
    batch = n_envs * n_steps
    tx, loss_fn = _optimizer(cfg), _loss(policy, cfg)
    rollout_step = _rollout_step(policy, env, env_params, n_envs)

    def update(carry, index):
        params, opt_state, obs, state, ep_ret, key = carry
        (params, obs, state, ep_ret, key), traj = jax.lax.scan(
            rollout_step, (params, obs, state, ep_ret, key), None, length=n_steps
        )
        t_obs, t_act, t_logp, t_val, t_rew, t_done, t_fin = traj  # [T, E, ...]
        _, last_value = policy.apply(params, obs)  # [E]
        adv, target = _gae(cfg, t_val, t_rew, t_done, last_value)
        flat = jax.tree_util.tree_map(
            lambda x: x.reshape((batch,) + x.shape[2:]), (t_obs, t_act, t_logp, adv, target)
        )
        (params, opt_state, key), _ = jax.lax.scan(
            _epoch(cfg, loss_fn, tx, flat, batch), (params, opt_state, key), None,
            length=cfg.update_epochs,
        )  # fmt: skip
        counted = index >= n_updates - max(1, n_updates // 4)  # The last quarter of updates.
        stats = (counted * t_fin.sum(), counted * t_done.sum())
        return (params, opt_state, obs, state, ep_ret, key), stats

    def run(key):
        key, k_init, k_reset = jax.random.split(key, 3)
        obs, state = jax.vmap(env.reset, in_axes=(0, None))(
            jax.random.split(k_reset, n_envs), env_params
        )  # [E, 4]
        params = policy.init(k_init, obs)
        opt_state = tx.init(params)
        carry = (params, opt_state, obs, state, jnp.zeros((n_envs,), jnp.float32), key)
        (params, *_), (ret_sum, ended) = jax.lax.scan(update, carry, jnp.arange(n_updates))
        train_return = jnp.where(ended.sum() > 0, ret_sum.sum() / jnp.maximum(ended.sum(), 1), 0.0)
        return params, train_return

    return jax.jit(run)(jax.random.PRNGKey(cfg.seed))
