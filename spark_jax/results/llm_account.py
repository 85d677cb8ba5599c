"""The account of the stand-in model of a real-model results folder (results/llm-reliability,
results/llm-trained): who answered, under which brief, which answers may have been built with
tools, and the tables with and without them.

Reads the folder's `answerers.yaml` (the sessions of agents that answered the queue, from the
folder's agent_launch.md, model brief and agent_reports.md: agents, brief and rules in force,
what they reported doing) and every call its run databases record; each call goes to the
session its time falls in (`llm_calls`). No model is available to answer the flagged attempts
again, so the folder's tables are given with and without them.

`regenerate` writes the folder's `answers.csv` (one row per call: the record of what answered
it) and rewrites in its README the `**Label.**` and `**Answer.**` paragraphs after the marks
and the block between ACCOUNT_BEGIN and ACCOUNT_END; with `check` it writes nothing and says
whether any of them differs from what the data gives.
"""

from __future__ import annotations

import argparse
import pathlib
from typing import Any

from spark_jax.llm.channel import read_brief
from spark_jax.results.llm_account_lines import ACCOUNT_BEGIN, ACCOUNT_END, ANSWER_MARK, LABEL_MARK
from spark_jax.results.llm_calls import (
    BRIEF,
    Call,
    answers_csv,
    label_problems,
    load_answerers,
    read_calls,
)
from spark_jax.results.llm_reliability_account import reliability_account
from spark_jax.results.llm_trained_account import trained_account
from spark_jax.util import markdown


def _replace_paragraph(text: str, mark: str, field: str, body: str) -> str:
    if mark not in text:
        raise SystemExit(f"README has no {mark}")
    start = text.index(mark) + len(mark) + 1
    if not text.startswith(f"**{field}.**", start):
        raise SystemExit(f"{mark} is not followed by the **{field}.** paragraph")
    stop = text.find("\n\n", start)
    return text[:start] + f"**{field}.** {body}" + text[stop if stop >= 0 else len(text) :]


def account(folder: pathlib.Path) -> tuple[dict[str, Any], list[Call]]:
    """The account's parts (label, answer, block) and every recorded call of the folder."""
    kind, sessions = load_answerers(folder)
    bound = read_brief(BRIEF).bound_chars_per_s
    calls = read_calls(folder, sessions, bound)
    if not calls:
        raise SystemExit(f"{folder}: no recorded LLM call")
    make = trained_account if (folder / "data").is_dir() else reliability_account
    return make(folder, kind, sessions, calls, bound), calls


def render(folder: pathlib.Path) -> tuple[str, str]:
    """The README and answers.csv as the data gives them."""
    parts, calls = account(folder)
    text = (folder / "README.md").read_text(encoding="utf-8")
    problems = label_problems(parts["label"], folder)
    if problems:
        raise SystemExit(f"{folder}: the generated label " + "; ".join(problems))
    text = _replace_paragraph(text, LABEL_MARK, "Label", parts["label"])
    text = _replace_paragraph(text, ANSWER_MARK, "Answer", parts["answer"])
    if ACCOUNT_BEGIN not in text or ACCOUNT_END not in text:
        raise SystemExit(f"{folder}/README.md: no {ACCOUNT_BEGIN} ... {ACCOUNT_END} block")
    text = markdown.splice(text, ACCOUNT_BEGIN, ACCOUNT_END, parts["block"])
    return text, answers_csv(calls)


def regenerate(folder: pathlib.Path, check: bool = False) -> list[pathlib.Path]:
    """Write the folder's README.md and answers.csv as the data gives them (with `check`,
    write nothing). Returns the files whose committed text differs from the data's."""
    readme, table = render(folder)
    paths = {folder / "README.md": readme, folder / "answers.csv": table}
    differ = [p for p, t in paths.items() if p.read_text(encoding="utf-8") != t]
    if not check:
        for path, text in paths.items():
            path.write_text(text, encoding="utf-8")
    return differ


def main(argv: list[str] | None = None) -> int:
    """`scripts/llm_account.py [--check] FOLDER`: 0 when written or the same, 1 when `--check`
    finds a difference."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=pathlib.Path)
    ap.add_argument("--check", action="store_true", help="compare only; exit 1 on a difference")
    args = ap.parse_args(argv)
    differ = regenerate(args.folder, check=args.check)
    if args.check:
        names = ", ".join(str(p) for p in differ)
        print("differs: " + names if differ else "the account is the same")
        return 1 if differ else 0
    print(f"{args.folder}: README.md and answers.csv written")
    return 0
