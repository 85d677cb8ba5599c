"""Every user error of `spark-jax search` is one line naming the key or file, exit 2, and
nothing is written (validation happens before the run directory exists)."""

from __future__ import annotations

import os
import pathlib

import pytest

from spark_jax import cli

ROOT = pathlib.Path(__file__).resolve().parents[1]
MPNN = ROOT / "processors" / "mpnn.py"
BASE = "task: bfs\npreset: tiny\nseed_program: {seed}\n"
LLM = (
    "editor: {{kind: llm, llm: {{kind: openai, base_url: http://127.0.0.1:9/v1, model: m, {}}}}}\n"
)

# (id, config text (None: no --config), expected words in the error line)
CASES = [
    ("timeout-abc", "executor: {timeout_s: abc}", "search.executor.timeout_s"),
    ("timeout-negative", "executor: {timeout_s: -5}", "search.executor.timeout_s: must be > 0"),
    ("workers-zero", "executor: {num_workers: 0}", "search.executor.num_workers"),
    ("in-flight-string", 'executor: {in_flight: "2"}', "search.executor.in_flight"),
    ("memory-float", "executor: {memory_mb: 1.5}", "search.executor.memory_mb"),
    ("executor-kind", "executor: {kind: slurm}", "search.executor.kind: must be one of"),
    ("devices-int", "executor: {devices: 3}", "search.executor.devices"),
    ("feas-timeout-x", "feasibility: {timeout_s: x}", "search.feasibility.timeout_s"),
    ("feas-memory-neg", "feasibility: {memory_mb: -1}", "search.feasibility.memory_mb"),
    ("feas-params-word", "feasibility: {max_params: many}", "search.feasibility.max_params"),
    ("budget-zero", "budget: 0", "search.budget"),
    ("budget-word", "budget: ten", "search.budget"),
    ("attempts-negative", "max_attempts: -1", "search.max_attempts"),
    ("seed-negative", "seed: -3", "search.seed"),
    ("seed-float", "seed: 1.5", "search.seed"),
    ("task-unknown", "task: dfz", "search.task"),
    ("preset-unknown", "preset: huge", "search.preset"),
    ("preset-list", "preset: [1]", "search.preset"),
    ("steps-zero", "protocol: {train_steps: 0}", "search.protocol.train_steps"),
    ("lr-word", "protocol: {learning_rate: fast}", "search.protocol.learning_rate"),
    ("hint-mode", "protocol: {hint_mode: maybe}", "search.protocol.hint_mode"),
    ("lengths-small", "protocol: {train_lengths: [1]}", "search.protocol.train_lengths"),
    ("val-length-word", "protocol: {val_length: abc}", "search.protocol.val_length"),
    ("mode-enum", "operator: {mode: evolve}", "search.operator.mode"),
    ("factor-enum", "operator: {factor_choice: BOTH}", "search.operator.factor_choice"),
    ("use-rc-word", "operator: {use_rc: maybe}", "search.operator.use_rc"),
    ("islands-zero", "archive: {num_islands: 0}", "num_islands"),
    ("migration-word", "archive: {migration_rate: x}", "migration_rate"),
    ("range-int", "archive: {ood_acc_range: 5}", "ood_acc_range"),
    ("cascade-fraction", "cascade: {fraction: 0}", "search.cascade.fraction"),
    ("cascade-word", "cascade: {threshold: high}", "search.cascade.threshold"),
    ("editor-kind", "editor: {kind: gpt}", "search.editor.kind"),
    ("llm-missing", "editor: {kind: llm}", "search.editor.llm"),
    ("llm-kind", "editor: {kind: llm, llm: {kind: claude}}", "search.editor.llm.kind"),
    (
        "llm-no-model",
        "editor: {kind: llm, llm: {kind: openai, base_url: http://x/v1}}",
        "search.editor.llm.model: required",
    ),
    ("llm-temp-word", LLM.format("temperature: hot"), "search.editor.llm.temperature"),
    ("llm-no-command", "editor: {kind: llm, llm: {kind: command}}", "search.editor.llm.command"),
    ("replay-int", "editor: {kind: llm, replay: 5}", "search.editor.replay"),
    ("streak-zero", "editor: {max_consecutive_failures: 0}", "max_consecutive_failures"),
    ("unknown-key", "budgte: 3", "unknown key(s) budgte"),
    ("not-mapping", "- 1\n- 2", "must be a YAML mapping"),
    ("bad-yaml", "budget: [1, 2", "not valid YAML"),
    ("seed-program-missing", "seed_program: /nonexistent/p.py", "search.seed_program"),
    ("replay-missing", "editor: {kind: llm, replay: /nonexistent/c.jsonl}", "search.editor"),
    # Task families: the family, its benchmark and preset, and its seed program.
    ("family-unknown", "family: vision", "search.family: unknown task family 'vision'"),
    ("family-no-benchmark", "family: classify", "search.benchmark: required"),
    ("clrs-benchmark-unknown", "benchmark: mnist1d", "search.benchmark: unknown CLRS task"),
    (
        "benchmark-of-another-family",
        "family: classify\nbenchmark: cartpole_v1",
        "search.benchmark: task family 'classify' has no benchmark 'cartpole_v1'",
    ),
    (
        "family-preset-unknown",
        "family: classify\nbenchmark: mnist1d\npreset: paper",
        "search.preset: task family 'classify' has no preset 'paper'",
    ),
    (
        "seed-program-of-another-family",
        "family: classify\nbenchmark: mnist1d",
        "defines no make_classifier(): not a program of the task family 'classify'",
    ),
    (
        "family-dataset-not-cached",
        "family: classify\nbenchmark: news20\nseed_program: mlp",
        "search.benchmark: 20News not cached: fill",
    ),
    (
        "family-cascade",
        "family: cartpole\nbenchmark: cartpole_v1\ncascade: {threshold: 0.5}",
        "search.cascade: CLRS-only",
    ),
]


def _error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("error: ")
    return err[0]


def _search(tmp_path, config: str | bytes | None, *extra: str) -> tuple[int, pathlib.Path]:
    run_dir = tmp_path / "run"
    argv = ["search", "--run-dir", str(run_dir), "--no-progress", *extra]
    if config is not None:
        path = tmp_path / "bad.yaml"
        if isinstance(config, bytes):
            path.write_bytes(config)
        else:
            path.write_text(config)
        argv += ["--config", str(path)]
    return cli.main(argv), run_dir


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_config_is_one_line_exit_2_nothing_written(tmp_path, capsys, case):
    _, text, words = case
    lines = text.splitlines()
    keys = {line.split(":")[0] for line in lines}
    base = "".join(
        line + "\n"
        for line in BASE.format(seed=MPNN).splitlines()
        if line.split(":")[0] not in keys
    )
    config = text + "\n" if text.startswith("-") else base + text + "\n"
    code, run_dir = _search(tmp_path, config)
    line = _error_line(capsys)
    assert code == 2, line
    assert words in line
    assert not run_dir.exists()


@pytest.mark.parametrize(
    "content,words",
    [
        (b"", "is empty"),
        (b"\n# only a comment\n", "is empty"),
        (b"\x00\x01\x02binary\xff\xfe", "not a text file"),
        (b"task: bfs\x00\n", "not a text file"),
    ],
    ids=["empty", "comment-only", "binary", "nul"],
)
def test_empty_and_binary_config_files(tmp_path, capsys, content, words):
    code, run_dir = _search(tmp_path, content)
    line = _error_line(capsys)
    assert code == 2 and words in line and "bad.yaml" in line
    assert not run_dir.exists()


def test_seed_program_without_tags(tmp_path, capsys):
    untagged = tmp_path / "untagged.py"
    untagged.write_text(
        "".join(line for line in MPNN.read_text().splitlines(True) if "# SPARK:" not in line)
    )
    code, run_dir = _search(tmp_path, BASE.format(seed=untagged))
    line = _error_line(capsys)
    assert code == 2 and "search.seed_program" in line and "untagged.py" in line
    assert "region template" in line
    assert not run_dir.exists()


def test_run_directory_under_a_file_and_unwritable(tmp_path, capsys):
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    argv = ["search", "--config", str(ROOT / "configs" / "tiny.yaml"), "--no-progress"]
    assert cli.main([*argv, "--run-dir", str(blocker / "run")]) == 2
    assert "cannot create" in _error_line(capsys)
    if os.geteuid() == 0:
        return  # root ignores directory permissions
    locked = tmp_path / "ro"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        code = cli.main([*argv, "--run-dir", str(locked / "run")])
        line = _error_line(capsys)
    finally:
        locked.chmod(0o700)
    assert code == 2
    assert "cannot create" in line and not (locked / "run").exists()


@pytest.mark.parametrize(
    "content,words", [(b"", "is empty"), (b"not a database at all" * 50, "corrupt")]
)
def test_resume_of_empty_or_corrupt_database(tmp_path, capsys, content, words):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "config.yaml").write_text(BASE.format(seed=MPNN))
    (run_dir / "run.db").write_bytes(content)
    assert cli.main(["search", "--resume", str(run_dir), "--no-progress"]) == 2
    line = _error_line(capsys)
    assert words in line and "run.db" in line
    assert (run_dir / "run.db").read_bytes() == content  # left as it was


@pytest.mark.parametrize(
    "flags,words",
    [
        (["--family", "vision"], "search.family: unknown task family 'vision'"),
        (["--family", "classify", "--benchmark", "dfs"], "has no benchmark 'dfs'"),
        (["--benchmark", "mnist1d"], "search.benchmark: unknown CLRS task 'mnist1d'"),
    ],
    ids=["family", "benchmark-of-family", "clrs-benchmark"],
)
def test_bad_family_flags_are_one_line_exit_2_nothing_written(tmp_path, capsys, flags, words):
    code, run_dir = _search(tmp_path, None, *flags)
    line = _error_line(capsys)
    assert code == 2 and words in line, line
    assert not run_dir.exists()
