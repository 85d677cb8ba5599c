"""CartPole-v1 actor-critic MLP: the standard PPO policy for gymnax CartPole (PureJaxRL).

Two separate tanh trunks of width `hidden`, one for the policy logits and one for the value,
with orthogonal initialization (gain sqrt(2) in the trunks, 0.01 on the logits, 1 on the
value), as in CleanRL and PureJaxRL's PPO.
"""
import math

import flax.linen as nn
import jax  # noqa: F401 - the search's edits of the regions use it
import jax.numpy as jnp

OBS_SIZE = 4
NUM_ACTIONS = 2


def dense(features: int, gain: float = math.sqrt(2.0)):
    """A dense layer with orthogonal kernel (scaled by `gain`) and zero bias."""
    return nn.Dense(
        features, kernel_init=nn.initializers.orthogonal(gain), bias_init=nn.initializers.zeros
    )


class Processor(nn.Module):
    """CartPole-v1 policy contract.

    __call__(obs [B, 4] float32) -> (logits [B, 2] float32, value [B] float32)
    """

    hidden: int = 64

    def setup(self):
        # SPARK:BEGIN OPERATOR
        h = self.hidden
        # Actor trunk and logits head.
        self.actor_1 = dense(h)
        self.actor_2 = dense(h)
        self.actor_out = dense(NUM_ACTIONS, gain=0.01)
        # Critic trunk and value head.
        self.critic_1 = dense(h)
        self.critic_2 = dense(h)
        self.critic_out = dense(1, gain=1.0)
        # SPARK:END OPERATOR

    def __call__(self, obs):
        # SPARK:BEGIN ACTION
        assert obs.shape[-1] == OBS_SIZE
        a = jnp.tanh(self.actor_1(obs))  # [B, H]
        a = jnp.tanh(self.actor_2(a))  # [B, H]
        logits = self.actor_out(a)  # [B, 2]

        c = jnp.tanh(self.critic_1(obs))  # [B, H]
        c = jnp.tanh(self.critic_2(c))  # [B, H]
        value = jnp.squeeze(self.critic_out(c), axis=-1)  # [B]
        return logits, value
        # SPARK:END ACTION


def make_policy(hidden: int = 64) -> nn.Module:
    """Frozen factory: the search never edits this."""
    return Processor(hidden=hidden)
