"""Every folder in results/ is a canonical experiment a reader can trust: its README names the
script that regenerates its tables from its data, that script exists, and running it on a copy
of the folder changes nothing (the committed numbers are the generated ones, never typed)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"
FOLDERS = sorted(p for p in RESULTS.iterdir() if p.is_dir()) if RESULTS.is_dir() else []
# The README's regenerate command, in backticks: `python scripts/NAME.py results/FOLDER`.
REGENERATE = re.compile(r"`python (scripts/[\w./-]+\.py) results/([\w.-]+)/?`")
SCRIPT_MENTION = re.compile(r"\bscripts/[\w./-]+\.(?:py|sh)\b")
MARKERS = ("<!-- generated -->", "<!-- end generated -->")


def _regenerate_commands(folder: Path) -> list[str]:
    readme = (folder / "README.md").read_text(encoding="utf-8")
    return [script for script, name in REGENERATE.findall(readme) if name == folder.name]


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def test_there_are_results():
    assert FOLDERS, "results/ holds no experiment"


@pytest.mark.parametrize("folder", FOLDERS, ids=[p.name for p in FOLDERS])
def test_readme_names_existing_scripts_and_a_generated_table(folder):
    readme = folder / "README.md"
    assert readme.is_file(), f"{folder.name}: no README.md"
    text = readme.read_text(encoding="utf-8")
    assert all(text.count(m) >= 1 for m in MARKERS), f"{folder.name}: no generated block"
    assert _regenerate_commands(folder), (
        f"{folder.name}: README names no `python scripts/X.py results/{folder.name}` command"
    )
    for mention in set(SCRIPT_MENTION.findall(text)):
        assert (ROOT / mention).is_file(), f"{folder.name}: README names missing {mention}"


@pytest.mark.parametrize("folder", FOLDERS, ids=[p.name for p in FOLDERS])
def test_regenerating_the_tables_changes_nothing(folder, tmp_path):
    copy = tmp_path / folder.name
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("__pycache__"))
    for script in _regenerate_commands(folder):
        done = subprocess.run(
            [sys.executable, str(ROOT / script), str(copy)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=300,
        )
        assert done.returncode == 0, f"{script}: {done.stderr[-2000:]}"
    before, after = _tree(folder), _tree(copy)
    changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    assert not changed, f"{folder.name}: regenerating changed {changed}"
