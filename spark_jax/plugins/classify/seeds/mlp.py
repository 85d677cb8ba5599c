"""Tabular/sequence classifier: a two-layer ReLU MLP over the flattened features."""
import flax.linen as nn
import jax.numpy as jnp  # noqa: F401 - the search's edits of the regions use it


class Processor(nn.Module):
    """Classifier contract.

    __call__(x [B, F] float32) -> logits [B, C] float32
    """

    num_classes: int
    hidden: int = 64

    def setup(self):
        # SPARK:BEGIN OPERATOR
        self.fc_1 = nn.Dense(self.hidden)
        self.fc_2 = nn.Dense(self.hidden)
        self.out = nn.Dense(self.num_classes)
        # SPARK:END OPERATOR

    def __call__(self, x):
        # SPARK:BEGIN ACTION
        h = nn.relu(self.fc_1(x))  # [B, H]
        h = nn.relu(self.fc_2(h))  # [B, H]
        return self.out(h)  # [B, C]
        # SPARK:END ACTION


def make_classifier(num_classes: int, hidden: int = 64) -> nn.Module:
    """Frozen factory: the search never edits this."""
    return Processor(num_classes=num_classes, hidden=hidden)
