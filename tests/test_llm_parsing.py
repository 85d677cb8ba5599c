"""Parsers of LLM output on hand-written corner cases."""

from __future__ import annotations

import textwrap

import pytest

from spark_jax.llm._text import split_reasoning
from spark_jax.llm.parsing import extract_program, parse_factor, sanitize_directive


def d(text: str) -> str:
    return textwrap.dedent(text).strip("\n")


# split_reasoning --------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw, answer, reasoning",
    [
        ("plain", "plain", ""),
        ("<think>a</think>b", "b", "a"),
        ("<think>a</think>b<think>c</think>d", "bd", "a\n\nc"),
        ("<THINK>x</THINK> y", "y", "x"),
        ("<thinking>x</thinking>y", "y", "x"),
        ("<think>never closed", "", "never closed"),
        ("answer first <think>then cut", "answer first", "then cut"),
        ("stray prefix reasoning</think>ACTION", "ACTION", "stray prefix reasoning"),
        (None, "", ""),
    ],
)
def test_split_reasoning(raw, answer, reasoning):
    assert split_reasoning(raw) == (answer, reasoning)


# parse_factor -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        # A line holding the token alone (any case, markdown allowed).
        ("OPERATOR", "OPERATOR"),
        ("action", "ACTION"),
        ("**ACTION**", "ACTION"),
        ("  `operator`.", "OPERATOR"),
        # A labelled line whose only content after the label is the token.
        ("FACTOR: ACTION", "ACTION"),
        ("Final answer: operator.", "OPERATOR"),
        ("- **Factor:** `OPERATOR`\nbecause the ACTION ...", "OPERATOR"),
        ("Answer: operator\nfinal factor = ACTION", "ACTION"),
        (
            d("""
        OPERATOR edits could help, but the ACTION side is stuck.
        FACTOR: ACTION
        The operator is fine.
     """),
            "ACTION",
        ),
        # Tokens in prose never count: a parse failure (retry, then the ACTION fallback).
        ("I choose: operator.", None),
        ("Pick OPERATOR, since the action is rarely the bottleneck.", None),
        ("ACTION was tried; now OPERATOR", None),
        ("the operator vs the action", None),
        ("FACTOR: ACTION, because the wiring is stuck", None),
        ("FACTOR: OPERATOR or ACTION", None),
        ("no factor here", None),
        ("", None),
        (None, None),
        ("ACTIONS\noperator-level\naction_space", None),
        # Reasoning never decides.
        ("<think>OPERATOR looks good</think>ACTION", "ACTION"),
        ("<think>FACTOR: OPERATOR</think>The ACTION region.", None),
        ("<think>OPERATOR looks good", None),
        # A labelled line beats a lone token, wherever they are.
        ("FACTOR: OPERATOR\nACTION", "OPERATOR"),
    ],
)
def test_parse_factor(text, expected):
    assert parse_factor(text) == expected


# extract_program --------------------------------------------------------------------


def test_extract_largest_python_block_with_prose():
    text = d("""
        Here is a tiny helper:
        ```python
        x = 1
        ```
        And the full program:
        ```python
        import jax

        def f(x):
            return x + 1
        ```
        Hope this helps!
    """)
    assert extract_program(text) == "import jax\n\ndef f(x):\n    return x + 1\n"


def test_extract_prefers_python_over_other_languages():
    text = (
        "```bash\npip install something-long --with --many --flags\n```\n```py\ndef g(): pass\n```"
    )
    assert extract_program(text) == "def g(): pass\n"


def test_extract_untagged_fence_and_tilde_fence():
    assert extract_program("```\ndef h():\n    return 2\n```") == "def h():\n    return 2\n"
    assert extract_program("~~~python\ny = 3\n~~~") == "y = 3\n"


def test_extract_truncated_unclosed_fence():
    text = d("""
        Sure.
        ```python
        def f(x):
            y = x * 2
            return jnp.maxim
    """)
    assert extract_program(text) == "def f(x):\n    y = x * 2\n    return jnp.maxim\n"


def test_extract_closed_small_then_truncated_large():
    text = (
        "a:\n```python\nz = 0\n```\nfull:\n```python\nimport jax\ndef f():\n    return 1\n    # cut"
    )
    assert extract_program(text) == "import jax\ndef f():\n    return 1\n    # cut\n"


def test_extract_missing_fences_strips_prose():
    text = d("""
        Below is the modified processor.
        import jax.numpy as jnp

        class P:
            def __call__(self, x):
                return jnp.tanh(x)

        This adds a tanh nonlinearity.
    """)
    expected = "import jax.numpy as jnp\n\nclass P:\n    def __call__(self, x):\n        return jnp.tanh(x)\n"
    assert extract_program(text) == expected


def test_extract_indented_fence_and_reasoning():
    text = "<think>```python\nbad = 1\n```</think>\n  ```python\n  def ok():\n      pass\n  ```"
    assert extract_program(text) == "def ok():\n    pass\n"


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "I cannot do that.",
        "```python\n\n```",
        "<think>def f(): pass</think>Sorry.",
        "```python\n```\nno code at all",
    ],
)
def test_extract_nothing(text):
    assert extract_program(text) is None


def test_extract_broken_think_tag():
    text = "lots of thinking def nope(): ...</think>\n```python\nv = 1\n```"
    assert extract_program(text) == "v = 1\n"


# sanitize_directive -----------------------------------------------------------------


def test_sanitize_strips_code_and_reasoning():
    text = d("""
        <think>They failed on shapes, I should tell them def foo()</think>
        **Directive:** Add a gated residual around the triplet messages
        and keep hidden size fixed.
        ```python
        def gate(x):
            return jax.nn.sigmoid(x) * x
        ```
        import flax.linen as nn
        h = nn.Dense(128)(x)
        return h
        Use `max` aggregation   with a mean mixer.
    """)
    assert sanitize_directive(text) == (
        "Add a gated residual around the triplet messages and keep hidden size fixed. "
        "Use `max` aggregation with a mean mixer."
    )


def test_sanitize_unclosed_fence_and_code_lines():
    text = "Normalize messages before aggregation.\n```python\ndef f(x):\n    return x"
    assert sanitize_directive(text) == "Normalize messages before aggregation."
    text = (
        "class Foo(nn.Module):\n@nn.compact\nfor i in range(3):\n)\nKeep it simple: fewer layers."
    )
    assert sanitize_directive(text) == "Keep it simple: fewer layers."


def test_sanitize_keeps_prose_with_equals():
    text = "Set the hidden size = 128 (double it) and compare a == b checks."
    assert sanitize_directive(text) == text


def test_sanitize_cuts_at_sentence_boundary_and_keeps_backticks():
    text = (
        "Gate the messages of `self.m_e` with `adj_mat` before the max. "
        "Keep `self.o1` and `self.o2` as they are. "
        "Then widen the hidden layer of the message MLP considerably, to twice its width."
    )
    first_two = text[: text.index("Then") - 1]
    assert sanitize_directive(text, max_chars=len(first_two) + 20) == first_two
    assert sanitize_directive(text, max_chars=len(first_two)) == first_two
    assert sanitize_directive(text, max_chars=len(first_two) - 1) == text[: text.index("Keep") - 1]
    # One sentence longer than the cap: the last word boundary, and no open code span.
    out = sanitize_directive("Use `self.m_1` and `self.m_2` in the message sum", max_chars=24)
    assert out == "Use `self.m_1` and" and out.count("`") % 2 == 0


def test_sanitize_length_cap_at_word_boundary():
    text = " ".join(["word"] * 200)
    out = sanitize_directive(text, max_chars=52)
    assert len(out) <= 52 and out.endswith("word") and not out.endswith(" ")
    assert sanitize_directive("x" * 100, max_chars=10) == "x" * 10
    with pytest.raises(ValueError):
        sanitize_directive("a", max_chars=0)


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "   \n ",
        "<think>only thinking</think>",
        "```python\nx = f(1)\n```",
        "import os\nreturn 1",
    ],
)
def test_sanitize_empty(text):
    assert sanitize_directive(text) == ""
