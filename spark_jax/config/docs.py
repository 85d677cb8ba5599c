"""`docs/configuration.md`, rendered from the config schema so that it never drifts.

Every key of a search config is a field of one of the frozen records in `config.search`,
`config.sections`, `config.evaluation`, `config.llm`, `config.protocol` and
`config.proposal_only`; its type and default come from the dataclass, its meaning from the
record's docstring (`Attributes:` entries, one per field or per comma-separated group). A field with no entry is an
error, so a new key cannot ship undocumented. `scripts/config_docs.py` writes the file
(`write_configuration`) or checks it (`is_current`); `tests/test_config_docs.py` fails when the
file and this rendering differ.
"""

from __future__ import annotations

import dataclasses
import inspect
import pathlib
import re
from typing import Any, Iterable

from spark_jax.config import protocol as protocol_lib
from spark_jax.config import search, sections
from spark_jax.config.llm import LLM_CONFIGS
from spark_jax.config.proposal_only import ProposalOnlyConfig
from spark_jax.util import markdown

__all__ = ["attribute_docs", "is_current", "render_configuration", "write_configuration"]

# Sections whose `seed` field is derived from the top-level seed: not a YAML key.
_DERIVED = {"seed"}
# (YAML path, record, fields that are not YAML keys, one line on the section).
_SECTIONS = (
    ("editor", sections.EditorConfig, _DERIVED, "Who proposes the edits."),
    ("operator", sections.OperatorConfig, _DERIVED, "The method and its settings."),
    ("archive", sections.ArchiveConfig, _DERIVED, "The island archive (SPARK, OpenEvolve)."),
    ("executor", sections.ExecutorConfig, set(), "Where candidates train."),
    ("feasibility", sections.FeasibilityConfig, set(), "The feasibility check's limits."),
    ("cascade", sections.CascadeConfig, set(), "Two-stage (cascade) evaluation, CLRS only."),
    ("fitness", sections.FitnessConfig, set(), "What the search selects on."),
    ("proposal_only", ProposalOnlyConfig, set(), "Proposal-only mode (null: off)."),
)
_RECORD = re.compile(r"\b[A-Za-z]+Config\b")
_ENTRY = re.compile(r"^  ([a-z_][a-z0-9_]*(?:, [a-z_][a-z0-9_]*)*): (.*)$")


def attribute_docs(cls: type) -> dict[str, str]:
    """Field name -> its meaning, from `cls`'s docstring `Attributes:` block."""
    lines = inspect.cleandoc(cls.__doc__ or "").splitlines()
    if "Attributes:" not in lines:
        return {}
    docs: dict[str, str] = {}
    names: list[str] = []
    for line in lines[lines.index("Attributes:") + 1 :]:
        match = _ENTRY.match(line)
        if match:
            names = match.group(1).split(", ")
            for name in names:
                docs[name] = match.group(2).strip()
        elif line.startswith("    ") and names:
            for name in names:
                docs[name] += " " + line.strip()
        elif line.strip():
            names = []
    return docs


def _yaml(value: Any) -> str:
    """A default as it is written in YAML."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_yaml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_yaml(v)}" for k, v in value.items()) + "}"
    return str(value)


def _default(f: dataclasses.Field) -> str:
    if f.default is not dataclasses.MISSING:
        value = f.default
    elif f.default_factory is not dataclasses.MISSING:
        value = f.default_factory()
    else:
        return "required"
    return "required" if value == "" else f"`{_yaml(value)}`"


def _type(f: dataclasses.Field) -> str:
    """The field's type in YAML's words: a nested record is a mapping, a tuple a list."""
    text = _RECORD.sub("mapping", str(f.type)).replace("mapping | mapping", "mapping")
    return re.sub(r"tuple\[(\w+), \.\.\.\]", r"list[\1]", text).replace("tuple[", "list[")


def _rows(cls: type, skip: Iterable[str] = (), defaults=None, meanings=None) -> list[str]:
    """Markdown table rows of `cls`'s YAML keys; raises if one has no documentation."""
    docs = {**attribute_docs(cls), **(meanings or {})}
    defaults = defaults or {}
    fields = [f for f in dataclasses.fields(cls) if f.name not in skip]
    rows = [
        [
            f"`{f.name}`",
            f"`{markdown.cell(_type(f))}`",
            defaults.get(f.name) or _default(f),
            meaning,
        ]
        for f, meaning in zip(fields, _meanings(cls, fields, docs))
    ]
    return markdown.table(["key", "type", "default", "meaning"], rows)


def _meanings(cls: type, fields: list[dataclasses.Field], docs: dict[str, str]) -> list[str]:
    """Each field's meaning as a table cell; a group's shared entry is written once, in its
    first field's row, the others point to it. Raises if a field has no entry."""
    cells: list[str] = []
    first: dict[str, str] = {}
    for f in fields:
        if f.name not in docs:
            raise ValueError(f"{cls.__name__}.{f.name}: no `Attributes:` entry in its docstring")
        text = docs[f.name]
        cells.append(f"see `{first[text]}`" if text in first else markdown.cell(text))
        first.setdefault(text, f.name)
    return cells


def _top_level() -> list[str]:
    defaults = {name: f"see [`{name}`](#{name})" for name, *_ in _SECTIONS}
    defaults["proposal_only"] = "`null` (off)"
    defaults["protocol"] = "the preset's (see [`protocol`](#protocol))"
    defaults["seed_program"] = "`triplet_gmpnn` (CLRS), `mlp` (other families)"
    meanings = {name: summary for name, _, _, summary in _SECTIONS if name != "proposal_only"}
    return [
        "## Top-level keys",
        "",
        *_rows(search.SearchConfig, defaults=defaults, meanings=meanings),
        "",
        f"Known families: {_names(search.family_names())}. Presets of the CLRS family: "
        f"{_names(protocol_lib.PRESETS)}; another family names its own (tiny, smoke).",
    ]


def _names(values: Iterable[str]) -> str:
    return ", ".join(f"`{v}`" for v in values)


def _section_blocks() -> list[str]:
    known = {
        "editor": f"`kind`: {_names(sections.EDITOR_KINDS)}; `llm.kind`: {_names(LLM_CONFIGS)}.",
        "operator": f"`mode`: {_names(sections.MODES)}; `factor_choice`: "
        f"{_names(sections.FACTOR_CHOICES)}.",
        "executor": f"`kind`: {_names(sections.EXECUTOR_KINDS)}.",
        "fitness": f"`source`: {_names(sections.FITNESS_SOURCES)}.",
    }
    out: list[str] = []
    for name, cls, skip, summary in _SECTIONS:
        out += ["", f"## `{name}`", "", summary, "", *_rows(cls, skip)]
        if name in known:
            out += ["", "Known values: " + known[name]]
        if name == "editor":
            out += _llm_blocks()
    return out


def _llm_blocks() -> list[str]:
    out: list[str] = []
    for kind, cls in LLM_CONFIGS.items():
        out += ["", f"### `editor.llm` with `kind: {kind}`", "", *_rows(cls)]
    return out


def _protocol_block() -> list[str]:
    """The CLRS protocol's keys with every preset's value (`protocol:` overrides them)."""
    cls = protocol_lib.ProtocolConfig
    presets = protocol_lib.PRESETS
    fields = list(dataclasses.fields(cls))
    rows = markdown.table(
        ["key", "type", *(f"`{p}`" for p in presets), "meaning"],
        [
            [f"`{f.name}`", f"`{markdown.cell(_type(f))}`"]
            + [f"`{_yaml(getattr(p, f.name))}`" for p in presets.values()]
            + [meaning]
            for f, meaning in zip(fields, _meanings(cls, fields, attribute_docs(cls)))
        ],
    )
    return [
        "",
        "## `protocol`",
        "",
        "How one CLRS candidate is trained, validated and tested. `preset` picks a column;",
        "`protocol:` maps keys to new values (every other key keeps the preset's).",
        "",
        *rows,
    ]


def render_configuration() -> str:
    """The whole of `docs/configuration.md`."""
    lines = [
        "# Configuration keys",
        "",
        "<!-- generated by scripts/config_docs.py from spark_jax/config: do not edit -->",
        "",
        "A search config is a YAML mapping; every key is optional, and a key not listed here",
        "is an error that names it (`spark-jax config check FILE.yaml` validates a file and",
        "runs nothing). With no file, `spark-jax search` runs the embedded default: every",
        "default below. The seeds of `archive`, `editor` and `operator` are derived from the",
        "top-level `seed`, not set in their sections. Worked examples: `configs/`.",
        "",
        *_top_level(),
        *_section_blocks(),
        *_protocol_block(),
    ]
    return "\n".join(lines) + "\n"


def is_current(path: pathlib.Path) -> bool:
    """Whether `path` exists and holds exactly the rendering of the schema."""
    return path.is_file() and path.read_text(encoding="utf-8") == render_configuration()


def write_configuration(path: pathlib.Path) -> None:
    """Writes the rendering of the schema to `path` (docs/configuration.md)."""
    path.parent.mkdir(exist_ok=True)
    path.write_text(render_configuration(), encoding="utf-8")
