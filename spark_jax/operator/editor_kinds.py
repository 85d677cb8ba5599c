"""The editor kinds, registered by name: `make_editor` builds the one a config names.

'offline' plays the three roles by rules (`operator.offline`, with the task family's
catalogue); 'llm' asks a backend (`spark_jax.llm`), optionally recorded to or replayed from a
cassette. Each kind is one entry of `config.registry` (`EditorKindSpec`: its name and the
dotted path of its builder below); a plug-in on `$SPARK_JAX_METHODS` registers more.
"""

from __future__ import annotations

from typing import Callable, Iterator, Mapping

from spark_jax.config import registry
from spark_jax.config.sections import EditorConfig, OperatorConfig, llm_config_from_dict
from spark_jax.families import DEFAULT_FAMILY
from spark_jax.llm import LLMBackend, RecordBackend, ReplayBackend, make_backend
from spark_jax.operator.editors import Editor, LLMEditor
from spark_jax.operator.offline import OfflineEditor, family_catalogue

__all__ = ["EDITORS", "llm_editor", "make_editor", "offline_editor"]


def offline_editor(editor: EditorConfig, operator: OperatorConfig, family: str) -> Editor:
    """The 'offline' kind: rules, with task family `family`'s catalogue."""
    return OfflineEditor(seed=editor.seed, catalogue=family_catalogue(family))


def llm_editor(editor: EditorConfig, operator: OperatorConfig, family: str) -> Editor:
    """The 'llm' kind: a backend, or a cassette replayed, optionally recorded."""
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


Builder = Callable[[EditorConfig, OperatorConfig, str], Editor]


class _Builders(Mapping[str, Builder]):
    """Editor kind -> its builder, read from the registry when asked (plug-ins' included)."""

    def __getitem__(self, kind: str) -> Builder:
        if kind not in registry.editor_kind_names():
            raise KeyError(kind)
        return registry.editor_kind(kind).load()

    def __iter__(self) -> Iterator[str]:
        return iter(registry.editor_kind_names())

    def __len__(self) -> int:
        return len(registry.editor_kind_names())


EDITORS: Mapping[str, Builder] = _Builders()


def make_editor(
    editor: EditorConfig, operator: OperatorConfig | None = None, family: str = DEFAULT_FAMILY
) -> Editor:
    """The editor a config names: the offline rules (with task family `family`'s catalogue),
    or an LLM backend (optionally recorded to, or replayed from, a cassette). `operator`
    supplies the directive length cap (default: `OperatorConfig()`'s)."""
    build = EDITORS.get(editor.kind)
    if build is None:
        raise ValueError(f"unknown editor kind {editor.kind!r}; known kinds: {', '.join(EDITORS)}")
    return build(editor, operator or OperatorConfig(), family)
