"""The registry of methods, operator modes, editor kinds and seed modes (`config.registry`):
the shipped entries are the names config, operator and compare knew before it; a method of
one's own is one file outside the package, named in $SPARK_JAX_METHODS, and `spark-jax
compare` runs it; a bad registration is a one-line error naming the problem.

Plug-ins are loaded in child processes only, so that this process's registry stays the
shipped one for the other tests."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from spark_jax.config import assets, registry, sections
from spark_jax.config import evaluation as evaluation_config
from spark_jax.config.registry import MethodSpec, OperatorSpec, RegistryError
from spark_jax.operator import prompts as operator_prompts
from spark_jax.search.rundb import RunDB

ROOT = pathlib.Path(__file__).resolve().parents[1]

TOY = '''
"""A toy method: the IID sampling control under a name of its own, from outside the package."""
from spark_jax.config import registry
from spark_jax.operator.baselines.controls import ControlOperator


class ToyOperator(ControlOperator):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, mode="sample", **kwargs)
        self.method = "toy"


registry.register(
    registry.MethodSpec(
        "toy",
        "Toy sampling",
        "the IID sampling control under a toy name",
        registry.OperatorSpec(
            "toy",
            f"{__name__}:ToyOperator",
            prompts=("sample",),
            offline_analogue="one or two catalogue transforms of the seed",
            scale_note="one sample per attempt",
        ),
    )
)
'''


def _child(argv: list[str], plugins: list[pathlib.Path], timeout: float = 900):
    """Runs `argv` with the plug-ins on $SPARK_JAX_METHODS; (returncode, stdout, stderr)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), TF_CPP_MIN_LOG_LEVEL="3")
    env[registry.PATH_VARIABLE] = os.pathsep.join(str(p) for p in plugins)
    proc = subprocess.run(
        argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    return proc.returncode, proc.stdout, proc.stderr


def _compare(out: pathlib.Path, methods: str, plugins: list[pathlib.Path]):
    argv = [sys.executable, "-m", "spark_jax.cli", "compare", "--methods", methods, "--seeds"]
    argv += ["1", "--budget", "1", "--max-attempts", "1", "--out", str(out)]
    argv += ["--config", str(ROOT / "configs" / "tiny.yaml")]
    return _child(argv, plugins)


def test_the_shipped_names_are_those_config_operator_and_compare_knew():
    assert (
        sections.MODES
        == registry.mode_names()
        == (
            *("spark", "rewrite", "openevolve", "openevolve-full", "evoprompting", "funsearch"),
            *("eoh", "sample", "sample-regions", "sequential", "sequential-regions"),
        )
    )
    assert registry.method_names()[:8] == (
        *("spark", "global-rewrite", "random-scope-sar", "fixed-op-sar", "fixed-act-sar"),
        *("random-rc-sar", "asr-sar", "ours-1it"),
    )
    assert set(registry.method_names()[8:]) == set(sections.MODES[2:])
    assert sections.EDITOR_KINDS == registry.editor_kind_names() == ("offline", "llm")
    assert evaluation_config.SEED_MODES == registry.seed_mode_names() == ("map", "vmap")


@pytest.mark.parametrize("mode", registry.shipped_names("mode"))
def test_each_shipped_mode_loads_and_names_the_prompts_its_operator_reads(mode):
    spec = registry.mode(mode)
    cls = spec.load()
    prompts = assets.asset_dir("prompts")
    assert spec.prompts and all((prompts / f"{name}.md").is_file() for name in spec.prompts)
    # A baseline reads its class's templates; SPARK's step its roles' and the contract.
    reads = getattr(cls, "templates", None) or (*operator_prompts.ROLES, "contract")
    assert set(reads) >= set(spec.prompts)
    assert spec.offline_analogue and spec.scale_note


def test_a_taken_name_or_a_malformed_path_is_a_one_line_error():
    spark = registry.method("spark")
    with pytest.raises(RegistryError, match=r"^method 'spark' is already registered$"):
        registry.register(MethodSpec("spark", "Another", "another method", spark.runs))
    other = OperatorSpec("eoh", "spark_jax.operator.step:SparkOperator")
    with pytest.raises(RegistryError, match=r"operator mode 'eoh' is already registered with"):
        registry.register(MethodSpec("eoh-again", "EoH again", "eoh's mode, another class", other))
    with pytest.raises(RegistryError, match=r"alias 'asr-only' is already a name"):
        registry.register(MethodSpec("x", "X", "x", spark.runs, aliases=("asr-only",)))
    with pytest.raises(RegistryError, match=r"'no path' is not a dotted path"):
        OperatorSpec("broken", "no path")
    with pytest.raises(RegistryError, match=r"^unknown seed mode 'pmap'; known: map, vmap$"):
        registry.seed_mode("pmap")
    assert "x" not in registry.method_names() and "eoh-again" not in registry.method_names()


def test_a_toy_method_from_one_outside_file_runs_through_compare(tmp_path):
    plugin = tmp_path / "toy_method.py"
    plugin.write_text(TOY)
    out = tmp_path / "cmp"
    code, _, err = _compare(out, "toy", [plugin])  # alone: the suite's time (one search)
    assert code == 0, err[-3000:]
    with RunDB.open(out / "toy" / "seed-0" / "run.db") as db:
        (proposal,) = db.proposals()
        assert db.get_meta("operator_variant") == "toy"
    assert proposal.mode == "toy" and proposal.editor == "offline-analogue"
    report = (out / "report.md").read_text()
    assert "`toy` (Toy sampling; offline analogue, not an LLM result) | 1 |" in report
    assert "- `toy` (Toy sampling): the IID sampling control under a toy name" in report


def test_a_bad_plugin_is_a_one_line_error_naming_the_problem(tmp_path):
    ghost = tmp_path / "ghost.py"
    ghost.write_text(
        textwrap.dedent(
            """
            from spark_jax.config import registry
            registry.register(registry.MethodSpec(
                "ghost", "Ghost", "a class nobody wrote",
                registry.OperatorSpec("ghost", "nowhere_at_all.ghosts:GhostOperator"),
            ))
            """
        )
    )
    code, _, err = _compare(tmp_path / "a", "ghost", [ghost])
    assert code == 2 and not (tmp_path / "a").exists()
    assert (
        "method 'ghost': operator mode 'ghost': 'nowhere_at_all.ghosts:GhostOperator' cannot be "
        "loaded: ModuleNotFoundError: No module named 'nowhere_at_all'" in err
    )
    twice = tmp_path / "twice.py"
    twice.write_text(
        "from spark_jax.config import registry\n"
        "registry.register(registry.MethodSpec('spark', 'Mine', 'mine', registry.mode('eoh')))\n"
    )
    code, _, err = _compare(tmp_path / "b", "spark", [twice])
    assert code == 2 and not (tmp_path / "b").exists()
    assert f"method plug-in '{twice}' ($SPARK_JAX_METHODS): method 'spark' is already" in err
    code, _, err = _compare(tmp_path / "c", "spark", [tmp_path / "missing.py"])
    assert code == 2 and "cannot be imported: FileNotFoundError: no such file" in err


EXTRA_KINDS = '''
from spark_jax.config import registry
from spark_jax.operator.editor_kinds import offline_editor


def seeded_editor(editor, operator, family):
    """The offline rules with the editor seed shifted by 1000 (a toy editor kind)."""
    import dataclasses
    return offline_editor(dataclasses.replace(editor, seed=editor.seed + 1000), operator, family)


registry.register_editor_kind(
    registry.EditorKindSpec("seeded", "offline rules, seed + 1000", f"{__name__}:seeded_editor")
)
registry.register_seed_mode(registry.SeedModeSpec("vmap2", "vmap again", "jax:vmap"))
'''

CHECK_KINDS = """
from spark_jax.config import registry
from spark_jax.config.sections import EditorConfig
from spark_jax.operator.editor_kinds import EDITORS, make_editor
print(list(EDITORS), registry.seed_mode_names(), registry.seed_mode("vmap2").load().__name__)
print(type(make_editor(EditorConfig(kind="seeded", seed=3))).__name__)
"""


def test_editor_kinds_and_seed_modes_come_from_plugins_too(tmp_path):
    plugin = tmp_path / "kinds.py"
    plugin.write_text(EXTRA_KINDS)
    code, out, err = _child([sys.executable, "-c", CHECK_KINDS], [plugin], timeout=300)
    assert code == 0, err[-3000:]
    assert out.splitlines() == [
        "['offline', 'llm', 'seeded'] ('map', 'vmap', 'vmap2') vmap",
        "OfflineEditor",
    ]


def test_the_papers_row_names_are_the_registered_methods():
    from spark_jax.report import reference

    rows = {r.method for r in reference.clrs_10task()}
    rows |= {r.variant for r in reference.dfs_ablation()}
    rows |= {k for r in reference.extra_benchmarks() for k in r.values}
    ours = {row: m.name for m in registry.methods().values() for row in m.paper_rows}
    assert {r for r in rows if not r.startswith("CLRS") and r != "Base"} == set(ours)
    assert ours["OE"] == "openevolve" and ours["ASR only"] == "asr-sar"
    assert reference.source_of("10-task", "EP").author == reference.EVOPROMPTING
    assert reference.source_of("10-task", "OE").author == reference.SPARK_PAPER
    quoted = {m.quoted_from for m in registry.methods().values() if m.quoted_from}
    assert quoted == {reference.EVOPROMPTING} and quoted <= set(reference.PROTOCOLS)


def test_the_same_entry_registered_again_is_no_error():
    spark = registry.method("spark")
    assert registry.register(spark) is spark and registry.register_mode(spark.runs) is spark.runs
    assert registry.method_names().count("spark") == 1


TOY_SEED_MODE_AND_ROW = """
from spark_jax.config import registry

registry.register_seed_mode(
    registry.SeedModeSpec("toy-map", "map, under a toy name", "spark_jax.evaluation.seeds:map_over_seeds")
)
registry.register(
    registry.MethodSpec(
        "toy-row", "Toy Row", "SPARK under a toy paper row", registry.method("spark").runs,
        paper_rows=("TR",),
    )
)
"""

READ_BY_CLI_AND_SERVE = """
import json
from spark_jax.cli.main import build_parser
from spark_jax.serve import paper

out = {"paper": paper.paper_name("TR"), "OE": paper.paper_name("OE")}
for command in ("benchmark", "evaluate"):
    try:
        args = build_parser().parse_args([command, "p.py", "--seed-mode", "toy-map"])
        out[command] = args.seed_mode
    except SystemExit as e:
        out[command] = f"exit {e.code}"
print(json.dumps(out))
"""


@pytest.mark.parametrize("with_plugin", [True, False])
def test_a_plugins_seed_mode_and_paper_row_reach_the_cli_and_the_pages(tmp_path, with_plugin):
    """`--seed-mode` takes a seed mode a plug-in registers (the choice is checked against the
    registry, not a list fixed in the parser) and the pages name a paper row by the method
    that registers it; without the plug-in the name is refused and the row is a bare key."""
    plugin = tmp_path / "toy_kinds.py"
    plugin.write_text(TOY_SEED_MODE_AND_ROW)
    argv = [sys.executable, "-c", READ_BY_CLI_AND_SERVE]
    code, out, err = _child(argv, [plugin] if with_plugin else [], timeout=300)
    assert code == 0, err[-3000:]
    got = json.loads(out.splitlines()[-1])
    assert got["OE"] == "OpenEvolve (OE)"
    if with_plugin:
        assert got == {
            **got,
            "paper": "Toy Row (TR)",
            "benchmark": "toy-map",
            "evaluate": "toy-map",
        }
    else:
        assert got == {**got, "paper": "TR", "benchmark": "exit 2", "evaluate": "exit 2"}
        assert "invalid choice: 'toy-map' (choose from 'map', 'vmap')" in err
