"""Pipeline figure of `spark-jax perf`: how busy the evaluator stays while an LLM proposes.

A real search runs with 2 evaluations in flight and one local worker, against the loopback
OpenAI-compatible server (a real HTTP server on 127.0.0.1) that answers every role after
`llm_delay_s` — route and directive by rule, edit with a real scoped catalogue transform of
the parent it was shown. LLM latency per proposal (3 calls) is kept below the training time,
as in the target's condition. Busy fraction = time the worker spent running candidate jobs /
wall time from the seed's result (when proposing starts, the evaluator idle) to the last
candidate's result; the first proposal's LLM latency is thus counted as idle. Target >= 0.9.
"""

from __future__ import annotations

import re
import tempfile
from typing import Any

from spark_jax.config import assets
from spark_jax.config import search as search_config
from spark_jax.llm.loopback import LoopbackServer, Reply
from spark_jax.operator.offline.roles import CatalogueEditor, NoApplicableTransform
from spark_jax.search import loop as search
from spark_jax.search.preflight import PREFLIGHT_PROMPT
from spark_jax.search.rundb import RunDB


def _loopback_responder(seed: int):
    editor = CatalogueEditor(seed)
    turn = {"n": 0}

    def respond(body) -> Reply:
        text = body["messages"][-1]["content"]
        if text == PREFLIGHT_PROMPT:  # the search's one connectivity check
            return Reply("OK")
        if text.startswith("# Architecture Scope Router"):
            turn["n"] += 1
            return Reply("FACTOR: " + ("ACTION" if turn["n"] % 2 else "OPERATOR"))
        if text.startswith("# Refinement Compass"):
            return Reply("Refine the selected region conservatively and keep all shapes.")
        factor = re.search(r"Change ONLY the lines inside the (\w+) region", text).group(1)
        start = text.index("```python\n", text.index("## Parent program")) + len("```python\n")
        parent = text[start : text.index("\n```", start)] + "\n"
        try:
            child = editor.edit(parent, factor).source
        except NoApplicableTransform:
            child = parent
        return Reply(f"```python\n{child}```")

    return respond


def pipeline_config(
    task: str, candidates: int, train_steps: int, seed: int, base_url: str
) -> search_config.SearchConfig:
    """The pipeline search's config, validated by the config loader like a user's YAML."""
    return search_config.from_dict(
        dict(
            task=task,
            preset="tiny",
            protocol=dict(train_steps=train_steps, eval_every=10),
            seed=seed,
            budget=candidates + 1,
            max_attempts=4 * candidates,
            seed_program=str(assets.seed_program_path("mpnn")),
            editor=dict(
                kind="llm",
                llm=dict(
                    kind="openai",
                    base_url=base_url,
                    model="loopback",
                    api_key_env=None,
                    timeout_s=60.0,
                ),
            ),
            executor=dict(kind="local", num_workers=1, in_flight=2),
        )
    )


def bench_pipeline(
    task: str = "bfs",
    candidates: int = 6,
    llm_delay_s: float = 1.0,
    train_steps: int = 40,
    seed: int = 0,
) -> dict[str, Any]:
    """Runs the pipeline measurement; returns the figures."""
    with (
        LoopbackServer(responder=_loopback_responder(seed), delay_s=llm_delay_s) as server,
        tempfile.TemporaryDirectory(prefix="spark-pipeline-") as tmp,
    ):
        cfg = pipeline_config(task, candidates, train_steps, seed, server.base_url)
        search.run_search(cfg, f"{tmp}/run", command=["bench", "pipeline"])
        with RunDB.open(f"{tmp}/run/{search.DB_NAME}") as db:
            proposals = db.proposals()
            all_evals = db.evaluations()
            evals = [
                e for e in all_evals if e["proposal_attempt"] is not None and e["status"] == "ok"
            ]
            calls = db.llm_calls()
    if not evals:
        raise RuntimeError("pipeline bench: no candidate was evaluated")
    start = min(e["created_at"] for e in all_evals if e["proposal_attempt"] is None)
    end = max(e["created_at"] for e in evals)
    busy = sum(e["wall_seconds"] for e in evals)
    llm_per_proposal = sum(c["latency_s"] or 0.0 for c in calls) / max(len(proposals), 1)
    train_per_candidate = busy / len(evals)
    return dict(
        candidates=len(evals),
        attempts=len(proposals),
        wall_s=end - start,
        evaluator_busy_s=busy,
        busy_fraction=busy / (end - start),
        llm_latency_per_proposal_s=llm_per_proposal,
        evaluation_per_candidate_s=train_per_candidate,
        condition_llm_below_train=llm_per_proposal < train_per_candidate,
    )
