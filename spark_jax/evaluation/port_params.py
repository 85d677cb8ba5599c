"""DeepMind's parameters in our port: the name map from the Haiku PGN family to the Flax ports.

With the official model's parameters copied into ours, the two compute the same function
(`tests/test_ports.py` for the processors, `tests/test_model_equivalence.py` and
`scripts/port_equivalence.py` for the whole model: loss and gradients).
"""

from __future__ import annotations

from typing import Any

from spark_jax.evaluation.bridge import ADAPTER_NAME

__all__ = ["PORT_SCOPE", "haiku_to_flax_names", "official_to_port"]

# Where the Flax processor's parameters live in a whole model's parameter tree.
PORT_SCOPE = "net/" + ADAPTER_NAME + "_clrs_processor/flax/"


def haiku_to_flax_names(triplets: bool, gated: bool, use_ln: bool = True) -> dict[str, str]:
    """Haiku module name (inside clrs' PGN) -> the port's attribute name.

    Haiku names linears by creation order inside `PGN.__call__`: m_1, m_2, m_e, m_g, o1, o2,
    [triplets: t_1..t_g, o3], [gated: gate1..gate3]; then the message MLP and the layer norm.
    """
    names = ["m_1", "m_2", "m_e", "m_g", "o1", "o2"]
    if triplets:
        names += ["t_1", "t_2", "t_3", "t_e_1", "t_e_2", "t_e_3", "t_g", "o3"]
    if gated:
        names += ["gate1", "gate2", "gate3"]
    mapping = {("linear" if i == 0 else f"linear_{i}"): flax for i, flax in enumerate(names)}
    mapping["mlp/~/linear_0"] = "msg_mlp_1"
    mapping["mlp/~/linear_1"] = "msg_mlp_2"
    if use_ln:
        mapping["layer_norm"] = "ln"
    return mapping


def official_to_port(official: dict[str, Any], mapping: dict[str, str]) -> dict[str, Any]:
    """A whole official model's parameter (or gradient) tree renamed into our port's tree:
    encoders and decoders as they are, the processor's leaves under `PORT_SCOPE`."""
    out = {k: v for k, v in official.items() if "clrs_processor" not in k}
    for name, leaves in official.items():
        if "clrs_processor" not in name:
            continue
        local = name.split("clrs_processor/", 1)[1]
        if local == "layer_norm":
            out[PORT_SCOPE + mapping[local]] = {"scale": leaves["scale"], "bias": leaves["offset"]}
        else:
            out[PORT_SCOPE + mapping[local]] = {"kernel": leaves["w"], "bias": leaves["b"]}
    return out
