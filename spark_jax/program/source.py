"""Candidate programs: read a processor source file and load it in its own module namespace.

A program is one Python file with the OPERATOR/ACTION region tags (see `regions`) and a
frozen factory `make_processor(out_size, use_ln=..., nb_triplet_fts=...) -> flax.linen.Module`.
Loading executes the file's code, so only trusted programs (the seeds, or candidates that
passed feasibility in a sandbox) are loaded in the caller's process.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import pathlib
import sys
import types
from typing import Any

from spark_jax.program import regions

FACTORY_NAME = "make_processor"
# Names of the form official:KIND refer to DeepMind's Haiku processors, not program files.
OFFICIAL_PREFIX = "official:"
# Every kind `clrs.get_processor_factory` accepts (tests check this against clrs itself).
OFFICIAL_KINDS: tuple[str, ...] = (
    "deepsets",
    "gat",
    "gat_full",
    "gatv2",
    "gatv2_full",
    "gmpnn",
    "gpgn",
    "gpgn_mask",
    "memnet_full",
    "memnet_masked",
    "mpnn",
    "pgn",
    "pgn_mask",
    "triplet_gmpnn",
    "triplet_gpgn",
    "triplet_gpgn_mask",
    "triplet_mpnn",
    "triplet_pgn",
    "triplet_pgn_mask",
)
_counter = itertools.count()


class ProgramError(ValueError):
    """A program file that cannot be used: missing, unreadable, untagged, or broken."""


@dataclasses.dataclass(frozen=True)
class Program:
    """An immutable candidate program.

    Attributes:
      source: the full Python source.
      name: a short label (the file stem for files, e.g. 'triplet_gmpnn').
      path: where it was read from, if anywhere.
    """

    source: str
    name: str = "candidate"
    path: str | None = None

    @property
    def sha256(self) -> str:
        return hashlib.sha256(regions.normalize(self.source).encode()).hexdigest()


def read_program(path: str | pathlib.Path) -> Program:
    """Reads a program file and checks its region tags; raises ProgramError naming the problem."""
    p = pathlib.Path(path)
    if not p.exists():
        raise ProgramError(f"program file not found: {p}")
    if not p.is_file():
        raise ProgramError(f"program path is not a file: {p}")
    try:
        source = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ProgramError(f"cannot read program {p}: {e}") from e
    program = Program(source=source, name=p.stem, path=str(p))
    check_template(program)
    return program


def check_template(program: Program) -> None:
    """Raises ProgramError unless the OPERATOR/ACTION tags are present once each, in order."""
    try:
        regions.parse_regions(program.source)
    except regions.TemplateError as e:
        where = program.path or program.name
        raise ProgramError(f"{where}: bad region tags: {e.reason}") from e


def load_module(program: Program, factory: str = FACTORY_NAME) -> types.ModuleType:
    """Executes the program in a fresh module namespace and returns the module.

    `factory` is the frozen factory the program must define (a task family's, e.g.
    'make_policy'; the CLRS processors' by default).

    Each call gets a new, uniquely named module, so two candidates (or two versions of one)
    never share classes or state. The module is registered in `sys.modules` because Flax's
    dataclass transform resolves annotations through it.
    """
    digest = program.sha256[:12]
    mod_name = f"spark_candidate_{digest}_{next(_counter)}"
    module = types.ModuleType(mod_name)
    module.__file__ = program.path or f"<{program.name}>"
    sys.modules[mod_name] = module
    try:
        code = compile(program.source, module.__file__, "exec")
        exec(code, module.__dict__)  # noqa: S102 - candidate code, see module docstring
    except Exception as e:
        sys.modules.pop(mod_name, None)
        raise ProgramError(f"{program.name}: failed to load: {type(e).__name__}: {e}") from e
    if not callable(getattr(module, factory, None)):
        sys.modules.pop(mod_name, None)
        raise ProgramError(f"{program.name}: no callable '{factory}' factory")
    return module


def build_flax_processor(
    module: types.ModuleType, out_size: int, use_ln: bool, nb_triplet_fts: int
) -> Any:
    """Calls the program's frozen factory and checks it returned a Flax linen module."""
    import flax.linen as nn

    proc = getattr(module, FACTORY_NAME)(out_size, use_ln=use_ln, nb_triplet_fts=nb_triplet_fts)
    if not isinstance(proc, nn.Module):
        raise ProgramError(
            f"{FACTORY_NAME} returned {type(proc).__name__}, not a flax.linen.Module"
        )
    return proc


def masks_non_edges(module: types.ModuleType) -> bool:
    """Whether the program claims its node output ignores features on non-edges."""
    return bool(getattr(module, "MASKS_NON_EDGES", False))


def decoder_inf_bias(module: types.ModuleType) -> tuple[bool, bool]:
    """The program's (INF_BIAS, INF_BIAS_EDGE) declarations, both False unless set.

    They are CLRS's `Processor.inf_bias` / `inf_bias_edge` (True for the `*_mask` kinds): the
    decoders then push pointer and edge-mask logits on adjacency-defined non-edges below
    every edge's logit.
    """
    return bool(getattr(module, "INF_BIAS", False)), bool(getattr(module, "INF_BIAS_EDGE", False))
