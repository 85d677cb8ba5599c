"""SPARK's two-step edit: an OPERATOR edit adds a named submodule that nothing calls yet, a
later ACTION edit wires it in. Detection of defined-but-unused submodules on the real seed
processors, its listing in the prompts, and feasibility accepting both steps."""

from __future__ import annotations

import asyncio
import pathlib

import pytest

from spark_jax.llm import LLMBackend, LLMResponse
from spark_jax.operator.editors import LLMEditor, ProgramView, StepContext
from spark_jax.operator.signals import SearchHistory
from spark_jax.operator.two_step import submodule_note, unused_line
from spark_jax.program.submodules import defined_submodules, unused_submodules

ROOT = pathlib.Path(__file__).resolve().parents[1]
SEEDS = sorted((ROOT / "processors").glob("*.py"))
END_OPERATOR = "        # SPARK:END OPERATOR\n"
MAX_LINE = "        msgs = jnp.max(maxarg, axis=1)  # [B, N, H]\n"


def _add_gate(source: str) -> str:
    """Step 1 (OPERATOR): a gate that nothing calls yet."""
    return source.replace(END_OPERATOR, f"        self.gate = linear(h)\n{END_OPERATOR}")


def _wire_gate(source: str) -> str:
    """Step 2 (ACTION): the gate scales the aggregated messages."""
    assert MAX_LINE in source
    return source.replace(
        MAX_LINE, MAX_LINE + "        msgs = msgs * jax.nn.sigmoid(self.gate(z))\n"
    )


@pytest.mark.parametrize("seed", SEEDS, ids=lambda p: p.stem)
def test_seed_processors_define_submodules_and_use_them_all(seed):
    source = seed.read_text()
    assert len(defined_submodules(source)) >= 5
    assert unused_submodules(source) == ()
    gated = _add_gate(source)
    assert defined_submodules(gated)[-1] == "gate" and unused_submodules(gated) == ("gate",)


def test_two_step_edit_is_detected_until_wired():
    seed = (ROOT / "processors" / "mpnn.py").read_text()
    step1 = _add_gate(seed)
    assert unused_submodules(step1) == ("gate",)
    assert unused_submodules(_wire_gate(step1)) == ()


def test_what_counts_as_defined_and_used():
    seed = (ROOT / "processors" / "mpnn.py").read_text()
    extra = (
        "        self.eps = 1e-5\n"  # a constant: not a submodule
        "        self.pre, self.post = linear(h), linear(h)\n"  # tuple targets
        "        self.block = nn.Sequential([self.pre, jax.nn.relu])\n"  # reads self.pre
        "        self.spare: nn.Module = linear(h)\n"
    )
    program = seed.replace(END_OPERATOR, extra + END_OPERATOR)
    assert "eps" not in defined_submodules(program)
    assert unused_submodules(program) == ("post", "block", "spare")
    read = program.replace(MAX_LINE, MAX_LINE + "        _ = getattr(self, 'post')\n")
    assert unused_submodules(read) == ("block", "spare")
    assert unused_submodules("def f(:\n") == () and unused_submodules("x = 1\n") == ()


class _Capture(LLMBackend):
    def __init__(self):
        self.prompts: dict[str, str] = {}

    @property
    def name(self):
        return "capture"

    async def _complete(self, role, prompt, *, system=None):
        self.prompts[role] = prompt
        return LLMResponse(role=role, text="FACTOR: ACTION", backend="capture")


def _prompts(parent_source: str, factor: str) -> dict[str, str]:
    backend = _Capture()
    editor = LLMEditor(backend)
    ctx = StepContext(task="dfs", parent=ProgramView("p0", parent_source, {"ood_score": 0.3}))

    async def go():
        await editor.route(ctx)
        await editor.direct(ctx, factor, SearchHistory(3, 10).signals(factor))
        await editor.edit(ctx, factor, "Gate the messages.")
        return backend.prompts

    return asyncio.run(go())


def test_action_prompts_list_the_unused_submodules():
    step1 = _add_gate((ROOT / "processors" / "mpnn.py").read_text())
    prompts = _prompts(step1, "ACTION")
    for role in ("directive", "edit"):
        assert "defines `self.gate`, which nothing calls yet" in prompts[role], role
        assert "may wire them into the forward computation" in prompts[role], role
    assert "Submodules not called yet: `self.gate`: defined in `setup`" in prompts["route"]
    wired = _prompts(_wire_gate(step1), "ACTION")
    assert "`self.gate`" not in wired["edit"].split("## Parent program")[0]
    assert "no submodule that is still unused" in wired["edit"]


def test_operator_prompts_offer_the_first_step():
    seed = (ROOT / "processors" / "mpnn.py").read_text()
    prompts = _prompts(seed, "OPERATOR")
    for role in ("directive", "edit"):
        assert "may add a NAMED submodule to `setup` that nothing calls yet" in prompts[role]
    assert "first step of a two-step edit" in prompts["directive"]
    assert "already defines `self.gate`" in submodule_note(_add_gate(seed), "OPERATOR")
    assert submodule_note(seed, None) == "" and unused_line(seed).startswith("none")


def test_feasibility_accepts_both_steps(sandbox_worker, check_options):
    from spark_jax.feasibility.checker import check_program

    seed = (ROOT / "processors" / "mpnn.py").read_text()
    step1, step2 = _add_gate(seed), _wire_gate(_add_gate(seed))

    def check(child, parent, factor):
        return check_program(
            child, parent_source=parent, factor=factor, options=check_options, worker=sandbox_worker
        )

    first = check(step1, seed, "OPERATOR")
    assert first.feasible, first.reason
    assert first.entanglement == "operator"
    second = check(step2, step1, "ACTION")
    assert second.feasible, second.reason
    assert second.entanglement == "action" and second.macs > first.macs
    # Wiring a submodule the parent does not define is still rejected.
    rejected = check(_wire_gate(seed), seed, "ACTION")
    assert not rejected.feasible
