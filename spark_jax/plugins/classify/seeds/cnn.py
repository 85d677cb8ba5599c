"""1-D CNN: two strided convolutions over the feature axis, then a dense head."""
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
        self.conv_1 = nn.Conv(self.hidden // 2, kernel_size=(5,), strides=(2,))
        self.conv_2 = nn.Conv(self.hidden // 2, kernel_size=(3,), strides=(2,))
        self.out = nn.Dense(self.num_classes)
        # SPARK:END OPERATOR

    def __call__(self, x):
        # SPARK:BEGIN ACTION
        h = x[..., None]  # [B, F, 1]
        h = nn.relu(self.conv_1(h))  # [B, F/2, K]
        h = nn.relu(self.conv_2(h))  # [B, F/4, K]
        h = jnp.mean(h, axis=1)  # [B, K]
        return self.out(h)  # [B, C]
        # SPARK:END ACTION


def make_classifier(num_classes: int, hidden: int = 64) -> nn.Module:
    """Frozen factory: the search never edits this."""
    return Processor(num_classes=num_classes, hidden=hidden)
