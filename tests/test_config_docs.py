"""docs/configuration.md is generated from the config schema and cannot drift from it."""

from __future__ import annotations

import dataclasses
import pathlib
import subprocess
import sys

import pytest

from spark_jax.config import docs, search, sections
from spark_jax.config.llm import CommandLLMConfig

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_the_committed_file_is_the_schema_rendered():
    committed = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert committed == docs.render_configuration(), "run: python scripts/config_docs.py"


def test_the_check_command_passes_on_the_committed_file():
    done = subprocess.run(
        [sys.executable, "scripts/config_docs.py", "--check"], cwd=ROOT, capture_output=True
    )
    assert done.returncode == 0, done.stdout


def test_every_yaml_key_of_every_section_is_in_the_document():
    text = docs.render_configuration()
    records = [search.SearchConfig, sections.EditorConfig, sections.OperatorConfig]
    records += [sections.ExecutorConfig, sections.FitnessConfig, CommandLLMConfig]
    for cls in records:
        for f in dataclasses.fields(cls):
            if f.name != "seed" or cls is search.SearchConfig:
                assert f"| `{f.name}` |" in text, f"{cls.__name__}.{f.name}"
    for mode in sections.MODES:
        assert f"`{mode}`" in text
    # Derived seeds are not YAML keys (the loader refuses them): not documented as keys.
    assert "## `archive`" in text and "`seed` | `int` | `0`" not in text.split("## `archive`")[1]


def test_a_new_key_changes_the_document_and_an_undocumented_one_is_refused(monkeypatch):
    @dataclasses.dataclass(frozen=True)
    class Cascade(sections.CascadeConfig):
        """Cascade.

        Attributes:
          threshold: t.
          fraction: f.
          stages: how many stages.
        """

        stages: int = 2

    before = docs.render_configuration()
    monkeypatch.setattr(
        docs,
        "_SECTIONS",
        tuple(
            (name, Cascade if name == "cascade" else cls, skip, summary)
            for name, cls, skip, summary in docs._SECTIONS
        ),
    )
    after = docs.render_configuration()
    assert after != before and "| `stages` | `int` | `2` | how many stages. |" in after

    Cascade.__doc__ = "Cascade.\n\n    Attributes:\n      threshold: t.\n      fraction: f.\n"
    with pytest.raises(ValueError, match=r"Cascade.stages: no `Attributes:` entry"):
        docs.render_configuration()


def test_grouped_and_continued_entries_are_parsed():
    parsed = docs.attribute_docs(sections.ExecutorConfig)
    assert parsed["address"] == parsed["num_cpus_per_job"]
    assert parsed["in_flight"].endswith("(1 = the paper's strictly sequential loop).")


def test_write_then_check(tmp_path):
    path = tmp_path / "docs" / "configuration.md"
    assert not docs.is_current(path)
    docs.write_configuration(path)
    assert docs.is_current(path) and path.read_text() == docs.render_configuration()
    path.write_text(path.read_text() + "edited\n")
    assert not docs.is_current(path)
