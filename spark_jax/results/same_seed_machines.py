"""One smoke training, the same program, task, preset and seed, on two machines: does it give
the same figures? results/same-seed-machines.

`run` trains our port (`processors/triplet_gmpnn.py`) on dfs at the `smoke` preset with
seeds 0, 1 and 2, each one `spark-jax evaluate` in its own process, at this checkout's commit
or at a given commit (a temporary git worktree, the same environment), and writes
OUT/data/<commit>.json with this machine's label, CPU model and figures. `write` sets each
against the earlier machine's record of the same trainings: the `alone` runs of
`results/bench/seed-modes-dfs-smoke.json` (written by `scripts/seed_modes.py` on another VM
of the same kind, each seed trained alone), and writes OUT/runs.csv and the README's block
and answer. Every number of the README block comes from those files.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence

from spark_jax.results import readme
from spark_jax.util import labels, markdown

ROOT = readme.REPO
EARLIER_NAME = "results/bench/seed-modes-dfs-smoke.json"
EARLIER = ROOT / EARLIER_NAME
EARLIER_NOTE = "earlier-record.json"  # in OUT/data: when EARLIER entered the repository
SEEDS = (0, 1, 2)
TASK, PRESET, PROGRAM = "dfs", "smoke", "processors/triplet_gmpnn.py"
FIGURES = ("ood_score", "val_score", "best_step", "final_loss")
ANSWER_MARK = readme.answer_mark("same_seed")


def _cpu_flags() -> list[str]:
    """The vector extensions XLA's CPU code generation depends on (AVX, AVX2, AVX-512 ...)."""
    flags = labels.cpu_fields().get("flags", "").split()
    return sorted(f for f in flags if f.startswith(("avx", "fma", "amx")))


def _booted_utc() -> str:
    """When this machine booted (Linux: /proc/stat's btime); '' where unknown."""
    try:
        for line in pathlib.Path("/proc/stat").read_text().splitlines():
            if line.startswith("btime "):
                return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(line.split()[1])))
    except OSError:
        pass
    return ""


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()  # fmt: skip


def _train(checkout: pathlib.Path, seed: int, json_out: pathlib.Path) -> dict:
    """One `spark-jax evaluate` of the port at `seed`, run from `checkout`'s spark_jax."""
    env = dict(os.environ, PYTHONPATH=str(checkout))
    argv = [sys.executable, "-m", "spark_jax.cli", "evaluate", str(checkout / PROGRAM),
            "--task", TASK, "--preset", PRESET, "--seed", str(seed), "--json", "--no-progress",
            "--output", str(json_out)]  # fmt: skip
    done = subprocess.run(argv, cwd=checkout, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        tail = " ".join(done.stderr.split()[-40:])
        raise SystemExit(f"evaluate seed {seed} at {checkout} failed ({done.returncode}): {tail}")
    record = json.loads(json_out.read_text())
    return {k: record[k] for k in (*FIGURES, "train_seconds", "machine")}


def run(out: pathlib.Path, commit: str | None) -> pathlib.Path:
    """Trains the three seeds here (at `commit`, or this checkout) into OUT/data/<commit>.json."""
    head = _git("rev-parse", "--short", "HEAD")
    sha = _git("rev-parse", "--short", commit) if commit else head
    (out / "data").mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        checkout = ROOT
        if sha != head:
            checkout = pathlib.Path(tmp) / "tree"
            _git("worktree", "add", "--detach", str(checkout), sha)
        try:
            per_seed = {s: _train(checkout, s, pathlib.Path(tmp) / f"{s}.json") for s in SEEDS}
        finally:
            if checkout != ROOT:
                _git("worktree", "remove", "--force", str(checkout))
    record = dict(
        commit=sha,
        date_utc=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        machine=labels.machine_label(),
        booted_utc=_booted_utc(),
        cpu_model=labels.cpu_label(),
        cpu_flags=_cpu_flags(),
        versions=labels.package_versions(("jax", "jaxlib", "flax", "dm-clrs")),
        task=TASK, preset=PRESET, program=PROGRAM,
        per_seed={str(s): v for s, v in per_seed.items()},
    )  # fmt: skip
    path = out / "data" / f"{sha}.json"
    path.write_text(json.dumps(record, indent=1) + "\n")
    record_earlier(out)
    return path


def record_earlier(out: pathlib.Path) -> pathlib.Path:
    """OUT/data/EARLIER_NOTE: where and when the earlier VM's record entered the repository
    (from git, once, so the table never needs the history)."""
    path = out / "data" / EARLIER_NOTE
    if not path.is_file():
        stamps = _git("log", "--follow", "--format=%h %ct", "--", EARLIER_NAME).splitlines()
        commit, stamp = stamps[-1].split() if stamps else ("", "")
        committed = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(stamp))) if stamp else ""
        note = dict(record=EARLIER_NAME, first_commit=commit, committed_utc=committed)
        path.write_text(json.dumps(note, indent=1) + "\n")
    return path


def _earlier() -> tuple[dict, dict[int, dict]]:
    """The earlier VM's record and its per-seed figures of the seeds trained alone."""
    data = json.loads(EARLIER.read_text())
    assert (data["task"], data["preset"]) == (TASK, PRESET), EARLIER_NAME
    alone = data["runs"]["alone"]["per_seed"]
    return data, {s: r for s, r in zip(data["seeds"], alone, strict=True)}


def _same(a: dict, b: dict) -> bool:
    """Whether two trainings gave the same figures, bit for bit."""
    return all(a[k] == b[k] for k in FIGURES)


def _rows(here: list[dict], earlier: dict[int, dict]) -> tuple[list[list], list[tuple]]:
    """The README table's rows and runs.csv's rows (header first): per seed, the earlier VM's
    figures, then each of this VM's runs and whether it matches them."""
    rows, csv_rows = [], [("machine", "commit", "seed", *FIGURES)]
    for s in SEEDS:
        e = earlier[s]
        csv_rows.append(("earlier VM", "", s, *(e[k] for k in FIGURES)))
        rows.append(["earlier VM (" + EARLIER_NAME + ")", "—", str(s), readme.pct(e["ood_score"]),
                     readme.pct(e["val_score"]), str(e["best_step"]), f"{e['final_loss']:.6f}",
                     "—"])  # fmt: skip
        for h in here:
            r = h["per_seed"][str(s)]
            csv_rows.append(("this VM", h["commit"], s, *(r[k] for k in FIGURES)))
            rows.append([f"this VM ({h['cpu_model'] or 'CPU model not reported'})",
                         f"`{h['commit']}`", str(s), readme.pct(r["ood_score"]),
                         readme.pct(r["val_score"]), str(r["best_step"]),
                         f"{r['final_loss']:.6f}", "yes" if _same(r, e) else "no"])  # fmt: skip
    return rows, csv_rows


def _answer(here: list[dict], earlier: dict[int, dict]) -> str:
    """Whether this VM's runs gave the earlier VM's figures, and whether its runs at several
    commits agree with each other."""
    moved = {s: max(abs(h["per_seed"][str(s)]["ood_score"] - earlier[s]["ood_score"])
                    for h in here) for s in SEEDS}  # fmt: skip
    differ = [s for s in SEEDS if not all(_same(h["per_seed"][str(s)], earlier[s]) for h in here)]
    commits = [h["commit"] for h in here]
    agree = all(
        _same(here[0]["per_seed"][str(s)], h["per_seed"][str(s)]) for h in here[1:] for s in SEEDS
    )
    answer = (
        f"No: trained here, the same program, task, preset and seed gave other figures than on "
        f"the earlier VM for {len(differ)} of {len(SEEDS)} seeds (OOD test moved by up to "
        f"{100 * max(moved.values()):.2f} pp; the final training losses differ too)"
        if differ
        else f"Yes: all {len(SEEDS)} seeds gave the earlier VM's figures bit for bit"
    )
    if len(here) > 1:
        answer += (
            f". Here the runs at commits {', '.join(f'`{c}`' for c in commits)} "
            + (
                "agree bit for bit, so the code between them did not move it"
                if agree
                else "differ from each other"
            )  # fmt: skip
        )
    return answer + (
        ". A smoke training is reproducible on one machine, not across machines: treat a "
        "number from another machine as one more draw of the spread "
        "([chaos-at-smoke](../chaos-at-smoke/README.md)), never as the same run."
        if differ
        else "."
    )


def _machines(here: list[dict]) -> str:
    """This VM's runs: machine, CPU and its vector flags, versions, boot and training time."""
    return "; ".join(
        f"`{h['commit']}`: {h['machine']}, {h['cpu_model'] or 'CPU model not reported'} "
        f"({' '.join(h['cpu_flags']) or 'no AVX flags reported'}), "
        + ", ".join(f"{k} {v}" for k, v in h["versions"].items())
        + f", booted {h.get('booted_utc') or 'at an unknown time'}, trained {h['date_utc']}"
        for h in here
    )  # fmt: skip


def write(out: pathlib.Path) -> list[str]:
    """OUT/runs.csv and the README's generated block and answer, from OUT/data and EARLIER;
    returns the block."""
    earlier_meta, earlier = _earlier()
    runs = sorted(p for p in (out / "data").glob("*.json") if p.name != EARLIER_NOTE)
    here = [json.loads(p.read_text()) for p in runs]
    if not here:
        raise SystemExit(f"{out / 'data'}: no run on this machine yet (--run)")
    rows, csv_rows = _rows(here, earlier)
    with (out / "runs.csv").open("w", newline="") as f:
        csv.writer(f).writerows(csv_rows)
    head = ["machine", "commit", "seed", "OOD test %", "validation %", "best step",
            "final training loss", "same as the earlier VM"]  # fmt: skip
    note = json.loads((out / "data" / EARLIER_NOTE).read_text())
    block = [
        readme.BEGIN,
        f"This VM: {_machines(here)}. The earlier VM: {earlier_meta['machine']}, jax "
        f"{earlier_meta['jax']}, {EARLIER_NAME} first committed in `{note['first_commit']}` "
        f"at {note['committed_utc']} (its CPU model and boot were not recorded).",
        "",
        *markdown.table(head, rows),
        readme.END,
    ]
    readme.rewrite(out / "README.md", block[1:-1], ANSWER_MARK, _answer(here, earlier))
    return block


def main(argv: Sequence[str] | None = None) -> int:
    """`OUT [--run [--commit C]] [--record-earlier]`."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--run", action="store_true", help="train the seeds on this machine")
    parser.add_argument("--commit", help="with --run: train at this commit (a git worktree)")
    parser.add_argument("--record-earlier", action="store_true",
                        help="only write OUT/data/" + EARLIER_NOTE + " (--run writes it too)")  # fmt: skip
    args = parser.parse_args(argv)
    if args.record_earlier:
        print(record_earlier(args.out))
        return 0
    if args.run:
        print(run(args.out, args.commit))
        return 0
    print("\n".join(write(args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
