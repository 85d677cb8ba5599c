"""What a benchmark runs: programs x tasks x seeds, resolved from the command line's words.

A program is a candidate file, a search's run directory (its `best/best_program.py`), or
`official:KIND` (DeepMind's Haiku processor, trained the same way). Tasks are CLRS task names,
or `clrs10` (the paper's representative 10-task set) or `clrs30` (all 30).

A run directory, or the `best/best_program.py` inside one, carries the training seeds its
search used (`BenchmarkProgram.search_seeds`, read from its run.db), so that the benchmark
trains it with other seeds (`seeds.check_disjoint`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import pathlib
from typing import Sequence

from spark_jax import families
from spark_jax import program as program_lib
from spark_jax.benchmark import seeds as seeds_lib
from spark_jax.config import tasks as tasks_lib
from spark_jax.config.protocol import ConfigError

__all__ = [
    "CLRS10",
    "BenchmarkJob",
    "BenchmarkProgram",
    "PlanError",
    "expand_tasks",
    "plan_jobs",
    "resolve_program",
]

# The paper's representative 10-task comparison, in its column order.
CLRS10: tuple[str, ...] = (
    "dfs",
    "articulation_points",
    "quickselect",
    "strongly_connected_components",
    "activity_selector",
    "find_maximum_subarray_kadane",
    "dijkstra",
    "lcs_length",
    "minimum",
    "topological_sort",
)
TASK_SETS = {"clrs10": CLRS10, "clrs30": tasks_lib.TASKS}


class PlanError(ConfigError):
    """A program, task or seed argument that cannot be benchmarked; the message names it."""


@dataclasses.dataclass(frozen=True)
class BenchmarkProgram:
    """One program of a benchmark.

    Attributes:
      label: how tables name it ('official:triplet_gmpnn', 'mpnn', 'dfs-2026...:best').
      key: identity in the benchmark database (the source's hash, or the official label), so a
        resumed benchmark recognises a program even if its file moved.
      source: the program text ('' for an official processor).
      program_name: `Program.name`, or the official label.
      origin: where it came from (a path or the official label).
      search_seeds: the training seeds of the search that selected it (a run directory's
        program; () for a file or an official processor).
    """

    label: str
    key: str
    source: str
    program_name: str
    origin: str
    search_seeds: tuple[int, ...] = ()

    @property
    def official(self) -> bool:
        return self.program_name.startswith(program_lib.OFFICIAL_PREFIX)


@dataclasses.dataclass(frozen=True)
class BenchmarkJob:
    """One (program, task, seed) evaluation; `job_id` is unique within a benchmark."""

    program: BenchmarkProgram
    task: str
    seed: int

    @property
    def job_id(self) -> str:
        return f"{self.program.key}|{self.task}|{self.seed}"


def resolve_program(word: str) -> BenchmarkProgram:
    """The program a command-line word names; raises PlanError naming the word."""
    if word.startswith(program_lib.OFFICIAL_PREFIX):
        kind = word[len(program_lib.OFFICIAL_PREFIX) :]
        if kind not in program_lib.OFFICIAL_KINDS:
            raise PlanError(
                f"{word}: unknown official processor; known kinds: {', '.join(program_lib.OFFICIAL_KINDS)}"
            )
        return BenchmarkProgram(word, word, "", word, word)
    path = pathlib.Path(word)
    label, run_dir = path.stem, _run_dir_of(path)
    if path.is_dir():
        best = path / "best" / "best_program.py"
        if not best.is_file():
            raise PlanError(f"{word}: a directory without best/best_program.py (not a run dir)")
        label, path, run_dir = f"{path.resolve().name}:best", best, path
    try:
        program = program_lib.read_program(path)
    except program_lib.ProgramError as e:
        raise PlanError(f"{word}: {e}") from None
    key = hashlib.sha256(program.source.encode()).hexdigest()[:16]
    searched = () if run_dir is None else _search_seeds(word, run_dir)
    return BenchmarkProgram(label, key, program.source, program.name, str(path), searched)


def _run_dir_of(path: pathlib.Path) -> pathlib.Path | None:
    """The run directory a `RUN/best/best_program.py` file belongs to (None for others)."""
    run = path.resolve().parent.parent
    inside = path.is_file() and path.resolve().parent.name == "best"
    return run if inside and (run / "run.db").is_file() else None


def _search_seeds(word: str, run_dir: pathlib.Path) -> tuple[int, ...]:
    """The training seeds of the CLRS search in `run_dir`; PlanError naming `word`."""
    try:
        family, found = seeds_lib.run_family(run_dir), seeds_lib.search_seeds(run_dir)
    except ValueError as e:
        raise PlanError(f"{word}: {e}") from None
    if family not in families.names() or not getattr(
        families.get(family), "remeasure_command", None
    ):  # a family whose runs this benchmark re-measures: CLRS's processors
        raise PlanError(
            f"{word}: the best program of a {family!r} search; benchmark trains CLRS processors"
        )
    return found


def expand_tasks(words: Sequence[str]) -> tuple[str, ...]:
    """Task names from names and set names (comma-separated or separate words), in order,
    without repeats; raises PlanError naming an unknown one."""
    out: list[str] = []
    for word in words:
        for name in filter(None, (w.strip() for w in word.split(","))):
            names = TASK_SETS.get(name, (name,))
            for task in names:
                try:
                    tasks_lib.check_task(task)
                except tasks_lib.TaskError:
                    raise PlanError(
                        f"unknown task {task!r}; tasks: {', '.join(tasks_lib.TASKS)}, or "
                        f"{' / '.join(TASK_SETS)}"
                    ) from None
                if task not in out:
                    out.append(task)
    if not out:
        raise PlanError("no tasks given")
    return tuple(out)


def plan_jobs(
    programs: Sequence[BenchmarkProgram], tasks: Sequence[str], seeds: Sequence[int]
) -> tuple[BenchmarkJob, ...]:
    """Every (program, task, seed), task-major so that early results cover every program."""
    if len({p.key for p in programs}) != len(programs):
        raise PlanError("the same program was given twice")
    labels = [p.label for p in programs]
    if len(set(labels)) != len(labels):
        raise PlanError(f"two programs share a label: {labels}")
    return tuple(BenchmarkJob(p, t, s) for t in tasks for s in seeds for p in programs)
