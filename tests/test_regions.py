"""Tests for spark_jax.regions: template parsing, normalization, region diffs."""

from __future__ import annotations

import difflib
import textwrap

import pytest

from spark_jax.program import locality, regions
from spark_jax.program.regions import TemplateError

SEED = textwrap.dedent("""\
    import flax.linen as nn
    import jax.numpy as jnp

    MASKS_NON_EDGES = True


    class Processor(nn.Module):
        out_size: int
        use_ln: bool = False

        def setup(self):
            # SPARK:BEGIN OPERATOR
            self.m = nn.Dense(self.out_size)
            # SPARK:END OPERATOR

        def __call__(self, node_fts, edge_fts, graph_fts, adj_mat, hidden):
            # SPARK:BEGIN ACTION
            z = jnp.concatenate([node_fts, hidden], axis=-1)
            return self.m(z), None
            # SPARK:END ACTION


    def make_processor(out_size, **kwargs):
        return Processor(out_size=out_size, **kwargs)
    """)
# 1-based line numbers in SEED.
OP_BEGIN, OP_BODY, OP_END = 12, 13, 14
ACT_BEGIN, ACT_Z, ACT_RET, ACT_END = 17, 18, 19, 20


def edit(source: str, old: str, new: str) -> str:
    """Replaces exactly one occurrence of `old`."""
    assert source.count(old) == 1, old
    return source.replace(old, new)


def insert_after(source: str, lineno: int, text: str) -> str:
    """Inserts `text` (one line) after 1-based line `lineno`."""
    lines = source.split("\n")
    lines.insert(lineno, text)
    return "\n".join(lines)


# Template parsing.


def test_parse_seed_spans_bodies_and_region_of():
    program = regions.parse_regions(SEED)
    op, act = program.span("OPERATOR"), program.span("ACTION")
    assert (op.begin, op.end) == (OP_BEGIN - 1, OP_END - 1)
    assert (act.begin, act.end) == (ACT_BEGIN - 1, ACT_END - 1)
    assert program.body("OPERATOR") == "        self.m = nn.Dense(self.out_size)\n"
    assert program.body("ACTION").count("\n") == 2
    assert op.indent == " " * 8
    assert program.region_of(OP_BODY - 1) == "OPERATOR"
    assert program.region_of(ACT_Z - 1) == "ACTION"
    for tag_line in (OP_BEGIN, OP_END, ACT_BEGIN, ACT_END, 1):
        assert program.region_of(tag_line - 1) == "SCAFFOLD"
    assert "nn.Dense" not in program.scaffolding
    assert "jnp.concatenate" not in program.scaffolding
    assert "# <SPARK OPERATOR body>" in program.scaffolding
    assert "def make_processor" in program.scaffolding
    assert program.source == regions.normalize(SEED)


def test_tags_without_indentation_and_empty_bodies():
    source = (
        "# SPARK:BEGIN OPERATOR\n# SPARK:END OPERATOR\n"
        "\t# SPARK:BEGIN ACTION   \n# SPARK:END ACTION\n"
    )
    program = regions.parse_regions(source)
    assert program.body("OPERATOR") == program.body("ACTION") == ""


@pytest.mark.parametrize(
    "old, new, match",
    [
        ("        # SPARK:END OPERATOR\n", "", "missing tag '# SPARK:END OPERATOR'"),
        ("        # SPARK:BEGIN ACTION\n", "", "missing tag '# SPARK:BEGIN ACTION'"),
        (
            "        # SPARK:END ACTION\n",
            "        # SPARK:END ACTION\n        # SPARK:END ACTION\n",
            "duplicated tag '# SPARK:END ACTION' at lines 20,21",
        ),
        (
            "        # SPARK:BEGIN OPERATOR\n",
            "        # SPARK:BEGIN OPERATOR  # setup\n",
            "text on tag line 12",
        ),
        (
            "        # SPARK:END ACTION\n",
            "        x = 1  # SPARK:END ACTION\n",
            "text on tag line 20",
        ),
        ("        # SPARK:BEGIN ACTION\n", "        # spark:begin action\n", "text on tag line"),
        ("        # SPARK:BEGIN ACTION\n", "        # SPARK:BEGIN FORWARD\n", "text on tag line"),
        (
            "        # SPARK:BEGIN OPERATOR\n        self.m = nn.Dense(self.out_size)\n"
            "        # SPARK:END OPERATOR\n",
            "        # SPARK:END OPERATOR\n        self.m = nn.Dense(self.out_size)\n"
            "        # SPARK:BEGIN OPERATOR\n",
            "END before BEGIN for OPERATOR",
        ),
    ],
)
def test_template_errors(old, new, match):
    with pytest.raises(TemplateError, match=match) as info:
        regions.parse_regions(edit(SEED, old, new))
    assert info.value.reason == str(info.value)


def test_action_before_operator():
    source = (
        "# SPARK:BEGIN ACTION\nx\n# SPARK:END ACTION\n"
        "# SPARK:BEGIN OPERATOR\ny\n# SPARK:END OPERATOR\n"
    )
    with pytest.raises(TemplateError, match="ACTION before OPERATOR"):
        regions.parse_regions(source)


@pytest.mark.parametrize(
    "source",
    [
        "# SPARK:BEGIN OPERATOR\n# SPARK:BEGIN ACTION\n# SPARK:END ACTION\n# SPARK:END OPERATOR\n",
        "# SPARK:BEGIN OPERATOR\n# SPARK:BEGIN ACTION\n# SPARK:END OPERATOR\n# SPARK:END ACTION\n",
        "# SPARK:BEGIN ACTION\n# SPARK:BEGIN OPERATOR\n# SPARK:END ACTION\n# SPARK:END OPERATOR\n",
    ],
)
def test_nested_or_overlapping(source):
    with pytest.raises(TemplateError, match="nested/overlapping"):
        regions.parse_regions(source)


# Normalization.


def test_normalize():
    assert regions.normalize("a  \r\nb\t\rc") == "a\nb\nc\n"
    assert regions.normalize("a\n\n") == "a\n\n"
    assert regions.normalize("") == ""
    assert regions.normalize("  x = 1\n") == "  x = 1\n"  # Leading whitespace kept.


def test_crlf_and_trailing_whitespace_is_no_change():
    child = SEED.replace("\n", "  \r\n").rstrip("\r\n")
    diff = locality.diff_regions(SEED, child)
    assert diff.empty and diff.unified == ""
    assert locality.classify_entanglement(SEED, child).kind == "none"
    result = locality.check_locality(SEED, child, "ACTION")
    assert not result.ok and result.reason == "no change"


# Region diffs and locality.


def test_operator_only_edit():
    child = edit(SEED, "nn.Dense(self.out_size)", "nn.Dense(2 * self.out_size)")
    diff = locality.diff_regions(SEED, child)
    assert diff.changed == {"OPERATOR"}
    assert diff.parent_lines["OPERATOR"] == (OP_BODY,)
    assert diff.child_lines["OPERATOR"] == (OP_BODY,)
    assert "-        self.m = nn.Dense(self.out_size)" in diff.unified
    assert "+        self.m = nn.Dense(2 * self.out_size)" in diff.unified
    assert diff.unified.startswith("--- parent\n+++ child\n@@ ")
    assert locality.check_locality(SEED, child, "OPERATOR").ok
    bad = locality.check_locality(SEED, child, "ACTION")
    assert not bad.ok
    assert bad.reason == f"ACTION edit changed 1 line(s) in OPERATOR (child line {OP_BODY})"


def test_action_only_edit_multiline():
    child = edit(
        SEED,
        "        return self.m(z), None\n",
        "        z = self.m(z)\n            z = jax.nn.relu(z)\n        return z, None\n",
    )
    diff = locality.diff_regions(SEED, child)
    assert diff.changed == {"ACTION"}
    assert locality.check_locality(SEED, child, "ACTION").ok
    bad = locality.check_locality(SEED, child, "OPERATOR")
    assert not bad.ok and "in ACTION" in bad.reason
    assert f"child lines {ACT_RET}-{ACT_RET + 2}" in bad.reason


def test_both_regions_edited():
    child = edit(SEED, "nn.Dense(self.out_size)", "nn.Dense(self.out_size, use_bias=False)")
    child = edit(child, "axis=-1", "axis=2")
    assert locality.diff_regions(SEED, child).changed == {"OPERATOR", "ACTION"}
    for factor, other in (("OPERATOR", "ACTION"), ("ACTION", "OPERATOR")):
        result = locality.check_locality(SEED, child, factor)
        assert not result.ok and f"in {other}" in result.reason


def test_unified_matches_difflib_on_a_simple_edit():
    child = edit(SEED, "axis=-1", "axis=1")
    expected = "".join(
        difflib.unified_diff(SEED.splitlines(True), child.splitlines(True), "parent", "child")
    )
    assert locality.diff_regions(SEED, child).unified == expected


def test_deletion_inside_region_reports_parent_lines():
    child = edit(SEED, "        z = jnp.concatenate([node_fts, hidden], axis=-1)\n", "")
    diff = locality.diff_regions(SEED, child)
    assert diff.changed == {"ACTION"}
    assert diff.parent_lines["ACTION"] == (ACT_Z,) and diff.child_lines["ACTION"] == ()
    result = locality.check_locality(SEED, child, "OPERATOR")
    assert result.reason == f"OPERATOR edit changed 1 line(s) in ACTION (parent line {ACT_Z})"


@pytest.mark.parametrize(
    "old, new",
    [
        ("import jax.numpy as jnp\n", "import jax.numpy as jnp\nimport jax\n"),  # import added
        ("class Processor(", "class Proc("),  # class renamed
        (
            "    return Processor(out_size=out_size, **kwargs)",
            "    return Processor(out_size=2 * out_size, **kwargs)",
        ),  # factory changed
        ("MASKS_NON_EDGES = True", "MASKS_NON_EDGES = False"),
    ],
)
def test_scaffolding_edits(old, new):
    child = edit(SEED, old, new)
    diff = locality.diff_regions(SEED, child)
    assert diff.changed == {"SCAFFOLD"}
    for factor in regions.FACTORS:
        result = locality.check_locality(SEED, child, factor)
        assert not result.ok and "scaffolding" in result.reason
    assert locality.classify_entanglement(SEED, child).kind == "scaffold"


def test_scaffolding_reason_names_line_and_text():
    child = insert_after(SEED, 2, "import os")
    result = locality.check_locality(SEED, child, "ACTION")
    assert result.reason == "ACTION edit changed scaffolding at child line 3 ('import os')"


def test_insertion_right_after_begin_is_inside():
    child = insert_after(SEED, OP_BEGIN, "        self.n = nn.Dense(self.out_size)")
    diff = locality.diff_regions(SEED, child)
    assert diff.changed == {"OPERATOR"}
    assert diff.child_lines["OPERATOR"] == (OP_BEGIN + 1,)
    assert locality.check_locality(SEED, child, "OPERATOR").ok


def test_insertion_right_before_end_is_inside():
    child = insert_after(SEED, ACT_RET, "        # unreachable")
    assert locality.diff_regions(SEED, child).changed == {"ACTION"}


def test_insertion_right_before_begin_is_scaffolding():
    child = insert_after(SEED, OP_BEGIN - 1, "        self.n = nn.Dense(self.out_size)")
    diff = locality.diff_regions(SEED, child)
    assert diff.changed == {"SCAFFOLD"}
    assert diff.child_lines["SCAFFOLD"] == (OP_BEGIN,)
    assert not locality.check_locality(SEED, child, "OPERATOR").ok


def test_insertion_right_after_end_is_scaffolding():
    child = insert_after(SEED, ACT_END, "        pass")
    assert locality.diff_regions(SEED, child).changed == {"SCAFFOLD"}


def test_insert_equal_line_next_to_region_border_stays_in_region():
    # The inserted blank line equals the scaffold line just after END: anchoring on the
    # tag lines keeps it in OPERATOR.
    child = insert_after(SEED, OP_BODY, "")
    assert locality.diff_regions(SEED, child).changed == {"OPERATOR"}


def test_tag_line_moved_is_scaffolding():
    lines = SEED.split("\n")
    lines[OP_BODY - 1], lines[OP_END - 1] = lines[OP_END - 1], lines[OP_BODY - 1]
    child = "\n".join(lines)  # END OPERATOR moved above the body.
    diff = locality.diff_regions(SEED, child)
    assert "SCAFFOLD" in diff.changed
    assert not locality.check_locality(SEED, child, "OPERATOR").ok
    assert locality.classify_entanglement(SEED, child).kind == "scaffold"


def test_tag_line_reindented_is_scaffolding():
    child = edit(SEED, "        # SPARK:BEGIN ACTION", "    # SPARK:BEGIN ACTION")
    assert locality.diff_regions(SEED, child).changed == {"SCAFFOLD"}


def test_body_moved_across_regions_is_not_scaffolding():
    # Moving the OPERATOR body into ACTION must not be misaligned into a scaffold change.
    body = "        self.m = nn.Dense(self.out_size)\n"
    child = edit(SEED, body, "")
    child = edit(child, "        # SPARK:END ACTION", body + "        # SPARK:END ACTION")
    assert locality.diff_regions(SEED, child).changed == {"OPERATOR", "ACTION"}


def test_child_template_error_propagates():
    child = edit(SEED, "        # SPARK:END ACTION\n", "")
    with pytest.raises(TemplateError, match="missing tag"):
        locality.check_locality(SEED, child, "ACTION")


def test_unknown_factor():
    with pytest.raises(ValueError, match="Unexpected factor"):
        locality.check_locality(SEED, SEED, "SCAFFOLD")


# Entanglement, on a table of (parent, child) -> kind.

_OP = edit(SEED, "nn.Dense(self.out_size)", "nn.Dense(self.out_size * 2)")
_ACT = edit(SEED, "axis=-1", "axis=1")
_BOTH = edit(_OP, "axis=-1", "axis=1")
_SCAF = edit(SEED, "use_ln: bool = False", "use_ln: bool = True")
_SCAF_AND_REGIONS = edit(_BOTH, "use_ln: bool = False", "use_ln: bool = True")


@pytest.mark.parametrize(
    "parent, child, kind, entangled",
    [
        (SEED, SEED, "none", False),
        (SEED, SEED.replace("\n", "\r\n"), "none", False),
        (SEED, _OP, "operator", False),
        (SEED, _ACT, "action", False),
        (_ACT, _BOTH, "operator", False),
        (SEED, _BOTH, "entangled", True),
        (SEED, _SCAF, "scaffold", True),
        (SEED, _SCAF_AND_REGIONS, "scaffold", True),
        (SEED, insert_after(SEED, OP_BEGIN, "        pass"), "operator", False),
        (SEED, insert_after(SEED, OP_BEGIN - 1, "        pass"), "scaffold", True),
    ],
)
def test_classify_entanglement(parent, child, kind, entangled):
    result = locality.classify_entanglement(parent, child)
    assert (result.kind, result.entangled) == (kind, entangled)


# replace_region.


@pytest.mark.parametrize("factor", regions.FACTORS)
def test_replace_region_round_trip(factor):
    program = regions.parse_regions(SEED)
    assert regions.replace_region(SEED, factor, program.body(factor)) == program.source


def test_replace_region_edits_only_that_factor():
    new_body = "        self.m = nn.Dense(self.out_size)\r\n        self.g = nn.Dense(1)  \n"
    child = regions.replace_region(SEED, "OPERATOR", new_body)
    assert regions.parse_regions(child).body("OPERATOR") == regions.normalize(new_body)
    assert locality.check_locality(SEED, child, "OPERATOR").ok
    emptied = regions.replace_region(SEED, "ACTION", "")
    assert regions.parse_regions(emptied).body("ACTION") == ""


def test_replace_region_refuses_tag_in_body():
    with pytest.raises(TemplateError, match="tag line"):
        regions.replace_region(SEED, "ACTION", "# SPARK:END ACTION\nx = 1\n")
