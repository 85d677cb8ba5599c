"""MemNet-full processor: a Flax port of CLRS's `memnet_full` (Sukhbaatar et al., NeurIPS 2015).

An end-to-end memory network run once per node and once for the graph: the query is that
node's (or the graph's) feature vector, the memories are its row of edge features over the
fully connected graph (adjacency is ignored, as in CLRS's `MemNetFull`). As in CLRS, feature
values are truncated to integer word ids that index learned word embeddings
(zero-initialized, with a nil word), a position encoding sums each sentence, and one
attention hop over MEMORY_SIZE memory slots feeds the output layers. The previous hidden
state is not read, there is no layer norm (CLRS's factory does not pass `use_ln` to MemNet)
and no edge output.
Given the same weights it reproduces `clrs.get_processor_factory('memnet_full', ...)`.
"""
import math
from typing import Optional

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

# The node output ignores adjacency (every edge feature is a memory), so this processor
# makes no claim that features on adjacency-defined non-edges are masked out.
MASKS_NON_EDGES = False
# CLRS's MemNet defaults: word embedding width and number of memory slots (graphs must
# have fewer than MEMORY_SIZE nodes).
EMBEDDING_SIZE = 16
MEMORY_SIZE = 128


def haiku_linear_init(key, shape, dtype=jnp.float32):
    """Haiku `Linear`'s default: truncated normal (+-2 std), stddev 1/sqrt(fan_in)."""
    stddev = 1.0 / math.sqrt(shape[0])
    return stddev * jax.random.truncated_normal(key, -2.0, 2.0, shape, dtype)


def linear(
    features: int,
    bias_init=nn.initializers.zeros,
    use_bias: bool = True,
    name: Optional[str] = None,
):
    """A dense layer initialized like `hk.Linear` (`use_bias=False` as `with_bias=False`)."""
    return nn.Dense(
        features,
        use_bias=use_bias,
        kernel_init=haiku_linear_init,
        bias_init=bias_init,
        name=name,
    )


def layer_norm(name: Optional[str] = None):
    """A layer norm computed like `hk.LayerNorm(axis=-1, create_scale, create_offset)`."""
    return nn.LayerNorm(epsilon=1e-5, use_fast_variance=False, name=name)


def position_encoding(sentence_size: int, embedding_size: int) -> np.ndarray:
    """MemNet's position encoding (section 4.1 of the paper), as CLRS computes it. [S, E]"""
    encoding = np.ones((embedding_size, sentence_size), dtype=np.float32)
    ls = sentence_size + 1
    le = embedding_size + 1
    for i in range(1, le):
        for j in range(1, ls):
            encoding[i - 1, j - 1] = (i - (le - 1) / 2) * (j - (ls - 1) / 2)
    encoding = 1 + 4 * encoding / embedding_size / sentence_size
    return np.transpose(encoding)


def embed_words(table, words):
    """Looks up word ids (feature values truncated to int32, as in CLRS) in `table` [V, E]."""
    ids = words.astype(jnp.int32)
    return jnp.take(table, ids.reshape([-1]), axis=0).reshape(ids.shape + (table.shape[-1],))


class Processor(nn.Module):
    """CLRS processor contract.

    __call__(node_fts [B,N,H], edge_fts [B,N,N,H], graph_fts [B,H], adj_mat [B,N,N],
             hidden [B,N,H]) -> (nxt_hidden [B,N,out_size], nxt_edge [B,N,N,H'] | None)
    """
    out_size: int
    use_ln: bool = True
    nb_triplet_fts: int = 8

    def setup(self):
        # SPARK:BEGIN OPERATOR
        h = self.out_size  # CLRS: vocabulary, sentence and output sizes all equal out_size.
        e = EMBEDDING_SIZE
        # Word embeddings without the nil word (zero-initialized): query (B), memory (A) and
        # output (C) embeddings, and a learned bias per memory slot.
        self.query_biases = self.param("query_biases", nn.initializers.zeros, (h - 1, e))
        self.stories_biases = self.param("stories_biases", nn.initializers.zeros, (h - 1, e))
        self.memory_contents = self.param(
            "memory_contents", nn.initializers.zeros, (MEMORY_SIZE, e)
        )
        self.output_biases = self.param("output_biases", nn.initializers.zeros, (h - 1, e))
        self.encodings = position_encoding(h, e)  # [S, E], a constant
        # Hop layers: intermediate hops (unused with one hop), the last hop ("H"), and "W".
        self.intermediate_linear = linear(e, use_bias=False)
        self.output_linear = linear(h, use_bias=False)
        self.w = linear(h, use_bias=False)
        # SPARK:END OPERATOR

    def __call__(self, node_fts, edge_fts, graph_fts, adj_mat, hidden):
        # SPARK:BEGIN ACTION
        b, n, _ = node_fts.shape
        assert edge_fts.shape[:-1] == (b, n, n)
        assert graph_fts.shape[:-1] == (b,)
        assert adj_mat.shape == (b, n, n)
        adj_mat = jnp.ones_like(adj_mat)  # MemNet-full: memories from the full graph.
        num_hops = 1

        # One query per node plus one for the graph; each query's memories are its row of
        # edge features (the graph's row is all zeros). Q = M = N + 1, S = H.
        queries = jnp.concatenate([node_fts, graph_fts[:, None]], axis=1)  # [B, Q, S]
        stories = jnp.pad(
            edge_fts * adj_mat[..., None], ((0, 0), (0, 1), (0, 1), (0, 0))
        )  # [B, Q, M, S]
        nil_word = jnp.zeros([1, self.memory_contents.shape[-1]])  # [1, E]
        slots = ((0, 0), (0, 0), (0, self.memory_contents.shape[0] - (n + 1)), (0, 0), (0, 0))

        # Memory ("A"), padded to the memory slots, plus the slot biases.
        stories_table = jnp.concatenate([self.stories_biases, nil_word], axis=0)  # [V, E]
        memory = jnp.pad(embed_words(stories_table, stories), slots)  # [B, Q, MS, S, E]
        memory = jnp.sum(memory * self.encodings, 3) + self.memory_contents  # [B, Q, MS, E]
        # Query ("B"): this is "u" in the paper.
        query_table = jnp.concatenate([self.query_biases, nil_word], axis=0)  # [V, E]
        query = jnp.sum(embed_words(query_table, queries) * self.encodings, 2)  # [B, Q, E]
        # Output embeddings ("C").
        output_table = jnp.concatenate([self.output_biases, nil_word], axis=0)  # [V, E]
        output = jnp.pad(embed_words(output_table, stories), slots)  # [B, Q, MS, S, E]
        output = jnp.sum(output * self.encodings, 3)  # [B, Q, MS, E]

        for hop in range(num_hops):
            probs = jax.nn.softmax(jnp.sum(memory * query[:, :, None, :], -1))  # [B, Q, MS]
            layer_output = jnp.sum(output * probs[..., None], 2)  # [B, Q, E]
            if hop == num_hops - 1:
                output_layer = self.output_linear(query + layer_output)  # [B, Q, H]
            else:
                output_layer = self.intermediate_linear(query + layer_output)  # [B, Q, E]
            query = output_layer
            output_layer = jax.nn.relu(output_layer)
        ret = self.w(output_layer)  # [B, Q, H]

        # The graph query's answer is broadcast to every node.
        nxt_hidden = ret[:, :-1] + ret[:, -1:]  # [B, N, H]
        return nxt_hidden, None
        # SPARK:END ACTION


def make_processor(out_size: int, use_ln: bool = True, nb_triplet_fts: int = 8) -> nn.Module:
    """Frozen factory: the search never edits this."""
    return Processor(out_size=out_size, use_ln=use_ln, nb_triplet_fts=nb_triplet_fts)
