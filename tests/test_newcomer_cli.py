"""Issue 30's CLI and configs: a description and shown defaults for every subcommand and
option, valid names listed, `--version`, `spark-jax config check`, the `check` exit code the
README states, a missing API key named in YAML's words (`api_key_env: null`), and every
`configs/llm-*.yaml` driving a real search against the loopback server."""

from __future__ import annotations

import argparse
import dataclasses
import json
import pathlib

import fault_harness as harness
import pytest
import test_preflight
import yaml

from spark_jax import cli
from spark_jax.cli.main import build_parser
from spark_jax.compare.methods import METHODS
from spark_jax.config import search as search_config
from spark_jax.config.protocol import PRESETS
from spark_jax.llm.loopback import LoopbackServer
from spark_jax.search.rundb import RunDB

ROOT = pathlib.Path(__file__).resolve().parents[1]
LLM_CONFIGS = sorted((ROOT / "configs").glob("llm-*.yaml"))


def _subparsers(parser: argparse.ArgumentParser, name: str = "spark-jax"):
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield from _subparsers(sub, f"{name} {sub_name}")


def test_every_command_has_a_description_and_every_option_help_and_default(monkeypatch):
    monkeypatch.setenv("COLUMNS", "2000")  # no line wrapping inside the defaults
    for name, parser in _subparsers(build_parser()):
        assert parser.description, f"{name}: no description"
        text = parser.format_help()
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            assert action.help, f"{name} {action.option_strings or action.dest}: no help"
            if action.option_strings and not isinstance(
                action, (argparse._StoreTrueAction, argparse._VersionAction)
            ):
                if action.default is None:
                    assert "default" in action.help, f"{name} {action.option_strings}"
                else:
                    assert f"(default: {action.default})" in " ".join(text.split()) or (
                        "default" in action.help
                    ), f"{name} {action.option_strings}: default not shown"


def test_valid_names_are_listed(monkeypatch):
    monkeypatch.setenv("COLUMNS", "2000")
    parser = build_parser()
    helps = {name: " ".join(p.format_help().split()) for name, p in _subparsers(parser)}
    for method in METHODS:
        assert method in helps["spark-jax compare"]
    for command in ("spark-jax evaluate", "spark-jax perf", "spark-jax benchmark"):
        assert all(p in helps[command] for p in PRESETS), command
        assert "dfs" in helps[command] and "floyd_warshall" in helps[command]
    assert "classify" in helps["spark-jax search"] and "cartpole" in helps["spark-jax search"]


def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.startswith("spark-jax ")


def _err(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err
    return err


def test_config_check(tmp_path, capsys, monkeypatch):
    assert cli.main(["config", "check", str(harness.TINY)]) == 0
    assert "valid" in capsys.readouterr().out
    command = tmp_path / "command.yaml"  # a backend with no server: its command is named
    command.write_text(
        "editor: {kind: llm, llm: {kind: command, command: 'python3 answer.py', model: m}}\n"
    )
    assert cli.main(["config", "check", str(command)]) == 0
    assert "LLM: command backend, command `python3 answer.py`, model m;" in (
        capsys.readouterr().out
    )
    bad = tmp_path / "bad.yaml"
    bad.write_text("editor: {kind: offline, temprature: 1}\n")
    assert cli.main(["config", "check", str(bad)]) == 2
    assert "search.editor" in _err(capsys)
    untagged = tmp_path / "untagged.py"
    untagged.write_text("x = 1\n")
    bad.write_text(f"seed_program: {untagged}\n")
    assert cli.main(["config", "check", str(bad)]) == 2
    assert "search.seed_program" in _err(capsys)
    monkeypatch.delenv("SPARK_JAX_TEST_NO_KEY", raising=False)
    bad.write_text(
        "editor: {kind: llm, llm: {kind: openai, base_url: 'http://127.0.0.1:9/v1', "
        "model: m, api_key_env: SPARK_JAX_TEST_NO_KEY}}\n"
    )
    assert cli.main(["config", "check", str(bad)]) == 2
    err = _err(capsys)
    assert "SPARK_JAX_TEST_NO_KEY is not set" in err and "api_key_env: null" in err
    assert "None" not in err
    assert not list(tmp_path.glob("runs*"))


def test_search_with_an_unset_key_says_null_and_writes_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("SPARK_JAX_TEST_NO_KEY", raising=False)
    config = tmp_path / "c.yaml"
    config.write_text(
        f"task: bfs\npreset: tiny\nseed_program: {harness.ROOT / 'processors' / 'mpnn.py'}\n"
        "editor: {kind: llm, record: calls.jsonl, llm: {kind: openai, "
        "base_url: 'http://127.0.0.1:9/v1', model: m, api_key_env: SPARK_JAX_TEST_NO_KEY}}\n"
    )
    run_dir = tmp_path / "run"
    argv = ["search", "--config", str(config), "--run-dir", str(run_dir), "--no-progress"]
    assert cli.main(argv) == 2
    err = _err(capsys)
    assert "api_key_env: null" in err and "None" not in err
    assert not run_dir.exists()


def test_check_exits_1_on_a_program_without_region_tags(tmp_path, capsys):
    """README: `check` reports a program without tags as infeasible (template stage), 1."""
    untagged = tmp_path / "untagged.py"
    untagged.write_text("import flax.linen as nn\n")
    assert cli.main(["check", str(untagged), "--preset", "tiny"]) == 1
    assert "template" in capsys.readouterr().out


@pytest.mark.parametrize("path", LLM_CONFIGS, ids=[p.stem for p in LLM_CONFIGS])
def test_llm_config_runs_a_search_against_the_loopback_server(path, tmp_path, monkeypatch):
    cfg = search_config.load(path)
    llm = cfg.editor.llm
    assert cfg.protocol.name != "paper" and cfg.budget <= 10  # a budget that finishes
    assert cfg.editor.record and not pathlib.Path(cfg.editor.record).is_absolute()
    if llm.api_key_env:
        monkeypatch.setenv(llm.api_key_env, "sk-loopback-test")
    with LoopbackServer(default_reply=test_preflight._good_replies()) as srv:
        local = dataclasses.replace(llm, base_url=srv.base_url, max_retries=0, timeout_s=30.0)
        editor = dataclasses.replace(cfg.editor, llm=local)
        run_dir = tmp_path / "run"
        harness.run(run_dir, editor=editor, max_attempts=4)
        requests = [r for r in srv.requests if r.path.endswith("/chat/completions")]
    assert requests, "no call reached the server"
    assert {r.body["model"] for r in requests} == {llm.model}
    auth = {r.headers.get("authorization") for r in requests}
    assert auth == ({"Bearer sk-loopback-test"} if llm.api_key_env else {None})
    cassette = run_dir / cfg.editor.record  # one call log per run, in its directory
    assert cassette.is_file() and len(cassette.read_text().splitlines()) >= len(requests) - 1
    assert "sk-loopback-test" not in cassette.read_text()
    with RunDB.open(run_dir / "run.db") as db:
        assert db.attempt_count() == 4
        assert any(c["is_llm"] for c in db.llm_calls())
        stored = json.dumps(db.get_meta("config"))
    assert "sk-loopback-test" not in stored
    assert yaml.safe_load(path.read_text())["editor"]["llm"]["api_key_env"] == llm.api_key_env
