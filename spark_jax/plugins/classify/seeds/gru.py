"""GRU: reads the features as a length-F sequence of scalars; classifies the last state."""
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
        self.rnn = nn.RNN(nn.GRUCell(features=self.hidden // 2))
        self.out = nn.Dense(self.num_classes)
        # SPARK:END OPERATOR

    def __call__(self, x):
        # SPARK:BEGIN ACTION
        h = self.rnn(x[..., None])  # [B, F, K]
        return self.out(h[:, -1])  # [B, C]
        # SPARK:END ACTION


def make_classifier(num_classes: int, hidden: int = 64) -> nn.Module:
    """Frozen factory: the search never edits this."""
    return Processor(num_classes=num_classes, hidden=hidden)
