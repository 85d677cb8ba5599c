"""A run directory's start: inputs checked, directory made and locked, config written once.

Order (so that a refused start writes nothing): `check_inputs` (seed program tags) and the
editor's construction and preflight happen before `make_run_dir`; only the lock holder
writes `config.yaml` (atomically) and creates `run.db`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import pathlib
import platform
import sys
import time
from typing import Any

import yaml

from spark_jax import workers
from spark_jax.config import search as search_config
from spark_jax.config.search import SearchConfig
from spark_jax.operator.editor_kinds import make_editor
from spark_jax.operator.editors import Editor
from spark_jax.program import regions
from spark_jax.search import preflight
from spark_jax.search.lock import RunLock, RunLockedError
from spark_jax.search.rundb import RunDB, RunDBError
from spark_jax.search.stops import SearchUsageError
from spark_jax.util import labels

__all__ = [
    "CONFIG_NAME",
    "DB_NAME",
    "check_inputs",
    "check_resume_config",
    "editor_config",
    "lock_run_dir",
    "open_db",
    "open_run",
    "record_stop",
    "start_editor",
    "stored_config",
    "write_config",
]

DB_NAME = "run.db"
CONFIG_NAME = "config.yaml"


def check_inputs(cfg: SearchConfig) -> None:
    """Raises SearchUsageError unless the seed program is readable text with both regions."""
    path = cfg.seed_program
    try:
        source = pathlib.Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise SearchUsageError(f"search.seed_program: cannot read {path}: {e}") from None
    try:
        regions.parse_regions(source)
    except regions.TemplateError as e:
        raise SearchUsageError(
            f"search.seed_program: {path} does not follow the region template "
            f"(# SPARK:BEGIN/END OPERATOR and ACTION tags): {e.reason}"
        ) from None


def lock_run_dir(run_dir: pathlib.Path, create: bool) -> RunLock:
    """Makes (if `create`) and locks `run_dir`; one-line SearchUsageErrors."""
    try:
        if create:
            run_dir.mkdir(parents=True, exist_ok=True)
        return RunLock.acquire(run_dir)
    except RunLockedError as e:
        raise SearchUsageError(str(e)) from None
    except OSError as e:
        raise SearchUsageError(
            f"run directory {run_dir}: cannot {'create' if create else 'lock'} it: "
            f"{e.strerror or e}" + (f" ({e.filename})" if e.filename else "")
        ) from None


def write_config(run_dir: pathlib.Path, name: str, cfg: SearchConfig) -> None:
    """Writes the config snapshot atomically (a temporary file, then a rename)."""
    path = run_dir / name
    tmp = path.with_name(f".{name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(yaml.safe_dump(cfg.to_dict(), sort_keys=False), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise SearchUsageError(f"{path}: cannot write the config: {e.strerror or e}") from None


def open_db(path: pathlib.Path, meta: dict[str, Any] | None = None) -> RunDB:
    """Opens (or, with `meta`, creates) the run database; one-line SearchUsageErrors."""
    try:
        return RunDB.open(path) if meta is None else RunDB.create(path, meta=meta)
    except RunDBError as e:
        raise SearchUsageError(str(e)) from None
    except OSError as e:
        raise SearchUsageError(f"run database {path}: {e.strerror or e}") from None


# Executor keys that change where work is stored, never a result: a run resumes with or
# without them (a comparison started before the result cache existed resumes with it).
_CACHE_KEYS = ("compile_cache_dir", "result_cache_dir")


def _identity(config: Any) -> Any:
    """`config` without the cache keys of `_CACHE_KEYS`."""
    if not isinstance(config, dict) or not isinstance(config.get("executor"), dict):
        return config
    executor = {k: v for k, v in config["executor"].items() if k not in _CACHE_KEYS}
    return {**config, "executor": executor}


def _read(path: Any) -> str | None:
    try:
        return pathlib.Path(str(path)).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def _same_seed_program(db: RunDB, stored_path: Any, current_path: Any) -> bool:
    """True when the seed program at `current_path` is the one the run started from, moved:
    its text is the seed the run evaluated (or, before that, the file at `stored_path`). A
    shipped seed lives under the installed package, so a run resumed from another checkout
    or environment names it by another path."""
    current = _read(current_path)
    if current is None:
        return False
    seed = db.seed_evaluation()
    started = db.program_source(seed["program_id"]) if seed else _read(stored_path)
    return started == current


def check_resume_config(db: RunDB, cfg: SearchConfig, config_path: pathlib.Path) -> None:
    """Raises SearchUsageError if `config.yaml` no longer matches the config in `run.db`
    (a seed program at a new path with the run's seed text is the same seed)."""
    stored = db.get_meta("config")
    if stored is None:
        return

    def canonical(d: Any) -> str:
        return json.dumps(d, sort_keys=True, default=str)

    try:  # Read back with today's defaults: keys added since the run began do not differ.
        stored = search_config.from_dict(stored).to_dict()
    except (search_config.ConfigError, TypeError, ValueError):
        pass
    stored, current = _identity(stored), _identity(cfg.to_dict())
    old_seed = stored.get("seed_program") if isinstance(stored, dict) else None
    if old_seed != current.get("seed_program") and _same_seed_program(
        db, old_seed, current.get("seed_program")
    ):
        current = {**current, "seed_program": old_seed}
    if canonical(stored) != canonical(current):
        keys = config_differences(stored, current) or ["(the whole file)"]
        shown = ", ".join(keys[:8]) + (f" and {len(keys) - 8} more" if len(keys) > 8 else "")
        raise SearchUsageError(
            f"{config_path} differs from the config stored in {db.path} when the run "
            f"started, at {shown}; restore it or delete it (the database's copy is "
            "authoritative and is used when config.yaml is missing) before resuming"
        )


def config_differences(old: Any, new: Any, prefix: str = "search") -> list[str]:
    """The key paths (`search.editor.llm.model`) whose values differ between two config
    dicts, sorted; a key present on one side only counts as differing."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[str] = []
        for key in sorted(set(old) | set(new), key=str):
            if key not in old or key not in new:
                out.append(f"{prefix}.{key}")
            else:
                out += config_differences(old[key], new[key], f"{prefix}.{key}")
        return out
    same = json.dumps(old, sort_keys=True, default=str) == json.dumps(
        new, sort_keys=True, default=str
    )
    return [] if same else [prefix]


def stored_config(run_dir: pathlib.Path) -> SearchConfig:
    """The config stored in `run_dir/run.db` when the run started (the authoritative copy),
    for a resume whose `config.yaml` was deleted; SearchUsageError if there is none."""
    db_path = run_dir / DB_NAME
    if not db_path.is_file():
        raise SearchUsageError(f"nothing to resume: {db_path} does not exist")
    with open_db(db_path) as db:
        stored = db.get_meta("config")
    if not isinstance(stored, dict):
        raise SearchUsageError(
            f"cannot resume {run_dir}: {run_dir / CONFIG_NAME} is missing and {db_path} "
            "holds no config"
        )
    try:
        return search_config.from_dict(stored)
    except search_config.ConfigError as e:
        raise SearchUsageError(f"{db_path}: its stored config is no longer valid: {e}") from None


def missing_key_message(key_env: str) -> str:
    """The one line for an LLM editor whose API key variable is not set (in YAML's words:
    a server without a key is `api_key_env: null`)."""
    return (
        f"search.editor.llm.api_key_env: the environment variable {key_env} is not set; "
        f"export {key_env}=..., or set `api_key_env: null` for a server without a key "
        "(vLLM, Ollama, llama.cpp server)"
    )


def _versions() -> dict[str, str]:
    packages = ("spark-jax", "jax", "flax", "optax", "dm-haiku", "dm-clrs")
    return {"python": platform.python_version(), **labels.package_versions(packages)}


def start_editor(cfg: SearchConfig, run_dir: pathlib.Path, resume: bool) -> Editor:
    """Checks the inputs, builds the editor and runs the LLM preflight, before any write."""
    db_path = run_dir / DB_NAME
    if resume and not db_path.is_file():
        raise SearchUsageError(f"nothing to resume: {db_path} does not exist")
    if not resume and db_path.exists():
        raise SearchUsageError(
            f"{db_path} already exists: use --resume {run_dir} to continue "
            "it, or choose another --run-dir"
        )
    check_inputs(cfg)
    key_env = getattr(cfg.editor.llm, "api_key_env", None)
    if key_env:
        workers.register_secret_env(key_env)  # never handed to a candidate-running worker
    if cfg.editor.kind == "llm" and cfg.editor.replay is None and key_env:
        if not os.environ.get(key_env):
            raise SearchUsageError(missing_key_message(key_env))
    existed = run_dir.exists()
    try:
        editor = make_editor(editor_config(cfg, run_dir), cfg.operator, cfg.family)
        preflight.preflight(cfg.editor)
    except (OSError, ValueError, RuntimeError) as e:  # e.g. a missing or corrupt cassette
        _unmake(run_dir, existed)
        raise SearchUsageError(f"search.editor: {' '.join(str(e).split())}") from None
    except BaseException:
        _unmake(run_dir, existed)
        raise
    return editor


def editor_config(cfg: SearchConfig, run_dir: pathlib.Path):
    """The editor section with a relative `record` cassette taken from the run directory
    (`record: llm-calls.jsonl` -> RUN_DIR/llm-calls.jsonl: one call log per run)."""
    record = cfg.editor.record
    if not record or os.path.isabs(record):
        return cfg.editor
    return dataclasses.replace(cfg.editor, record=str(run_dir / record))


def _unmake(run_dir: pathlib.Path, existed: bool) -> None:
    """Removes `run_dir` if this start made it (a cassette's folder) and it is empty: a
    refused start writes nothing."""
    if not existed:
        with contextlib.suppress(OSError):
            run_dir.rmdir()


def open_run(
    cfg: SearchConfig,
    run_dir: pathlib.Path,
    resume: bool,
    command,
    data: dict[str, Any] | None = None,
):
    """Locks the run directory and opens its database (fresh: writes config and database,
    with `data`, the task family's fixed split and seeds, under the meta key 'data')."""
    lock = lock_run_dir(run_dir, create=not resume)
    try:
        db_path = run_dir / DB_NAME
        if resume:
            db = open_db(db_path)
            try:
                check_resume_config(db, cfg, run_dir / CONFIG_NAME)
                if not (run_dir / CONFIG_NAME).exists():  # restored from run.db's copy
                    write_config(run_dir, CONFIG_NAME, cfg)
            except BaseException:
                db.close()
                raise
            # Each resumed part's machine (labels.machine_label names its fingerprint).
            parts = db.get_meta("resumed") or []
            db.set_meta("resumed", [*parts, dict(at=time.time(), machine=labels.machine_label())])
            return lock, db
        if db_path.exists():  # Created by a process that held the lock before us.
            raise SearchUsageError(
                f"{db_path} already exists: use --resume {run_dir} to continue it"
            )
        write_config(run_dir, CONFIG_NAME, cfg)
        meta = dict(
            config=cfg.to_dict(),
            seed=cfg.seed,
            task=cfg.target,
            family=cfg.family,
            data=data,
            preset=cfg.protocol.name,
            editor=cfg.editor.kind,
            operator_variant=cfg.operator.variant,
            budget=cfg.budget,
            max_attempts=cfg.max_attempts,
            fitness_source=cfg.fitness.source,
            seeds_per_candidate=cfg.fitness.seeds,
            versions=_versions(),
            machine=labels.machine_label(),
            command=command or sys.argv,
            started_at=time.time(),
        )
        return lock, open_db(db_path, meta=meta)
    except BaseException:
        lock.release()
        raise


def record_stop(db: RunDB, e: BaseException) -> None:
    """Notes in run_meta why the run stopped early (best effort: the stop goes on)."""
    reason = "interrupted" if isinstance(e, KeyboardInterrupt) else type(e).__name__
    try:
        db.set_meta("stopped", dict(at=time.time(), reason=reason, detail=str(e)[:300]))
    except Exception:  # noqa: BLE001 - a failing database must not hide the stop's cause
        pass
