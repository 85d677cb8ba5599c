"""The program model: a candidate is one Python file with OPERATOR/ACTION regions.

  regions   tag template, normalization, replacing a region body
  locality  region diffs (parent -> child), the locality check, entanglement
  submodules  submodules `setup` defines that nothing calls yet (two-step edits)
  source   the immutable `Program` record; reading files; loading into a fresh namespace
  macs     MACs of one processor step on the reference input (imports JAX when used)
  outcome  `TrainingError`, how a training fails (the record of one that ended well is
           `families.Evaluation`)

May import: `config`, `util`.
"""

from spark_jax.program import locality, regions
from spark_jax.program.source import (
    FACTORY_NAME,
    OFFICIAL_KINDS,
    OFFICIAL_PREFIX,
    Program,
    ProgramError,
    build_flax_processor,
    check_template,
    decoder_inf_bias,
    load_module,
    masks_non_edges,
    read_program,
)

__all__ = [
    "FACTORY_NAME",
    "OFFICIAL_KINDS",
    "OFFICIAL_PREFIX",
    "Program",
    "ProgramError",
    "build_flax_processor",
    "check_template",
    "decoder_inf_bias",
    "load_module",
    "locality",
    "masks_non_edges",
    "read_program",
    "regions",
]
