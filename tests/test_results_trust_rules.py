"""results/trust-rules: the README's generated table and figures.csv are what
spark_jax.results.trust_rules (scripts/trust_rules_table.py) renders from the committed records,
none of them a report's Markdown; the probes and the record writers give today's code's
figures, the ones the "after" records hold; the scripts and files it names exist, and the
folder holds no code."""

import csv
import json
import pathlib
import re

from spark_jax.results import trust_rules as table
from spark_jax.results import trust_rules_figures as figures
from spark_jax.results import trust_rules_probes as probes
from spark_jax.results import trust_rules_records as records

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "results" / "trust-rules"


def test_readme_generated_section_matches_the_data():
    readme = (OUT / "README.md").read_text(encoding="utf-8")
    assert readme.count(table.BEGIN) == 1 and readme.count(table.END) == 1
    assert table.generated_section(readme) == table.render(table.extract(OUT), OUT)


def test_the_answer_is_built_from_the_figures():
    # Every before -> after the answer quotes is a row of figures.csv (the answer is written
    # by the script: tests/test_results_answers.py), and a rule whose figure did not move is
    # named as not measured, not claimed.
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
    with (OUT / "figures.csv").open(encoding="utf-8", newline="") as f:
        committed = list(csv.DictReader(f))
    assert committed == table.extract(OUT)


def test_every_cited_source_file_is_committed_and_small():
    for row in table.extract(OUT):
        for key in ("source_before", "source_after"):
            path = OUT / row[key]
            assert path.is_file(), path
    for path in OUT.rglob("*"):
        if path.is_file():
            assert path.suffix not in {".db", ".png", ".py"}, path
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


def _figure_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("FIGURE ")]


def test_the_probes_give_the_after_outputs_figures():
    # The scripted scenario (tests/test_budget_rules.py's executor and operator) and the
    # baseline prompts' vocabulary, run on today's code, print what after/ holds.
    after = (OUT / "after" / "dup-demo" / "output.txt").read_text(encoding="utf-8")
    assert probes.scripted_budget() == _figure_lines(after)
    # The scripted operator is gone again once the probe returns (it once stayed patched
    # into the search loop, and the next search in the same process ran out of children).
    from spark_jax.operator.baselines import make_operator
    from spark_jax.search import loop

    assert loop.make_operator is make_operator
    vocab = (OUT / "after" / "vocab" / "output.txt").read_text(encoding="utf-8").splitlines()
    assert probes.vocabulary() == vocab


def test_the_run_summary_reads_what_the_run_database_holds(tmp_path):
    # A copy of a committed comparison's run (the summary opens it read-only; a copy keeps
    # results/ free of sqlite's side files).
    from spark_jax.search.rundb import RunDB

    source = ROOT / "results" / "compare-offline" / "data" / "spark" / "seed-0" / "run.db"
    copy = tmp_path / "spark" / "seed-0" / "run.db"
    copy.parent.mkdir(parents=True)
    copy.write_bytes(source.read_bytes())
    [line] = probes.run_summary(tmp_path)
    with RunDB.open(copy) as db:
        proposals, evaluations = db.proposals(), db.evaluations()
    candidates = [e for e in evaluations if e["proposal_attempt"] is not None]
    assert line.startswith(f"spark/seed-0: attempts={len(proposals)} ")
    assert f" evaluated(entered training)={len(candidates)} " in line
    figures = dict(re.findall(r"(\w+(?:\([^)]*\))?)=(\{[^}]*\}|\S+)", line.split(": ", 1)[1]))
    assert int(figures["attempts"]) == len(proposals)
    best = max(e["ood_score"] for e in candidates if e["status"] == "ok")
    assert figures["best_candidate"] == f"{best:.4f}"


def test_no_figure_is_read_from_a_report():
    # Every figure comes from a stored record (results.csv, a JSON record, a config, a probe's
    # output), never from the Markdown a version's report wrote.
    for row in table.extract(OUT):
        for key in ("source_before", "source_after"):
            assert not row[key].endswith(".md"), row


def _comparison_figures(record: dict) -> tuple:
    return (
        figures.verdict_words(record),
        figures.interval_text(record),
        figures.task_tests(record),
        figures.mdd_text(record),
        figures.p_floor(record),
    )


def test_the_comparison_records_are_what_the_code_computes_from_results_csv():
    # after/*/comparison.json was written by the after tree's code from the results.csv beside
    # it; today's statistics give the same figures from the same file (the before records come
    # from the old tree's code, which is not importable here).
    for name in ("stats-1seed", "stats-2seeds"):
        folder = OUT / "after" / name
        stored = json.loads((folder / "comparison.json").read_text(encoding="utf-8"))
        today = records.comparison(folder / "results.csv")
        assert (today["program"], today["baseline"]) == ("mpnn", "official:triplet_gmpnn")
        assert _comparison_figures(today) == _comparison_figures(stored), name
    before = json.loads((OUT / "before" / "stats-1seed" / "comparison.json").read_text("utf-8"))
    assert before["code"] == "6648d88" and before["per_task"] is None


def test_the_reference_record_is_the_reference_modules_source():
    stored = json.loads((OUT / "after" / "reference" / "clrs-row.json").read_text("utf-8"))
    today = records.reference("tiny")
    assert {k: v for k, v in today.items() if k != "code"} == {
        k: v for k, v in stored.items() if k != "code"
    }


def test_the_selection_record_reads_the_run_database(tmp_path):
    # A copy of a committed classify search (opened read-only; a copy keeps results/ free of
    # sqlite's side files), read again through the run database's own API.
    from spark_jax.search.rundb import RunDB

    source = ROOT / "results" / "families" / "data" / "breast_cancer-mlp" / "run.db"
    (tmp_path / "run.db").write_bytes(source.read_bytes())
    got = records.selection(tmp_path)
    with RunDB.open(tmp_path / "run.db") as db:
        meta = {k: db.get_meta(k) for k in ("fitness_source", "data", "final_test")}
        candidates = [
            e["ood_score"]
            for e in db.evaluations()
            if e["proposal_attempt"] is not None and e["status"] == "ok"
        ]
    assert got["fitness_source"] == meta["fitness_source"] == "ood_val"
    assert got["selection_split"] == {"name": "validation", "examples": meta["data"]["n_val"]}
    best = [p for p in meta["final_test"]["programs"].values() if "best" in p["roles"]]
    assert got["best_candidate"]["selection_score"] == max(candidates)
    assert got["best_candidate"]["test_score"] == best[0]["evaluation"]["ood_score"]
