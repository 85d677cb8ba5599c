"""The registry of extension points named in a config: search methods (with the operator mode
each runs), editor kinds and seed modes. One entry per thing, registered once; config
validates names against it, and operator, compare and report read it instead of keeping lists.

- `OperatorSpec`: an operator mode (`operator.mode`): the operator class that runs it, given
  as a dotted path ('package.module:Class') imported only when a search builds the operator,
  its fixed keyword options, its prompt templates (`prompts/NAME.md`), what it runs under the
  offline editor (its offline analogue) and its scale against its original's defaults.
- `MethodSpec`: a search method `spark-jax compare` runs: its paper name, description, the
  `OperatorSpec` it runs, the other `operator` keys it sets, a fixed attempt count if any.
- `EditorKindSpec` (`editor.kind`) and `SeedModeSpec` (how K seeds trained as one program run
  the seed axis): a name, a description and the dotted path of what builds or runs it.

The shipped entries are registered in `config.shipped_methods`. **A method of your own is
one file**: a Python file (or an importable module) that calls `register(MethodSpec(...))`
(and `register_editor_kind`, `register_seed_mode`), named in `$SPARK_JAX_METHODS`
(os.pathsep-separated; like `$SPARK_JAX_FAMILIES` for task families). Its operator class may
live in the same file: a file is imported as a module whose `__name__` the dotted path can use
(`f"{__name__}:MyOperator"`). Plug-ins are imported the first time a name is looked up, so
this module imports no stage code (only `config.protocol`'s error and the plug-in file loader
of `families`) and config can validate names with it. A bad registration (a name taken, a
malformed or unloadable class path, a plug-in that does not import) raises `RegistryError`, a
ConfigError (ValueError) with a one-line message naming the problem.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import pathlib
import re
import sys
import types
from typing import Any, Callable, ClassVar, Generic, Mapping, Sequence, TypeVar

from spark_jax.config.protocol import ConfigError
from spark_jax.families.loader import import_file

__all__ = [
    "PATH_VARIABLE",
    "EditorKindSpec",
    "LiveNames",
    "MethodSpec",
    "OperatorSpec",
    "RegistryError",
    "SeedModeSpec",
    "editor_kind",
    "editor_kind_names",
    "is_known",
    "load_object",
    "method",
    "method_names",
    "methods",
    "mode",
    "mode_names",
    "register",
    "register_editor_kind",
    "register_mode",
    "register_seed_mode",
    "seed_mode",
    "seed_mode_names",
    "shipped_names",
]

PATH_VARIABLE = "SPARK_JAX_METHODS"  # Plug-in files or modules, os.pathsep-separated.
SHIPPED = "spark_jax.config.shipped_methods"  # The module that registers the shipped entries.
_DOTTED = re.compile(r"^[A-Za-z_][\w.]*[:.][A-Za-z_]\w*$")


class RegistryError(ConfigError):
    """A bad registration or an unknown name; the message is one line naming the problem (a
    ConfigError, so that a command reports it as it reports a bad config value)."""


def load_object(path: str, what: str) -> Any:
    """The object a dotted path names ('package.module:Name' or 'package.module.Name'),
    imported now; RegistryError naming `what` when it cannot be."""
    module_name, _, attr = path.rpartition(":") if ":" in path else path.rpartition(".")
    try:
        return getattr(importlib.import_module(module_name), attr)
    except Exception as e:  # noqa: BLE001 - a bad path is a one-line error
        raise RegistryError(f"{what}: {path!r} cannot be loaded: {type(e).__name__}: {e}") from e


def _check_path(path: str, what: str) -> None:
    if not isinstance(path, str) or not _DOTTED.match(path):
        raise RegistryError(f"{what}: {path!r} is not a dotted path 'package.module:Name'")


@dataclasses.dataclass(frozen=True)
class OperatorSpec:
    """One operator mode (`operator.mode`).

    Attributes:
      mode: the name `operator.mode` takes.
      operator_class: dotted path of the operator class ('package.module:Class'); it is built
        as `cls(editor, checker, operator_config, history, **options)`.
      options: fixed keyword arguments of that class for this mode.
      prompts: the prompt templates it asks with (`prompts/NAME.md`, NAME listed).
      offline_analogue: what it runs under the offline editor (rules, NOT an LLM).
      scale_note: its scale against its original's defaults (operator keys that set it).
    """

    mode: str
    operator_class: str
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    prompts: tuple[str, ...] = ()
    offline_analogue: str = ""
    scale_note: str = ""

    def __post_init__(self) -> None:
        _check_path(self.operator_class, f"operator mode {self.mode!r}")
        object.__setattr__(self, "options", types.MappingProxyType(dict(self.options)))
        object.__setattr__(self, "prompts", tuple(self.prompts))

    def load(self) -> type:
        """The operator class (imported now)."""
        return load_object(self.operator_class, f"operator mode {self.mode!r}")


@dataclasses.dataclass(frozen=True)
class MethodSpec:
    """One search method, named as in the paper's tables.

    Attributes:
      name: the command-line name ('spark', 'random-scope-sar', ...).
      paper_name: the name in the paper's tables ('Full SPARK', 'Random-Scope SAR', ...).
      description: one line on what it isolates.
      runs: the operator mode it runs.
      settings: the other `operator` config keys it sets (factor_choice, use_rc).
      max_attempts: a fixed attempt count (Ours-1it: one step from the seed), else None (the
        comparison's cap applies).
      aliases: the paper's other names for the same setting.
      control: one of the sampling controls (Gideoni, Risi, Gal 2026).
      paper_rows: the names the paper's tables give it (rows of `reference/*.csv`: 'OE',
        'Ours', 'ASR only', ...); empty when the paper reports none.
      quoted_from: who measured those rows when the SPARK paper quotes them from elsewhere
        (EvoPrompting's own paper); None: the SPARK paper's own measurement.
    """

    name: str
    paper_name: str
    description: str
    runs: OperatorSpec
    settings: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    max_attempts: int | None = None
    aliases: tuple[str, ...] = ()
    control: bool = False
    paper_rows: tuple[str, ...] = ()
    quoted_from: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.runs, OperatorSpec):
            raise RegistryError(f"method {self.name!r}: `runs` must be an OperatorSpec")
        object.__setattr__(self, "settings", types.MappingProxyType(dict(self.settings)))
        object.__setattr__(self, "aliases", tuple(self.aliases))
        object.__setattr__(self, "paper_rows", tuple(self.paper_rows))

    @property
    def operator(self) -> Mapping[str, Any]:
        """The `operator` config keys this method sets (mode first)."""
        return types.MappingProxyType({"mode": self.runs.mode, **self.settings})


class _PathEntry:
    """What an entry with one dotted-path field shares: the path is checked when the entry is
    made and imported by `load`; errors name the entry as `{KIND} {name!r}`."""

    KIND: ClassVar[str]  # 'editor kind', 'seed mode'
    PATH_FIELD: ClassVar[str]  # the field that holds the dotted path
    name: str

    def __post_init__(self) -> None:
        _check_path(getattr(self, self.PATH_FIELD), f"{self.KIND} {self.name!r}")

    def load(self) -> Any:
        """What the dotted path names (imported now)."""
        return load_object(getattr(self, self.PATH_FIELD), f"{self.KIND} {self.name!r}")


@dataclasses.dataclass(frozen=True)
class EditorKindSpec(_PathEntry):
    """One editor kind (`editor.kind`): `builder` is the dotted path of a function
    `(EditorConfig, OperatorConfig, family) -> Editor`."""

    KIND: ClassVar[str] = "editor kind"
    PATH_FIELD: ClassVar[str] = "builder"
    name: str
    description: str
    builder: str


@dataclasses.dataclass(frozen=True)
class SeedModeSpec(_PathEntry):
    """One seed mode: `over_seeds` is the dotted path of a function that maps a one-seed
    function over a leading seed axis (`fn -> fn over [K, ...]`, e.g. 'jax:vmap')."""

    KIND: ClassVar[str] = "seed mode"
    PATH_FIELD: ClassVar[str] = "over_seeds"
    name: str
    description: str
    over_seeds: str


class LiveNames(Sequence[str]):
    """A read-only sequence of names read from the registry each time it is used, so that a
    module constant built from it (`BASELINES`, `CONTROL_METHODS`) names the plug-ins' too and
    importing it imports no plug-in."""

    def __init__(self, names: Callable[[], tuple[str, ...]]):
        self._names = names

    def __getitem__(self, index):
        return self._names()[index]

    def __len__(self) -> int:
        return len(self._names())

    def __contains__(self, name: object) -> bool:
        return name in self._names()

    def __eq__(self, other: object) -> bool:
        return tuple(self) == (tuple(other) if isinstance(other, Sequence) else other)

    def __repr__(self) -> str:
        return repr(self._names())


T = TypeVar("T")


class _Table(Generic[T]):
    """Name -> entry in registration order; a name is registered once."""

    def __init__(self, what: str):
        self.what, self.entries = what, {}

    def add(self, name: str, entry: T) -> T:
        if not isinstance(name, str) or not name or name != name.strip() or "," in name:
            raise RegistryError(f"{self.what} name {name!r}: must be a non-empty word")
        if name in self.entries and self.entries[name] != entry:
            raise RegistryError(f"{self.what} {name!r} is already registered")
        self.entries[name] = entry
        return entry

    def get(self, name: str) -> T:
        if name not in self.entries:
            raise RegistryError(f"unknown {self.what} {name!r}; known: {', '.join(self.entries)}")
        return self.entries[name]


_METHODS: _Table[MethodSpec] = _Table("method")
_MODES: _Table[OperatorSpec] = _Table("operator mode")
_EDITOR_KINDS: _Table[EditorKindSpec] = _Table("editor kind")
_SEED_MODES: _Table[SeedModeSpec] = _Table("seed mode")
# kind -> the shipped module's tuple of that kind's entries, and the attribute naming each.
_SHIPPED_TUPLES = {
    "method": ("METHODS", "name"),
    "mode": ("OPERATORS", "mode"),
    "editor kind": ("EDITOR_KINDS", "name"),
    "seed": ("SEED_MODES", "name"),
}
_loaded: set[str] = set()  # plug-in entries imported, and SHIPPED once it is


def _shipped() -> None:
    """Registers the shipped entries (once)."""
    if SHIPPED not in _loaded:
        _loaded.add(SHIPPED)
        importlib.import_module(SHIPPED)


def _import_plugin(entry: str) -> None:
    """Imports one $SPARK_JAX_METHODS entry: a .py file (as a module of its own) or a module."""
    if not entry.endswith(".py") and os.sep not in entry and "/" not in entry:
        importlib.import_module(entry)
        return
    path = pathlib.Path(entry).expanduser().resolve()
    import_file("spark_jax_method_plugin_" + re.sub(r"\W", "_", path.stem), path)


def _plugins() -> None:
    """The shipped entries, then every $SPARK_JAX_METHODS plug-in not yet imported."""
    _shipped()
    for entry in (e.strip() for e in os.environ.get(PATH_VARIABLE, "").split(os.pathsep)):
        if not entry or entry in _loaded:
            continue
        _loaded.add(entry)  # before importing: a plug-in's own look-ups must not re-enter
        try:
            _import_plugin(entry)
        except RegistryError as e:
            _loaded.discard(entry)
            raise RegistryError(f"method plug-in {entry!r} (${PATH_VARIABLE}): {e}") from e
        except Exception as e:  # noqa: BLE001 - a broken plug-in is a one-line error
            _loaded.discard(entry)
            raise RegistryError(
                f"method plug-in {entry!r} (${PATH_VARIABLE}) cannot be imported: "
                f"{type(e).__name__}: {e}"
            ) from e


def register_mode(spec: OperatorSpec) -> OperatorSpec:
    """Adds an operator mode; RegistryError if its name is taken by another."""
    _shipped()
    return _MODES.add(spec.mode, spec)


def register(spec: MethodSpec) -> MethodSpec:
    """Adds a search method (and the operator mode it runs, when new); RegistryError if its
    name or an alias is taken, or its mode is registered with another operator."""
    _shipped()
    if _METHODS.entries.get(spec.name) == spec:  # the same entry again (a plug-in re-imported)
        return spec
    taken = set(_METHODS.entries) | {a for m in _METHODS.entries.values() for a in m.aliases}
    for alias in spec.aliases:
        if alias in taken or alias == spec.name:
            raise RegistryError(f"method {spec.name!r}: its alias {alias!r} is already a name")
    if spec.name in taken - set(_METHODS.entries):
        raise RegistryError(f"method {spec.name!r} is already registered (as an alias)")
    if spec.name in _METHODS.entries and _METHODS.entries[spec.name] != spec:
        raise RegistryError(f"method {spec.name!r} is already registered")
    known = _MODES.entries.get(spec.runs.mode)
    if known is not None and known != spec.runs:
        raise RegistryError(
            f"method {spec.name!r}: operator mode {spec.runs.mode!r} is already registered "
            "with another operator"
        )
    _MODES.add(spec.runs.mode, spec.runs)
    return _METHODS.add(spec.name, spec)


def register_editor_kind(spec: EditorKindSpec) -> EditorKindSpec:
    """Adds an editor kind; RegistryError if its name is taken by another."""
    _shipped()
    return _EDITOR_KINDS.add(spec.name, spec)


def register_seed_mode(spec: SeedModeSpec) -> SeedModeSpec:
    """Adds a seed mode; RegistryError if its name is taken by another."""
    _shipped()
    return _SEED_MODES.add(spec.name, spec)


def methods() -> Mapping[str, MethodSpec]:
    """Every method by name (shipped, then plug-ins'), in registration order."""
    _plugins()
    return types.MappingProxyType(dict(_METHODS.entries))


def _lookups(table: _Table[T]) -> tuple[Callable[[str], T], Callable[[], tuple[str, ...]]]:
    """The two public look-ups of one kind of entry, plug-ins imported first: the entry of a
    name (RegistryError naming the known ones) and every name, in registration order."""

    def entry(name: str) -> T:
        _plugins()
        return table.get(name)

    def names() -> tuple[str, ...]:
        _plugins()
        return tuple(table.entries)

    entry.__doc__ = f"The {table.what} `name`; RegistryError naming the known ones."
    names.__doc__ = f"Every {table.what}'s name (shipped, then plug-ins'), in registration order."
    return entry, names


method, method_names = _lookups(_METHODS)
mode, mode_names = _lookups(_MODES)
editor_kind, editor_kind_names = _lookups(_EDITOR_KINDS)
seed_mode, seed_mode_names = _lookups(_SEED_MODES)


def is_known(kind: str, name: str) -> bool:
    """Whether `name` is a registered name of `kind` ('method', 'mode', 'editor kind' or
    'seed'). A shipped name is answered without importing any plug-in, so that validating a
    config's defaults (at import time too) never imports one."""
    if name in shipped_names(kind):
        return True
    _plugins()
    return (
        name
        in {"method": _METHODS, "mode": _MODES, "editor kind": _EDITOR_KINDS}.get(
            kind, _SEED_MODES
        ).entries
    )


def shipped_names(kind: str) -> tuple[str, ...]:
    """The shipped names of `kind` ('method', 'mode', 'editor kind' or 'seed'), without any
    plug-in's: what the docs list and what module constants such as `MODES` hold."""
    _shipped()
    attr, key = _SHIPPED_TUPLES[kind]
    return tuple(getattr(entry, key) for entry in getattr(sys.modules[SHIPPED], attr))
