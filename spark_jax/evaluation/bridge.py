"""The CLRS bridge: run a Flax processor as a Haiku `clrs` Processor inside `BaselineModel`.

`processor_factory(program, use_ln, nb_triplet_fts)` returns what
`clrs.models.BaselineModel(processor_factory=...)` expects: a callable `out_size -> Processor`.
The adapter subclasses CLRS's `Processor` so its Haiku name carries the `_clrs_processor` tag
(without it CLRS's gradient filtering drops the processor's gradients) and lifts the Flax
module with `hk.experimental.flax.lift`, so Flax parameters live in the Haiku params tree.
A program's module-level `INF_BIAS` / `INF_BIAS_EDGE` (the `*_mask` kinds) become the
adapter's `inf_bias` / `inf_bias_edge`, which CLRS's decoders read.
"""

from __future__ import annotations

import tempfile
from typing import Callable

import clrs
import haiku as hk
import jax.numpy as jnp
from clrs._src import processors as clrs_processors

from spark_jax import program as program_lib

ADAPTER_NAME = "spark_flax"


class FlaxProcessor(clrs_processors.Processor):
    """Haiku adapter around a Flax linen processor (the CLRS processor contract)."""

    def __init__(
        self,
        flax_module,
        name: str = ADAPTER_NAME,
        inf_bias: bool = False,
        inf_bias_edge: bool = False,
    ):
        super().__init__(name=name)  # appends '_clrs_processor'
        self._flax_module = flax_module
        self._inf_bias = inf_bias
        self._inf_bias_edge = inf_bias_edge

    @property
    def inf_bias(self):
        """CLRS decoders mask pointer logits on non-edges (the program's INF_BIAS)."""
        return self._inf_bias

    @property
    def inf_bias_edge(self):
        """CLRS decoders mask edge-mask logits on non-edges (the program's INF_BIAS_EDGE)."""
        return self._inf_bias_edge

    def __call__(self, node_fts, edge_fts, graph_fts, adj_mat, hidden, **unused_kwargs):
        b, n, _ = node_fts.shape
        assert edge_fts.shape[:-1] == (b, n, n), edge_fts.shape
        assert graph_fts.shape[:-1] == (b,), graph_fts.shape
        assert adj_mat.shape == (b, n, n), adj_mat.shape
        lifted = hk.experimental.flax.lift(self._flax_module, name="flax")
        kwargs = {}
        rng = hk.maybe_next_rng_key()
        if rng is not None:
            kwargs["rngs"] = {"dropout": rng}  # explicit rngs for candidates using nn.Dropout
        out = lifted(node_fts, edge_fts, graph_fts, adj_mat, hidden, **kwargs)
        nxt_hidden, nxt_edge = check_processor_output(out, b, n)
        return nxt_hidden, nxt_edge


def check_processor_output(out, b: int, n: int, hidden: int | None = None):
    """Validates a processor's (nxt_hidden, nxt_edge) against the contract; returns it."""
    if not (isinstance(out, tuple) and len(out) == 2):
        raise ValueError(
            f"processor must return (nxt_hidden, nxt_edge|None), got {type(out).__name__}"
        )
    nxt_hidden, nxt_edge = out
    if nxt_hidden.ndim != 3 or nxt_hidden.shape[:2] != (b, n):
        raise ValueError(
            f"processor node output has shape {nxt_hidden.shape}, expected ({b}, {n}, H)"
        )
    if nxt_edge is not None and (nxt_edge.ndim != 4 or nxt_edge.shape[:3] != (b, n, n)):
        raise ValueError(
            f"processor edge output has shape {nxt_edge.shape}, expected ({b}, {n}, {n}, H) or None"
        )
    if hidden is not None and nxt_hidden.shape[-1] != hidden:
        raise ValueError(
            f"processor node output has width {nxt_hidden.shape[-1]}, expected {hidden}"
        )
    if not jnp.issubdtype(nxt_hidden.dtype, jnp.floating):
        raise ValueError(f"processor node output has dtype {nxt_hidden.dtype}, expected float")
    return nxt_hidden, nxt_edge


def processor_factory(
    program: program_lib.Program, use_ln: bool, nb_triplet_fts: int
) -> Callable[[int], FlaxProcessor]:
    """A CLRS processor factory for a candidate program (loaded once, in its own namespace)."""
    return module_processor_factory(program_lib.load_module(program), use_ln, nb_triplet_fts)


def module_processor_factory(
    module, use_ln: bool, nb_triplet_fts: int
) -> Callable[[int], FlaxProcessor]:
    """The same for a program module already loaded with `program.load_module`."""

    inf_bias, inf_bias_edge = program_lib.decoder_inf_bias(module)

    def _factory(out_size: int) -> FlaxProcessor:
        flax_module = program_lib.build_flax_processor(module, out_size, use_ln, nb_triplet_fts)
        return FlaxProcessor(flax_module, inf_bias=inf_bias, inf_bias_edge=inf_bias_edge)

    return _factory


def official_processor_factory(
    kind: str, use_ln: bool, nb_triplet_fts: int, nb_heads: int = 1
) -> Callable[[int], clrs_processors.Processor]:
    """DeepMind's Haiku processor of the given kind (for baselines and equivalence tests)."""
    return clrs_processors.get_processor_factory(
        kind, use_ln=use_ln, nb_triplet_fts=nb_triplet_fts, nb_heads=nb_heads
    )


# The protocol's fields `BaselineModel` takes under their own names (`hidden_size` is its
# `hidden_dim`).
MODEL_FIELDS = (
    "encode_hints",
    "decode_hints",
    "encoder_init",
    "learning_rate",
    "grad_clip_max_norm",
    "hint_repred_mode",
)


def baseline_model(spec, dummy_trajectory, processor_factory, cfg):
    """DeepMind's `BaselineModel` under protocol `cfg` (a `ProtocolConfig`): the one place the
    protocol's fields become its arguments (our trainer and both bench loops use it).
    Checkpoints are never written: the path is only a required argument."""
    return clrs.models.BaselineModel(
        spec=spec,
        dummy_trajectory=dummy_trajectory,
        processor_factory=processor_factory,
        hidden_dim=cfg.hidden_size,
        checkpoint_path=tempfile.gettempdir(),
        **{name: getattr(cfg, name) for name in MODEL_FIELDS},
    )
