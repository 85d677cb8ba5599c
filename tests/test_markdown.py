"""The reporting kernel (`spark_jax.util.markdown`): tables whose rows must match their header,
sections and documents."""

from __future__ import annotations

import pytest

from spark_jax.util import markdown


def test_a_table_has_header_separator_and_rows_in_order():
    lines = markdown.table(["task", "OOD (%)"], [["dfs", "41.20"], ["bfs", 99.5]], align="lr")
    assert lines == ["| task | OOD (%) |", "|---|---:|", "| dfs | 41.20 |", "| bfs | 99.5 |"]
    assert markdown.table(["a"], []) == ["| a |", "|---|"]


def test_a_row_with_the_wrong_number_of_cells_is_a_one_line_error_naming_the_table():
    with pytest.raises(
        ValueError, match=r"table 'task': a row has 3 cells, the header 2: dfs, 1, 2"
    ):
        markdown.table(["task", "OOD"], [["dfs", "1"], ["dfs", 1, 2]])
    with pytest.raises(ValueError, match="align 'lx'"):
        markdown.table(["task", "OOD"], [], align="lx")
    with pytest.raises(ValueError, match="align 'l'"):
        markdown.table(["task", "OOD"], [], align="l")


def test_a_cell_escapes_pipes_folds_lines_and_cuts_at_its_limit():
    assert markdown.cell("a|b\nc") == "a\\|b c"
    assert markdown.cell("abcdef", limit=4) == "abc…"
    assert markdown.cell(3.5) == "3.5"


def test_a_document_joins_its_sections():
    head = ["# Report", ""]
    body = markdown.section("Results", markdown.table(["x"], [[1]]))
    assert body == ["## Results", "", "| x |", "|---|", "| 1 |", ""]
    assert markdown.section("Notes", ["- one"], level=3)[0] == "### Notes"
    text = markdown.document([head, body], end="\n")
    assert text == "# Report\n\n## Results\n\n| x |\n|---|\n| 1 |\n\n"
