"""The editor kinds, registered by name: `make_editor` builds the one a config names.

'offline' plays the three roles by rules (`operator.offline`, with the task family's
catalogue); 'llm' asks a backend (`spark_jax.llm`), optionally recorded to or replayed from a
cassette. `config.sections.EDITOR_KINDS` lists the same names (a test pins it).
"""

from __future__ import annotations

from typing import Callable, Mapping

from spark_jax.config.sections import EditorConfig, OperatorConfig, llm_config_from_dict
from spark_jax.llm import LLMBackend, RecordBackend, ReplayBackend, make_backend
from spark_jax.operator.editors import Editor, LLMEditor
from spark_jax.operator.offline import OfflineEditor, family_catalogue

__all__ = ["EDITORS", "make_editor"]


def _offline(editor: EditorConfig, operator: OperatorConfig, family: str) -> Editor:
    return OfflineEditor(seed=editor.seed, catalogue=family_catalogue(family))


def _llm(editor: EditorConfig, operator: OperatorConfig, family: str) -> Editor:
    if editor.replay:
        backend: LLMBackend = ReplayBackend(editor.replay)
    else:
        llm = editor.llm
        if isinstance(llm, Mapping):  # Plain data from a script: validate it the same way.
            llm = llm_config_from_dict(llm, "editor.llm")
        backend = make_backend(llm)
        if editor.record:
            backend = RecordBackend(backend, editor.record)
    return LLMEditor(backend, directive_max_chars=operator.directive_max_chars)


EDITORS: Mapping[str, Callable[[EditorConfig, OperatorConfig, str], Editor]] = {
    "offline": _offline,
    "llm": _llm,
}


def make_editor(
    editor: EditorConfig, operator: OperatorConfig | None = None, family: str = "clrs"
) -> Editor:
    """The editor a config names: the offline rules (with task family `family`'s catalogue),
    or an LLM backend (optionally recorded to, or replayed from, a cassette). `operator`
    supplies the directive length cap (default: `OperatorConfig()`'s)."""
    build = EDITORS.get(editor.kind)
    if build is None:
        raise ValueError(f"unknown editor kind {editor.kind!r}; known kinds: {', '.join(EDITORS)}")
    return build(editor, operator or OperatorConfig(), family)
