"""Logistic regression: one dense layer from features to class logits."""
import flax.linen as nn
import jax.numpy as jnp


class Processor(nn.Module):
    """Classifier contract.

    __call__(x [B, F] float32) -> logits [B, C] float32
    """

    num_classes: int
    hidden: int = 64

    def setup(self):
        # SPARK:BEGIN OPERATOR
        self.out = nn.Dense(self.num_classes)
        # SPARK:END OPERATOR

    def __call__(self, x):
        # SPARK:BEGIN ACTION
        x = jnp.asarray(x, jnp.float32)  # [B, F]
        return self.out(x)  # [B, C]
        # SPARK:END ACTION


def make_classifier(num_classes: int, hidden: int = 64) -> nn.Module:
    """Frozen factory: the search never edits this."""
    return Processor(num_classes=num_classes, hidden=hidden)
