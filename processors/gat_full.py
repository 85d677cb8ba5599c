"""GAT-full processor: a Flax port of CLRS's `gat_full` (Velickovic et al., ICLR 2018).

Multi-head graph attention over the fully connected graph (adjacency is ignored, as in
CLRS's `GATFull`): additive attention logits
from the receiver, the sender, the edge and the graph, a residual skip, then ReLU.
Given the same weights it reproduces `clrs.get_processor_factory('gat_full', ...)`.
"""
import math
from typing import Optional

import flax.linen as nn
import jax
import jax.numpy as jnp

# The node output ignores adjacency (attention over the full graph), so this processor
# makes no claim that features on adjacency-defined non-edges are masked out.
MASKS_NON_EDGES = False


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
        k = self.nb_heads
        # Values and the residual skip.
        self.m = linear(h)
        self.skip = linear(h)
        # Attention logit projections (one logit per head): receiver, sender, edge, graph.
        self.a_1 = linear(k)
        self.a_2 = linear(k)
        self.a_e = linear(k)
        self.a_g = linear(k)
        self.ln = layer_norm()
        # SPARK:END OPERATOR

    def __call__(self, node_fts, edge_fts, graph_fts, adj_mat, hidden):
        # SPARK:BEGIN ACTION
        b, n, _ = node_fts.shape
        assert edge_fts.shape[:-1] == (b, n, n)
        assert graph_fts.shape[:-1] == (b,)
        assert adj_mat.shape == (b, n, n)
        adj_mat = jnp.ones_like(adj_mat)  # GAT-full: attention over the full graph.
        k = self.nb_heads

        z = jnp.concatenate([node_fts, hidden], axis=-1)  # [B, N, 2H]
        bias_mat = (adj_mat - 1.0) * 1e9  # [B, N, N]: -1e9 on non-edges
        bias_mat = jnp.tile(bias_mat[..., None], (1, 1, 1, k))  # [B, N, N, K]
        bias_mat = jnp.transpose(bias_mat, (0, 3, 1, 2))  # [B, K, N, N]

        values = self.m(z)  # [B, N, H]
        values = jnp.reshape(values, values.shape[:-1] + (k, -1))  # [B, N, K, H/K]
        values = jnp.transpose(values, (0, 2, 1, 3))  # [B, K, N, H/K]

        att_1 = jnp.expand_dims(self.a_1(z), axis=-1)  # [B, N, K, 1]
        att_2 = jnp.expand_dims(self.a_2(z), axis=-1)  # [B, N, K, 1]
        att_e = self.a_e(edge_fts)  # [B, N, N, K]
        att_g = jnp.expand_dims(self.a_g(graph_fts), axis=-1)  # [B, K, 1]

        logits = (
            jnp.transpose(att_1, (0, 2, 1, 3))  # [B, K, N, 1]
            + jnp.transpose(att_2, (0, 2, 3, 1))  # [B, K, 1, N]
            + jnp.transpose(att_e, (0, 3, 1, 2))  # [B, K, N, N]
            + jnp.expand_dims(att_g, axis=-1)  # [B, K, 1, 1]
        )  # [B, K, N, N]
        coefs = jax.nn.softmax(jax.nn.leaky_relu(logits) + bias_mat, axis=-1)  # [B, K, N, N]
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
