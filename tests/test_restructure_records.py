"""results/restructure-records' table and answer (spark_jax.results.restructure_records): a
table is the same only when its digest is, a table on one side only is a difference, and the
answer names every one that differs."""

from __future__ import annotations

import copy

import command_records  # tests/command_records.py: what the results folder's data holds

from spark_jax.results import restructure_records as rr


def _side(commit: str, results_sha: str = "a") -> dict:
    tables = {"results": {"rows": 8, "sha256": results_sha}, "meta": {"rows": 4, "sha256": "m"}}
    return dict(commit=commit, machine="vm", scenarios={"benchmark_tiny": {"benchmark.db": tables}})


def test_the_same_digests_answer_yes():
    before, after = _side("aaa"), _side("bbb")
    table = rr.rows(before, after)
    assert [r[-1] for r in table] == ["same", "same"]
    assert rr.answer(before, after, table).startswith("Yes. All 2 tables")


def test_a_changed_or_missing_table_answers_no_and_names_it():
    before, after = _side("aaa"), _side("bbb", results_sha="b")
    after["scenarios"]["benchmark_tiny"]["benchmark.db"].pop("meta")
    extra = copy.deepcopy(after["scenarios"]["benchmark_tiny"])
    after["scenarios"]["compare_tiny"] = extra
    table = rr.rows(before, after)
    by_name = {(r[0], r[2]): r for r in table}
    assert by_name[("benchmark_tiny", "meta")][3:] == ["4", "absent", "DIFFER"]
    assert by_name[("benchmark_tiny", "results")][-1] == "DIFFER"
    assert by_name[("compare_tiny", "results")][3:] == ["absent", "8", "DIFFER"]
    text = rr.answer(before, after, table)
    assert text.startswith("No. 3 of 3 stored tables differ between aaa and bbb")
    assert "benchmark_tiny benchmark.db meta" in text


def test_the_settings_line_says_what_the_stored_records_name():
    dumped = {
        "spark/seed-0": {"run_meta": [{"key": "editor", "value": '"offline"'},
                                      {"key": "preset", "value": '"tiny"'}]},
        "compare.json": {"budget": 2},
    }  # fmt: skip
    bench = {"benchmark.db": {"meta": [{"key": "spec", "value": {"preset": "smoke"}}]}}
    assert command_records.settings(dumped) == {"preset": ["tiny"], "editor": ["offline"]}
    assert command_records.settings(bench) == {"preset": ["smoke"]}
    before, after = _side("aaa"), _side("bbb")
    before["settings"] = {"compare_tiny": {"preset": ["tiny"], "editor": ["offline"]}}
    after["settings"] = {"compare_tiny": {"preset": ["tiny"], "editor": ["llm"]}}
    line = rr.settings_line(before, after)
    assert (
        "preset `tiny`" in line and "editor `llm`, `offline`: LLM editor + offline editor" in line
    )
    assert line.endswith("(the two sides name different settings).")
    offline = rr.settings_line(before, before)
    assert offline == (
        "Settings in the stored records: compare_tiny: preset `tiny`, "
        "editor `offline`: offline rule-based editor (NOT an LLM)."
    )
