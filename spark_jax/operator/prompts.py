"""Role prompt templates, kept as plain files in `prompts/` and rendered with `string.Template`.

Templates use `${name}` placeholders (Python code rarely contains `$`); a missing field is an
error naming the field and the template, never a silently empty prompt.

Two shared texts fill two placeholders, each itself a template that takes `${task}`,
`${task_split}`, `${task_outputs}`, `${score_noise}`, `${macs_nodes}` and `${masking_rule}`
from the same fields:

  ${task_description}  `prompts/task.md`: what the program receives and must return, the Flax
                       rules that make it run, the task, its metrics and noise. Every method's
                       prompt carries it (the baselines' templates use only this one).
  ${contract}          SPARK's contract: the task description followed by `prompts/contract.md`
                       (regions, factor-scoped edits, routing, SPARK's archive), in SPARK's
                       role prompts only.

A task family other than CLRS passes its own contract (`contract_text`): all of it fills
`${contract}`, and its text before the heading `SPARK_SECTION` fills `${task_description}`.
A template file may open with an HTML comment (`<!-- ... -->`, e.g. naming the original prompt a
baseline follows); it is dropped when the file is read and never reaches a model.
"""

from __future__ import annotations

import ast
import dataclasses
import pathlib
import re
import string
from typing import Mapping

from spark_jax.config import assets

PROMPTS_DIR = assets.asset_dir("prompts")
ROLES = ("route", "directive", "edit", "rewrite")
MASK_FLAG = "MASKS_NON_EDGES"
DEFAULT_SPLIT = (
    "Out-of-distribution (OOD) means test graphs larger than every training graph: the "
    "processor must generalise to sizes it never saw."
)


DEFAULT_OUTPUTS = "The task's outputs are decoded from the processor's node and edge embeddings."


def noise_sentence(seeds: int) -> str:
    """The contract's sentence on score noise for `seeds` training seeds per candidate."""
    tail = "so a small difference between two programs is not evidence that one is better."
    if seeds <= 1:
        return (
            "every score comes from one training run with one seed; retraining the same "
            "program with another seed often moves `ood_score` by several points, " + tail
        )
    return (
        f"every score is the mean over {seeds} training runs with different seeds; one run's "
        "`ood_score` often moves by several points between seeds and the mean damps that "
        "without removing it, " + tail
    )


SPARK_SECTION = "## SPARK's regions and edits"  # where a family contract's SPARK-only part starts


def task_part(family_contract: str) -> str:
    """A family contract's task description: its text before `SPARK_SECTION`."""
    return family_contract.split(SPARK_SECTION, 1)[0].strip()


class PromptError(ValueError):
    """A prompt template is missing, or a render lacks a field."""


_LEADING_COMMENT = re.compile(r"\A\s*<!--.*?-->\s*\n", re.DOTALL)


def read_template(path: str | pathlib.Path) -> str:
    """A template file's text without its leading HTML comment; PromptError when missing."""
    path = pathlib.Path(path)
    if not path.is_file():
        raise PromptError(f"prompt template not found: {path}")
    return _LEADING_COMMENT.sub("", path.read_text(encoding="utf-8"), count=1)


@dataclasses.dataclass(frozen=True)
class PromptLibrary:
    """The role templates plus the shared system prompt, the task description every method
    is given, and SPARK's own contract (regions and factor-scoped edits)."""

    templates: Mapping[str, str]
    system: str
    contract: str
    task_description: str = ""
    directory: str = ""

    @classmethod
    def load(cls, directory: str | pathlib.Path = PROMPTS_DIR) -> "PromptLibrary":
        d = pathlib.Path(directory)

        def read(name: str) -> str:
            return read_template(d / f"{name}.md")

        return cls(
            templates={role: read(role) for role in ROLES},
            system=read("system").strip(),
            contract=read("contract").strip(),
            task_description=read("task").strip(),
            directory=str(d),
        )

    def render(self, role: str, **fields: object) -> str:
        """Fills the role's template; raises PromptError naming any missing field."""
        if role not in self.templates:
            raise PromptError(f"unknown prompt role {role!r}; known: {', '.join(self.templates)}")
        values = {k: str(v) for k, v in fields.items()}
        values.setdefault("task_split", DEFAULT_SPLIT)
        values.setdefault("task_outputs", DEFAULT_OUTPUTS)
        values.setdefault("score_noise", noise_sentence(1))
        family_contract = values.pop("contract_text", "")  # another task family's contract
        try:
            if family_contract:
                values["task_description"] = task_part(family_contract)
                values["contract"] = family_contract
            else:
                task = string.Template(self.task_description).substitute(values)
                spark = string.Template(self.contract).substitute(values)
                values["task_description"], values["contract"] = task, f"{task}\n\n{spark}"
            return string.Template(self.templates[role]).substitute(values)
        except KeyError as e:
            raise PromptError(f"prompt {role!r} needs field {e.args[0]!r}") from None
        except ValueError as e:
            raise PromptError(f"prompt {role!r} has a malformed placeholder: {e}") from None


def claims_masking(source: str) -> bool:
    """Whether a program sets `MASKS_NON_EDGES = True` at module level (read statically)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    claim = False
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == MASK_FLAG for t in node.targets
        ):
            claim = isinstance(node.value, ast.Constant) and node.value.value is True
    return claim


def masking_rule(source: str) -> str:
    """The contract's masking paragraph for a parent program: its fixed claim, stated."""
    if claims_masking(source):
        return (
            f"This program sets `{MASK_FLAG} = True`; no edit can change that (the check "
            "always reads the parent's claim). Its node output must not depend on edge "
            "features or messages on non-edges (adj_mat == 0): the feasibility check perturbs "
            "edge features on non-edges and rejects the program if the node output changes. "
            "Keep masking messages with adj_mat before every aggregation."
        )
    return (
        f"This program sets `{MASK_FLAG} = False`; no edit can change that (the check "
        "always reads the parent's claim). It makes no masking claim, so features on "
        "non-edges (adj_mat == 0) may influence the output and no masking check is run."
    )
