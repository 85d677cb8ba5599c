"""Role prompt templates, kept as plain files in `prompts/` and rendered with `string.Template`.

Templates use `${name}` placeholders (Python code rarely contains `$`); a missing field is an
error naming the field and the template, never a silently empty prompt. `${contract}` is
filled from `prompts/contract.md` in every template.
"""

from __future__ import annotations

import dataclasses
import pathlib
import string
from typing import Mapping

from spark_jax.util import resources

PROMPTS_DIR = resources.asset_dir("prompts")
ROLES = ("route", "directive", "edit", "rewrite")


class PromptError(ValueError):
    """A prompt template is missing, or a render lacks a field."""


@dataclasses.dataclass(frozen=True)
class PromptLibrary:
    """The role templates plus the shared system prompt and processor contract."""

    templates: Mapping[str, str]
    system: str
    contract: str
    directory: str = ""

    @classmethod
    def load(cls, directory: str | pathlib.Path = PROMPTS_DIR) -> "PromptLibrary":
        d = pathlib.Path(directory)

        def read(name: str) -> str:
            path = d / f"{name}.md"
            if not path.is_file():
                raise PromptError(f"prompt template not found: {path}")
            return path.read_text(encoding="utf-8")

        return cls(
            templates={role: read(role) for role in ROLES},
            system=read("system").strip(),
            contract=read("contract").strip(),
            directory=str(d),
        )

    def render(self, role: str, **fields: object) -> str:
        """Fills the role's template; raises PromptError naming any missing field."""
        if role not in self.templates:
            raise PromptError(f"unknown prompt role {role!r}; known: {', '.join(self.templates)}")
        values = {"contract": self.contract, **{k: str(v) for k, v in fields.items()}}
        try:
            return string.Template(self.templates[role]).substitute(values)
        except KeyError as e:
            raise PromptError(f"prompt {role!r} needs field {e.args[0]!r}") from None
        except ValueError as e:
            raise PromptError(f"prompt {role!r} has a malformed placeholder: {e}") from None
