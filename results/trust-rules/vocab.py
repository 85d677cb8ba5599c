"""Count baseline prompts carrying SPARK factor vocabulary (via a real loopback server)."""
import asyncio
import pathlib
import types

from spark_jax.config.sections import OperatorConfig
from spark_jax.operator.baselines import make_operator
from spark_jax.operator.editors import LLMEditor, ProgramView, StepContext
from spark_jax.operator.llm import OpenAIBackend
from spark_jax.operator.llm.loopback import LoopbackServer

VOCAB = ("factor-scoped", "Factor-scoped", "an OPERATOR edit", "an ACTION edit", "FACTOR:")
seed = pathlib.Path("processors/mpnn.py").read_text()
report = types.SimpleNamespace(feasible=False, failure_stage="template", failure_type="template", reason="x")
total = hit = 0
plans = {"eoh": ["e1", "e2", "m1", "m2", "m3"]}
for mode in ("openevolve", "openevolve-full", "evoprompting", "funsearch", "eoh"):
    with LoopbackServer(default_reply="no answer") as srv:
        be = OpenAIBackend(srv.base_url, "loopback", api_key_env=None, max_retries=1)
        op = make_operator(LLMEditor(be), lambda c, p, f: report, OperatorConfig(mode=mode))
        op.observe("s", seed, types.SimpleNamespace(ood_score=0.5, macs=1.0), None)
        if mode == "eoh":
            op.plan, op.generation = list(plans["eoh"]), 1
        ctx = StepContext(task="bfs", parent=ProgramView("s", seed, {"ood_score": 0.5}))
        n = 5 if mode == "eoh" else 1
        for k in range(n):
            asyncio.run(op.step(ctx, k))
        prompts = [r.body["messages"][-1]["content"] for r in srv.requests if r.body]
        # one prompt per distinct template
        seen = {}
        for p in prompts:
            seen.setdefault(p, p)
        for p in seen.values():
            total += 1
            bad = [v for v in VOCAB if v in p]
            hit += bool(bad)
            print(mode, "carries" if bad else "clean", bad)
print(f"{hit} of {total} distinct baseline prompts carry SPARK factor vocabulary")
