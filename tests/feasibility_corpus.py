"""Hand-written bad (and good) candidates derived from a seed processor by string edits.

`build_cases(seed_source)` returns `Case`s, each with the stage and failure type the
feasibility pipeline must report (stage None: the candidate is feasible).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from spark_jax.program import regions

RETURN = "return ret,"  # The node output of every seed is returned as `return ret, ...`.
UPDATE = "ret = jax.nn.relu(self.o1(z) + self.o2(msgs))"
MASKED_MAX = "maxarg = jnp.where(jnp.expand_dims(adj_mat, -1), msgs, -BIG_NUMBER)"
FACTORY_DEF = "nb_triplet_fts: int = 8) -> nn.Module:"


@dataclasses.dataclass(frozen=True)
class Case:
    """One candidate and its expected verdict.

    Attributes:
      name: short label.
      source: the candidate program.
      parent: parent program (None: checked standalone).
      factor: the scoped factor (None: no locality stage).
      stage, failure_type: the expected failure (None, None: feasible).
      overrides: CheckOptions overrides for this case (e.g. a short timeout).
      entanglement: expected entanglement kind when a parent is given.
    """

    name: str
    source: str
    parent: str | None
    factor: str | None
    stage: str | None
    failure_type: str | None
    overrides: tuple[tuple[str, Any], ...] = ()
    entanglement: str | None = None


def sub(source: str, old: str, new: str) -> str:
    """Replaces the one occurrence of `old` (asserting there is exactly one)."""
    assert source.count(old) == 1, (old, source.count(old))
    return source.replace(old, new)


def prepend(source: str, factor: str, lines: list[str]) -> str:
    """Inserts `lines` at the top of the region body of `factor`, at the tag's indent."""
    span = regions.parse_regions(source).span(factor)
    block = "".join(f"{span.indent}{line}\n" for line in lines)
    return regions.replace_region(source, factor, block + span.body)


def append(source: str, factor: str, lines: list[str]) -> str:
    """Appends `lines` to the region body of `factor`, at the tag's indent."""
    span = regions.parse_regions(source).span(factor)
    block = "".join(f"{span.indent}{line}\n" for line in lines)
    return regions.replace_region(source, factor, span.body + block)


def _tag_line(source: str, tag: str) -> str:
    return next(line for line in source.splitlines(keepends=True) if line.strip() == tag)


def _swap_lines(source: str, a: str, b: str) -> str:
    line_a, line_b = _tag_line(source, a), _tag_line(source, b)
    return source.replace(line_a, "\0").replace(line_b, line_a).replace("\0", line_b)


def action_edit(seed: str) -> str:
    """A correct ACTION-only edit: GELU instead of ReLU in the node update."""
    return sub(seed, UPDATE, UPDATE.replace("jax.nn.relu", "jax.nn.gelu"))


def operator_edit(seed: str) -> str:
    """A correct OPERATOR-only edit: a default-initialized Dense for `o2`."""
    return sub(seed, "self.o2 = linear(h)", "self.o2 = nn.Dense(h)")


def build_cases(seed: str, masks_non_edges: bool) -> list[Case]:
    """The corpus for one seed (`masks_non_edges`: the seed's MASKS_NON_EDGES claim)."""
    leak_stage, leak_type = ("semantic", "mask_leak") if masks_non_edges else (None, None)
    leak_kind = "action"
    cases = [
        # Feasible: the seed and correct scoped edits.
        Case("seed", seed, None, None, None, None),
        Case(
            "operator_edit",
            operator_edit(seed),
            seed,
            "OPERATOR",
            None,
            None,
            entanglement="operator",
        ),
        Case("action_edit", action_edit(seed), seed, "ACTION", None, None, entanglement="action"),
        # template
        Case(
            "missing_tag",
            seed.replace(_tag_line(seed, "# SPARK:END ACTION"), ""),
            seed,
            "ACTION",
            "template",
            "template",
            entanglement="scaffold",  # Tag lines are scaffolding.
        ),
        Case(
            "duplicated_tag",
            seed.replace(
                _tag_line(seed, "# SPARK:BEGIN OPERATOR"),
                _tag_line(seed, "# SPARK:BEGIN OPERATOR") * 2,
            ),
            None,
            None,
            "template",
            "template",
        ),
        Case(
            "reordered_tags",
            _swap_lines(seed, "# SPARK:BEGIN ACTION", "# SPARK:END ACTION"),
            None,
            None,
            "template",
            "template",
        ),
        # locality
        Case(
            "edit_outside_region",
            action_edit(seed),
            seed,
            "OPERATOR",
            "locality",
            "locality",
            entanglement="action",
        ),
        Case(
            "scaffold_edit",
            sub(action_edit(seed), "BIG_NUMBER = 1e6", "BIG_NUMBER = 1e5"),
            seed,
            "ACTION",
            "locality",
            "scaffold_edit",
            entanglement="scaffold",
        ),
        Case("no_change", seed, seed, "ACTION", "locality", "no_change", entanglement="none"),
        # syntax
        Case(
            "syntax_error",
            prepend(seed, "ACTION", ["ret = ("]),
            seed,
            "ACTION",
            "syntax",
            "syntax_error",
            entanglement="action",
        ),
        Case(
            "import_os",
            prepend(seed, "ACTION", ["import os", "os.system('echo pwned')"]),
            seed,
            "ACTION",
            "syntax",
            "unsafe_code",
            entanglement="action",
        ),
        Case(
            "open_call",
            prepend(seed, "ACTION", ["open('pwned.txt', 'w').write('x')"]),
            seed,
            "ACTION",
            "syntax",
            "unsafe_code",
            entanglement="action",
        ),
        Case("import_error", seed + "\n_BROKEN = 1 // 0\n", None, None, "syntax", "import_error"),
        # interface
        Case(
            "renamed_class",
            re.sub(r"\bProcessor\b", "GraphProcessor", seed),
            seed,
            None,
            "interface",
            "missing_name",
            entanglement="scaffold",
        ),
        Case(
            "call_signature",
            sub(
                seed,
                "def __call__(self, node_fts, edge_fts, graph_fts, adj_mat, hidden):",
                "def __call__(self, node_fts, edge_fts, graph_fts, adj_mat, hidden, step=0):",
            ),
            None,
            None,
            "interface",
            "signature_mismatch",
        ),
        Case(
            "factory_signature",
            sub(seed, FACTORY_DEF, FACTORY_DEF.replace("8", "4")),
            seed,
            None,
            "interface",
            "signature_mismatch",
            entanglement="scaffold",
        ),
        # The same factory edit meets the seed contract when there is no parent to match.
        Case(
            "factory_default_no_parent",
            sub(seed, FACTORY_DEF, FACTORY_DEF.replace("8", "4")),
            None,
            None,
            None,
            None,
        ),
        # semantic
        Case(
            "wrong_width",
            sub(seed, RETURN, "return ret[..., :-1],"),
            seed,
            "ACTION",
            "semantic",
            "shape_mismatch",
            entanglement="action",
        ),
        Case(
            "swapped_axes",
            sub(seed, RETURN, "return jnp.swapaxes(ret, 0, 1),"),
            seed,
            "ACTION",
            "semantic",
            "shape_mismatch",
            entanglement="action",
        ),
        Case(
            "int_output",
            sub(seed, RETURN, "return ret.astype(jnp.int32),"),
            seed,
            "ACTION",
            "semantic",
            "dtype_mismatch",
            entanglement="action",
        ),
        Case(
            "batchnorm",
            sub(
                append(seed, "OPERATOR", ["self.bn = nn.BatchNorm(use_running_average=False)"]),
                RETURN,
                "return self.bn(ret),",
            ),
            seed,
            None,
            "semantic",
            "mutable_collections",
            entanglement="entangled",
        ),
        Case(
            "nan_output",
            sub(seed, RETURN, "return ret * jnp.nan,"),
            seed,
            "ACTION",
            "semantic",
            "non_finite",
            entanglement="action",
        ),
        # Node output reads every edge feature, non-edges included.
        Case(
            "edge_sum_leak",
            sub(seed, RETURN, "return ret + jnp.sum(edge_fts, axis=1),"),
            seed,
            "ACTION",
            leak_stage,
            leak_type,
            entanglement=leak_kind,
        ),
        # The max aggregation no longer masks non-edges.
        Case(
            "unmasked_max",
            sub(seed, MASKED_MAX, "maxarg = msgs"),
            seed,
            "ACTION",
            leak_stage,
            leak_type,
            entanglement=leak_kind,
        ),
        Case(
            "monkeypatch",
            prepend(seed, "ACTION", ["jnp.tanh = jnp.sin"]),
            seed,
            "ACTION",
            "semantic",
            "unsafe_code",
            entanglement="action",
        ),
        Case(
            "print_spam",
            prepend(seed, "ACTION", ["for _ in range(20000):", "    print('spam' * 10)"]),
            seed,
            "ACTION",
            "semantic",
            "output_too_large",
            entanglement="action",
        ),
        # runtime failures (the worker is recycled after each)
        Case(
            "runtime_error",
            prepend(seed, "ACTION", ["raise ValueError('candidate bug')"]),
            seed,
            "ACTION",
            "semantic",
            "runtime_error",
            entanglement="action",
        ),
        Case(
            "infinite_loop",
            prepend(seed, "ACTION", ["while True:", "    pass"]),
            seed,
            "ACTION",
            "semantic",
            "timeout",
            overrides=(("timeout_s", 3.0),),
            entanglement="action",
        ),
        Case(
            "memory_bomb",
            prepend(seed, "ACTION", ["_bomb = [0] * (10 ** 10)"]),
            seed,
            "ACTION",
            "semantic",
            "memory",
            entanglement="action",
        ),
    ]
    return cases


def jax_memory_bomb(seed: str) -> str:
    """An ACTION that allocates a 14 GB device array (eagerly, in the concrete run)."""
    return prepend(seed, "ACTION", ["_bomb = jnp.ones((60000, 60000))"])
