"""results/trust-rules: the README's generated table and figures.csv are what
scripts/trust_rules_table.py renders from the committed outputs; the scripts it names exist."""

import csv
import importlib.util
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "trust-rules"


def _table_module():
    spec = importlib.util.spec_from_file_location(
        "trust_rules_table", ROOT / "scripts" / "trust_rules_table.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_generated_section_matches_the_data():
    table = _table_module()
    readme = (OUT / "README.md").read_text(encoding="utf-8")
    assert readme.count(table.BEGIN) == 1 and readme.count(table.END) == 1
    assert table.generated_section(readme) == table.render(table.extract(OUT), OUT)


def test_the_answer_is_built_from_the_figures():
    # Every before -> after the answer quotes is a row of figures.csv (the answer is written
    # by the script: tests/test_results_answers.py), and a rule whose figure did not move is
    # named as not measured, not claimed.
    table = _table_module()
    rows = table.extract(OUT)
    answer = table.answer(rows, OUT)
    readme = (OUT / "README.md").read_text(encoding="utf-8")
    assert f"**Answer.** {answer}\n" in readme
    one = next(r for r in rows if r["rule"].startswith("1 seed") and "mpnn" in r["figure"])
    assert f'claims "{one["before"]}"; it says "{one["after"]}"' in answer
    still = [r for r in rows if r["before"] == r["after"] and not r["rule"].startswith("classify")]
    assert still and all(f"{r['figure']} {r['after']} before and after" in answer for r in still)
    moved = len({r["rule"] for r in rows}) - len({r["rule"] for r in still})
    assert answer.startswith(f"Yes for {moved} of the {len({r['rule'] for r in rows})} rules")


def test_figures_csv_matches_the_data():
    table = _table_module()
    with (OUT / "figures.csv").open(encoding="utf-8", newline="") as f:
        committed = list(csv.DictReader(f))
    assert committed == table.extract(OUT)


def test_every_cited_source_file_is_committed_and_small():
    table = _table_module()
    for row in table.extract(OUT):
        for key in ("source_before", "source_after"):
            path = OUT / row[key]
            assert path.is_file(), path
    for path in OUT.rglob("*"):
        if path.is_file():
            assert path.suffix not in {".db", ".png"}, path
            assert path.stat().st_size < 100_000, path


def test_scripts_named_in_the_readme_exist():
    readme = (OUT / "README.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`((?:scripts/)?[\w./-]+\.(?:sh|py))", readme))
    assert {"scripts/trust_rules.sh", "scripts/trust_rules_table.py"} <= named
    for name in named:
        candidates = [ROOT / name, OUT / name, ROOT / "tests" / pathlib.Path(name).name]
        assert any(p.is_file() for p in candidates), name


def test_readme_labels_protocol_machine_and_editor():
    readme = (OUT / "README.md").read_text(encoding="utf-8")
    for words in ("`tiny`", "2-core", "no GPU", "NOT an LLM", "6648d88", "6418962"):
        assert words in readme, words
