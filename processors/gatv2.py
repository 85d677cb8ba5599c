"""GATv2 processor: a Flax port of CLRS's `gatv2` (Brody et al., ICLR 2022).

Multi-head dynamic graph attention restricted to the input adjacency: each head scores a
LeakyReLU of summed receiver, sender, edge and graph projections with its own linear
readout; a residual skip, then ReLU.
Given the same weights it reproduces `clrs.get_processor_factory('gatv2', ...)`.
"""
import math
from typing import Optional

import flax.linen as nn
import jax
import jax.numpy as jnp

# Attention is softmaxed only over adjacency-defined edges (non-edges get a -1e9 logit
# bias, so their weight is exactly zero): features on non-edges must not change the node
# output (checked by feasibility's masking invariant).
MASKS_NON_EDGES = True


def haiku_linear_init(key, shape, dtype=jnp.float32):
    """Haiku `Linear`'s default: truncated normal (+-2 std), stddev 1/sqrt(fan_in)."""
    stddev = 1.0 / math.sqrt(shape[0])
    return stddev * jax.random.truncated_normal(key, -2.0, 2.0, shape, dtype)


def linear(features: int, bias_init=nn.initializers.zeros, name: Optional[str] = None):
    """A dense layer initialized like `hk.Linear`."""
    return nn.Dense(features, kernel_init=haiku_linear_init, bias_init=bias_init, name=name)


def layer_norm(name: Optional[str] = None):
    """A layer norm computed like `hk.LayerNorm(axis=-1, create_scale, create_offset)`."""
    return nn.LayerNorm(epsilon=1e-5, use_fast_variance=False, name=name)


class Processor(nn.Module):
    """CLRS processor contract.

    __call__(node_fts [B,N,H], edge_fts [B,N,N,H], graph_fts [B,H], adj_mat [B,N,N],
             hidden [B,N,H]) -> (nxt_hidden [B,N,out_size], nxt_edge [B,N,N,H'] | None)
    """
    out_size: int
    use_ln: bool = True
    nb_triplet_fts: int = 8
    # Attention heads K (must divide out_size): 1, as CLRS's and our official baseline's.
    nb_heads: int = 1

    def setup(self):
        # SPARK:BEGIN OPERATOR
        h = self.out_size
        # Values and the residual skip.
        self.m = linear(h)
        self.skip = linear(h)
        # Pre-attention projections (width h, split over heads): receiver, sender, edge, graph.
        self.w_1 = linear(h)
        self.w_2 = linear(h)
        self.w_e = linear(h)
        self.w_g = linear(h)
        # One attention readout per head.
        self.a_heads = [linear(1) for _ in range(self.nb_heads)]
        self.ln = layer_norm()
        # SPARK:END OPERATOR

    def __call__(self, node_fts, edge_fts, graph_fts, adj_mat, hidden):
        # SPARK:BEGIN ACTION
        b, n, _ = node_fts.shape
        assert edge_fts.shape[:-1] == (b, n, n)
        assert graph_fts.shape[:-1] == (b,)
        assert adj_mat.shape == (b, n, n)
        k = self.nb_heads

        z = jnp.concatenate([node_fts, hidden], axis=-1)  # [B, N, 2H]
        bias_mat = (adj_mat - 1.0) * 1e9  # [B, N, N]: -1e9 on non-edges
        bias_mat = jnp.tile(bias_mat[..., None], (1, 1, 1, k))  # [B, N, N, K]
        bias_mat = jnp.transpose(bias_mat, (0, 3, 1, 2))  # [B, K, N, N]

        values = self.m(z)  # [B, N, H]
        values = jnp.reshape(values, values.shape[:-1] + (k, -1))  # [B, N, K, H/K]
        values = jnp.transpose(values, (0, 2, 1, 3))  # [B, K, N, H/K]

        pre_att_1 = self.w_1(z)  # [B, N, H]
        pre_att_2 = self.w_2(z)  # [B, N, H]
        pre_att_e = self.w_e(edge_fts)  # [B, N, N, H]
        pre_att_g = self.w_g(graph_fts)  # [B, H]
        pre_att = (
            jnp.expand_dims(pre_att_1, axis=1)
            + jnp.expand_dims(pre_att_2, axis=2)
            + pre_att_e
            + jnp.expand_dims(pre_att_g, axis=(1, 2))
        )  # [B, N, N, H]
        pre_att = jnp.reshape(pre_att, pre_att.shape[:-1] + (k, -1))  # [B, N, N, K, H/K]
        pre_att = jnp.transpose(pre_att, (0, 3, 1, 2, 4))  # [B, K, N, N, H/K]

        logit_heads = [
            jnp.squeeze(self.a_heads[i](jax.nn.leaky_relu(pre_att[:, i])), axis=-1)  # [B, N, N]
            for i in range(k)
        ]
        logits = jnp.stack(logit_heads, axis=1)  # [B, K, N, N]
        coefs = jax.nn.softmax(logits + bias_mat, axis=-1)  # [B, K, N, N]
        att_out = jnp.matmul(coefs, values)  # [B, K, N, H/K]
        att_out = jnp.transpose(att_out, (0, 2, 1, 3))  # [B, N, K, H/K]
        att_out = jnp.reshape(att_out, att_out.shape[:-2] + (-1,))  # [B, N, H]

        ret = jax.nn.relu(att_out + self.skip(z))  # [B, N, H]
        if self.use_ln:
            ret = self.ln(ret)
        return ret, None
        # SPARK:END ACTION


def make_processor(out_size: int, use_ln: bool = True, nb_triplet_fts: int = 8) -> nn.Module:
    """Frozen factory: the search never edits this."""
    return Processor(out_size=out_size, use_ln=use_ln, nb_triplet_fts=nb_triplet_fts)
