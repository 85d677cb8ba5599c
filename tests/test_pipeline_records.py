"""A search and a proposal-only run on the tiny preset store the same records as when the
golden digests were written (issue 52 item 3: one pipeline for both, behaviour unchanged).

Each scenario of `pipeline_records.SCENARIOS` but the trained one (an offline editor; the
search's candidates scored by their hash, so no floating point of training enters) runs in a
temporary folder; every table of its run database, without timestamps, durations and the
machine, must hash as in tests/golden/pipeline_records.json. On a mismatch the dump is left
in the test's folder: diff it with `python tests/pipeline_records.py OUT NAME` run on the
commit that wrote the golden file. A deliberate change of what a run stores rewrites that
file with `python tests/test_pipeline_records.py`.
"""

from __future__ import annotations

import json
import pathlib

import pipeline_records
import pytest

GOLDEN = pathlib.Path(__file__).resolve().parent / "golden" / "pipeline_records.json"
FAST = ("search_scripted", "proposal_only_spark", "proposal_only_openevolve")


@pytest.mark.parametrize("name", FAST)
def test_run_records_are_unchanged(name, tmp_path):
    dumped = pipeline_records.run_scenario(name)
    found = pipeline_records.digests(dumped)
    expected = json.loads(GOLDEN.read_text(encoding="utf-8"))[name]
    if found != expected:
        out = tmp_path / f"{name}.json"
        out.write_text(json.dumps(dumped, indent=1, sort_keys=True, default=str) + "\n")
        changed = sorted(t for t in {*found, *expected} if found.get(t) != expected.get(t))
        pytest.fail(f"{name}: tables {changed} differ from {GOLDEN.name}; this run's: {out}")
    assert found["proposals"]["rows"] > 0 and found["llm_calls"]["rows"] > 0


def _write_golden() -> None:
    golden = {name: pipeline_records.digests(pipeline_records.run_scenario(name)) for name in FAST}
    GOLDEN.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n", encoding="utf-8")


if __name__ == "__main__":
    _write_golden()
