"""`spark-jax config check FILE.yaml`: validate a search config without running anything.

It loads the file as `spark-jax search --config FILE` would (every key and value, with the
error naming the key path, e.g. `search.editor.llm.temprature`), reads the seed program and
its region tags, and for an LLM editor says whether the API key variable it names is set
(`api_key_env: null` for a server without a key). Nothing is written and no model is called.

Exit codes: 0 the config is valid, 2 it is not (one `error:` line naming the key or file).
"""

from __future__ import annotations

import argparse
import os

from spark_jax.cli.errors import EXIT_OK, EXIT_USAGE, fail

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Adds the `config` subcommand (with its `check` action) to `sub`."""
    p = sub.add_parser("config", help="validate a search config file without running it")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = actions.add_parser(
        "check",
        help="load and validate FILE as `search --config FILE` would; run nothing",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument("file", metavar="FILE", help="the YAML search config to validate")
    return p


def run(args: argparse.Namespace) -> int:
    """Runs `config check`; returns the exit code."""
    from spark_jax.config import search as search_config
    from spark_jax.search import startup

    try:
        cfg = search_config.load(args.file)
        startup.check_inputs(cfg)
    except (search_config.ConfigError, startup.SearchUsageError) as e:
        return fail(f"{args.file}: {' '.join(str(e).split())}", EXIT_USAGE)
    print(
        f"{args.file}: valid. task {cfg.target} (family {cfg.family}), preset "
        f"{cfg.protocol.name}, seed program {cfg.seed_program}, editor {cfg.editor.kind}, "
        f"operator {cfg.operator.variant}, budget {cfg.budget} evaluated programs (seed included), "
        f"max attempts {cfg.max_attempts if cfg.max_attempts is not None else 'none'}, "
        f"seed {cfg.seed}"
    )
    if cfg.editor.kind == "llm":
        llm = cfg.editor.llm
        key = getattr(llm, "api_key_env", None)
        command = getattr(llm, "command", None)  # the `command` backend has no server
        endpoint = f"command `{command}`" if command else getattr(llm, "base_url", "?")
        where = (
            f"{getattr(llm, 'kind', '?')} backend, {endpoint}, model {getattr(llm, 'model', '?')}"
        )
        if not key:
            print(f"LLM: {where}; no API key (api_key_env: null)")
        else:
            if not os.environ.get(key) and cfg.editor.replay is None:
                return fail(f"{args.file}: {startup.missing_key_message(key)}", EXIT_USAGE)
            print(f"LLM: {where}; API key from ${key} (set)")
    return EXIT_OK
