"""The record of what answered a real-model results folder: the sessions of agents in its
`answerers.yaml`, every LLM call its run databases hold (method, search seed, attempt, role,
answer length, wall time, when), each call's session and flags, and what a folder's label may
claim about the model.

A call is flagged as possibly built with tools rather than written when
  - `fast`: its answer came faster than the bound the channel's brief states
    (scripts/llm_model_brief.md: `Answer-speed bound`), characters over the call's wall time.
    Older records hold only the call's wall time, which includes the wait in the queue, so the
    speed is a lower bound and the flags a minimum;
  - `reported`: the session's agents reported building answers of that role with tools
    (`tool_built` in answerers.yaml).
"""

from __future__ import annotations

import csv
import dataclasses
import datetime
import io
import pathlib
import re
import sqlite3

import yaml

from spark_jax.llm.channel import chars_per_s, read_brief

REPO = pathlib.Path(__file__).resolve().parents[2]
BRIEF = REPO / "scripts" / "llm_model_brief.md"
CSV_FIELDS = (
    "method", "seed", "attempt", "role", "recorded_utc", "session", "agents", "brief",
    "chars", "call_s", "chars_per_s", "flags",
)  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Session:
    name: str
    start: float
    end: float
    agents: tuple[str, ...]
    brief: str
    version: str  # the brief's version ('not recorded' where the record does not say)
    launch: str
    reported: str
    tool_built: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Call:
    method: str
    seed: int
    attempt: int
    role: str
    at: float
    chars: int
    call_s: float
    session: Session | None
    flags: tuple[str, ...]

    @property
    def speed(self) -> float:
        return chars_per_s(self.chars, self.call_s)


def _epoch(text: str) -> float:
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def _utc(epoch: float) -> str:
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M:%S"
    )


def load_answerers(folder: pathlib.Path) -> tuple[str, list[Session]]:
    path = folder / "answerers.yaml"
    if not path.is_file():
        raise SystemExit(f"{folder}: no answerers.yaml (the sessions of agents that answered)")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    try:
        sessions = [
            Session(
                s["name"],
                _epoch(s["start"]),
                _epoch(s["end"]),
                tuple(s["agents"]),
                s["brief"],
                str(s["version"]),
                s["launch"],
                " ".join(str(s["reported"]).split()),
                tuple(s["tool_built"]),
            )  # fmt: skip
            for s in data["sessions"]
        ]
        kind = " ".join(str(data["kind"]).split())
    except (KeyError, TypeError, ValueError) as e:
        raise SystemExit(f"{path}: bad session record ({e})") from e
    return kind, sessions


def query(path: pathlib.Path, sql: str, params: tuple = ()) -> list[tuple]:
    """The rows of one query on a stored run database, opened read-only and immutable (a
    committed record: no side files are written beside it)."""
    con = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


def run_dbs(folder: pathlib.Path) -> list[tuple[str, int, pathlib.Path]]:
    """(method, search seed, run.db) of every recorded search of the folder."""
    found = sorted(folder.glob("record/*/*/seed-*/run.db")) + sorted(
        folder.glob("data/*/seed-*/run.db")
    )
    return [(p.parents[1].name, int(p.parent.name.split("-")[1]), p) for p in found]


_CHANNEL_LABEL = re.compile(
    r": agent (?P<agent>\S+), brief (?P<version>.+?) \(sha256 (?P<sha>[0-9a-f]+)\), answered in "
    r"(?P<seconds>[0-9.]+) s"
)


def _recorded_session(model: str, at: float) -> tuple[Session, float, bool] | None:
    """The session a call names itself (the queue channel's record in its model label:
    spark_jax/llm/channel.py): its answerer, brief, answer time and speed flag."""
    found = _CHANNEL_LABEL.search(model or "")
    if not found:
        return None
    version = found["version"]
    session = Session(
        f"agent {found['agent']}, brief {version}", at, at, (found["agent"],),
        f"version {version} (sha256 {found['sha']})", version, "recorded per call",
        "recorded per call", (),
    )  # fmt: skip
    return session, float(found["seconds"]), "FASTER than" in model


def read_calls(folder: pathlib.Path, sessions: list[Session], bound: float) -> list[Call]:
    """Every recorded LLM call. A call whose record names its answerer (the channel's label)
    is its own session, flagged as the channel flagged it (the answer's own time, claim to
    answer); an older call goes to the session its time falls in, its speed over the call's
    wall time."""
    calls = []
    for method, seed, path in run_dbs(folder):
        rows = query(
            path,
            "SELECT attempt, role, response, latency_s, created_at, model FROM llm_calls "
            "WHERE is_llm = 1 ORDER BY attempt, id",
        )
        for attempt, role, response, latency, at, model in rows:
            chars, flags = len(response or ""), []
            recorded = _recorded_session(model, at)
            if recorded:
                session, seconds, fast = recorded
            else:
                session = next((s for s in sessions if s.start <= at < s.end), None)
                seconds, fast = latency or 0.0, chars_per_s(chars, latency or 0.0) > bound
            if fast:
                flags.append("fast")
            if session and role in session.tool_built:
                flags.append("reported")
            calls.append(
                Call(method, seed, attempt, role, at, chars, seconds, session, tuple(flags))
            )
    return calls


def flagged(calls: list[Call]) -> dict[tuple[str, int], set[int]]:
    out: dict[tuple[str, int], set[int]] = {}
    for c in calls:
        if c.flags:
            out.setdefault((c.method, c.seed), set()).add(c.attempt)
    return out


def answers_csv(calls: list[Call]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_FIELDS)
    for c in calls:
        s = c.session
        w.writerow([
            c.method, c.seed, c.attempt, c.role, _utc(c.at),
            s.name if s else "outside every recorded session",
            " ".join(s.agents) if s and s.agents else "not recorded",
            s.brief if s else "not recorded", c.chars, f"{c.call_s:.1f}", f"{c.speed:.0f}",
            " ".join(c.flags),
        ])  # fmt: skip
    return buf.getvalue()


def versions(calls: list[Call]) -> str:
    """'version 1', 'versions 1 and 2' (with the calls whose version is not recorded)."""
    known = sorted({c.session.version for c in calls if c.session} - {"not recorded"})
    words = ("version " if len(known) == 1 else "versions ") + " and ".join(known)
    unknown = sum(1 for c in calls if not c.session or c.session.version == "not recorded")
    return words + (f" ({unknown} calls under a version not recorded)" if unknown else "")


def agent_names(calls: list[Call]) -> list[str]:
    """The agents of the sessions the calls fall in, in natural order (m6 before m10)."""
    names = {a for c in calls if c.session for a in c.session.agents}
    return sorted(
        names, key=lambda a: (a.rstrip("0123456789"), int(a[len(a.rstrip("0123456789")) :] or 0))
    )


def ranges(values: list[int]) -> str:
    out, start = [], None
    for i, v in enumerate(values):
        if start is None:
            start = v
        if i + 1 == len(values) or values[i + 1] != v + 1:
            out.append(f"{start}" if start == v else f"{start}-{v}")
            start = None
    return ", ".join(out)


# -- what a label may claim ------------------------------------------------------------------
_MODEL_NAMES = re.compile(
    r"\b(gpt[-\w.]*|claude[-\w.]*|qwen[-\w.]*|deepseek[-\w.]*|llama[-\w.]*|gemini[-\w.]*"
    r"|mistral[-\w.]*|general-purpose LLM)\b",
    re.IGNORECASE,
)


def label_problems(label: str, folder: pathlib.Path) -> list[str]:
    """What a folder's label claims about the model that its records do not show (empty when
    none): a model named that no call record or answerers.yaml names; an answerer described as
    a stateless call or as reading the prompt text only, when the record shows agents with a
    shell and memory across prompts; agents other than the sessions' that answered; a
    flagged-attempt count other than the data's."""
    kind, sessions = load_answerers(folder)
    calls = read_calls(folder, sessions, read_brief(BRIEF).bound_chars_per_s)
    recorded = " ".join([kind, *recorded_models(folder)]).lower()
    problems = []
    for name in _MODEL_NAMES.findall(label):
        if name.lower() not in kind.lower():
            problems.append(f"names a model the account does not show: {name!r}")
        elif name.lower() not in recorded:
            problems.append(f"names a model no record shows: {name!r}")
    for claim in ("prompt text only", "no memory", "from its text alone"):
        if claim in label.lower():
            problems.append(f"claims '{claim}', which the agents' reports contradict")
    if re.search(r"(?<!not )stateless", label, re.IGNORECASE):
        problems.append("claims stateless calls; the answerers kept memory across prompts")
    for needed in ("language-model agents", "shell", "memory across prompts"):
        if needed not in label:
            problems.append(f"does not say what answered ({needed!r})")
    agents = set(agent_names(calls))
    named = set(re.findall(r"\b[mt]\d+\b", label))
    spans = re.findall(r"\b([mt])(\d+)-[mt]?(\d+)\b", label)
    for prefix, lo, hi in spans:
        named |= {f"{prefix}{i}" for i in range(int(lo), int(hi) + 1)}
    if named and not named <= agents | {a for s in sessions for a in s.agents}:
        problems.append(f"names agents the record does not: {sorted(named - agents)}")
    n_flag = sum(len(v) for v in flagged(calls).values())
    said = re.search(r"(\d+) of (\d+) attempts flagged", label)
    if said and int(said.group(1)) != n_flag:
        problems.append(f"says {said.group(1)} attempts flagged; the data gives {n_flag}")
    return problems


def recorded_models(folder: pathlib.Path) -> set[str]:
    """Every model label the folder's LLM calls record."""
    out = set()
    for _, _, path in run_dbs(folder):
        out |= {m for (m,) in query(path, "SELECT DISTINCT model FROM llm_calls") if m}
    return out
