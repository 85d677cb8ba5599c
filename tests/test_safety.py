"""Tests for spark_jax.safety: the static policy check (pure Python, no jax import)."""

from __future__ import annotations

import pathlib
import textwrap

import pytest

from spark_jax.feasibility import policy as safety

PROCESSOR = textwrap.dedent('''\
    """A realistic Flax processor."""
    from __future__ import annotations

    import dataclasses
    import functools
    import math
    from typing import Callable, Optional

    import chex
    import einops
    import flax.linen as nn
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax import lax

    MASKS_NON_EDGES = True
    BIG_NUMBER = 1e6


    def init(key, shape, dtype=jnp.float32):
        return jax.random.truncated_normal(key, -2.0, 2.0, shape, dtype) / math.sqrt(shape[0])


    class Processor(nn.Module):
        """Processor with gating."""
        out_size: int
        activation: Optional[Callable] = jax.nn.relu
        use_ln: bool = False

        def setup(self):
            # SPARK:BEGIN OPERATOR
            self.m_1 = nn.Dense(self.out_size, kernel_init=init)
            self.m_2 = nn.Dense(self.out_size, kernel_init=init)
            self.o = nn.Dense(self.out_size)
            self.ln = nn.LayerNorm()
            # SPARK:END OPERATOR

        def __call__(self, node_fts, edge_fts, graph_fts, adj_mat, hidden):
            # SPARK:BEGIN ACTION
            b, n, _ = node_fts.shape
            assert adj_mat.shape == (b, n, n)
            z = jnp.concatenate([node_fts, hidden], axis=-1)  # [B, N, 2H]
            msgs = self.m_1(z)[:, None, :, :] + self.m_2(z)[:, :, None, :]  # [B, N, N, H]
            msgs = jnp.where(adj_mat[..., None] > 0.5, msgs, -BIG_NUMBER)
            agg = jnp.max(msgs, axis=1)
            out = self.o(agg)
            if self.activation is not None:
                out = self.activation(out)
            if self.use_ln:
                out = self.ln(out)
            out = lax.stop_gradient(out) * 0 + out
            chex.assert_rank(out, 3)
            scale = np.float32(1.0) * functools.reduce(lambda a, c: a * c, [1, 1])
            _ = einops.rearrange(out, 'b n h -> b h n')
            return out * scale, None
            # SPARK:END ACTION

        @property
        def name_hint(self):
            return type(self).__name__ + getattr(self, 'suffix', '')


    @dataclasses.dataclass(frozen=True)
    class Config:
        hidden: int = 128


    def make_processor(out_size, **kwargs):
        return Processor(out_size=out_size, **kwargs)


    if __name__ == '__main__':
        print(make_processor(4))
    ''')


def test_realistic_processor_is_allowed():
    result = safety.check_source_safety(PROCESSOR)
    assert result.ok, result.reason
    assert (result.reason, result.lineno, result.syntax_error) == ("", None, False)


SEEDS = sorted((pathlib.Path(__file__).parents[1] / "processors").glob("*.py"))


@pytest.mark.parametrize("path", SEEDS, ids=[p.stem for p in SEEDS])
def test_seed_processors_are_allowed(path):
    result = safety.check_source_safety(path.read_text())
    assert result.ok, result.reason


# (snippet, substring expected in the reason).
HOSTILE = [
    ("import os", "forbidden import 'os'"),
    ("from os import system", "forbidden import 'os'"),
    ("import subprocess as sp", "forbidden import 'subprocess'"),
    ("import socket", "forbidden import 'socket'"),
    ("import importlib", "forbidden import 'importlib'"),
    ("from importlib import import_module", "forbidden import 'importlib'"),
    ("import jaxlib", "forbidden import 'jaxlib'"),
    ("import os.path", "forbidden import 'os'"),
    ("import pickle, sys", "forbidden import 'pickle'"),
    ("import builtins", "forbidden import 'builtins'"),
    ("import httpx", "forbidden import 'httpx'"),
    ("__import__('os')", "'__import__'"),
    ("open('x', 'w').write('y')", "'open'"),
    ("eval('1 + 1')", "'eval'"),
    ("exec('x = 1')", "'exec'"),
    ("compile('x', 'f', 'exec')", "'compile'"),
    ("f = eval", "'eval'"),
    ("print(globals())", "'globals'"),
    ("v = vars()", "'vars'"),
    ("breakpoint()", "'breakpoint'"),
    ('memoryview(b"x")', "'memoryview'"),
    ("def f(open=None): pass", "'open'"),
    ("().__class__.__bases__[0].__subclasses__()", "dunder attribute '__class__'"),
    ("x = ().__class__", "'__class__'"),
    ("f.__globals__", "'__globals__'"),
    ("getattr(f, '__globals__')", "'__globals__'"),
    ("getattr(f, name)", "non-constant attribute name"),
    ("setattr(f, '__dict__', {})", "'__dict__'"),
    ("g = getattr", "'getattr'"),
    ("__builtins__", "'__builtins__'"),
    ("b = __builtins__['eval']", "'__builtins__'"),
    ("'{0.__class__}'.format(1)", "'__class__'"),
    ("import jax\njax.pure_callback(f, x, y)", "'jax.pure_callback' (host callback)"),
    ("from jax import pure_callback", "'jax.pure_callback' (host callback)"),
    ("from jax.experimental import io_callback", "io_callback"),
    ("import jax.experimental.host_callback as hcb", "host_callback"),
    ("import jax\njax.debug.callback(f)", "'jax.debug.callback' (host callback)"),
    ('import jax\njax.config.update("jax_enable_x64", True)', "'jax.config' (forbidden member)"),
    ("import jax\njax._src.core", "'jax._src"),
    ("from jax import *", "star import"),
    ("from . import sibling", "relative import"),
    ("import numpy as np\nnp.save('w.npy', x)", "'numpy.save' (file IO)"),
    ("import numpy as np\nnp.load('w.npy')", "'numpy.load' (file IO)"),
    ("import numpy as np\nnp.fromfile('w')", "'numpy.fromfile' (file IO)"),
    ("import numpy as np\nm = np.memmap('w')", "'numpy.memmap' (file IO)"),
    ("import numpy as np\nnp.lib.format", "'numpy.lib' (file IO)"),
    ("from numpy import savez", "'numpy.savez' (file IO)"),
    ("import jax.numpy as jnp\njnp.save('w', x)", "'jax.numpy.save' (file IO)"),
    ("x.tofile('w')", "'tofile' (file IO)"),
    ("from flax.training import checkpoints", "checkpoints"),
    ('import flax\nflax.io.GFile("x")', "'flax.io"),
    ("import typing\ntyping.sys.modules", "'typing.sys' (module escape)"),
    ('import operator\noperator.attrgetter("x")', "attrgetter"),
    ("g = (i for i in [])\ng.gi_frame.f_globals", "gi_frame"),
]


@pytest.mark.parametrize("snippet, expected", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_snippets_are_refused(snippet, expected):
    result = safety.check_source_safety(snippet + "\n")
    assert not result.ok
    assert not result.syntax_error
    assert expected in result.reason, result.reason
    assert result.lineno is not None and f"at line {result.lineno}" in result.reason
    assert result.reason == result.violations[0]


def test_reason_names_line():
    result = safety.check_source_safety("import jax\n\nimport os\n")
    assert result.reason == "forbidden import 'os' at line 3"
    assert result.lineno == 3


def test_hostile_code_inside_processor_is_refused():
    line = "        return out * scale, None\n"
    assert PROCESSOR.count(line) == 1
    source = PROCESSOR.replace(line, '        __import__("os").system("rm -rf /")\n' + line)
    result = safety.check_source_safety(source)
    assert not result.ok and "'__import__'" in result.reason


def test_all_violations_are_listed():
    result = safety.check_source_safety("().__class__.__bases__[0].__subclasses__()\n")
    for dunder in ("__class__", "__bases__", "__subclasses__"):
        assert any(repr(dunder) in v for v in result.violations), dunder


def test_violations_are_sorted_by_line():
    result = safety.check_source_safety('x = 1\nimport sys\neval("1")\n')
    assert [v.split(" at line ")[1] for v in result.violations] == ["2", "3"]


@pytest.mark.parametrize("source", ["def f(:\n    pass\n", "x = (1,\n", 'x = "\x00"\n'])
def test_syntax_error_is_flagged(source):
    result = safety.check_source_safety(source)
    assert not result.ok and result.syntax_error
    assert result.reason.startswith("syntax error: ")


def test_custom_allowlist():
    assert not safety.check_source_safety("import einops\n", allowed_modules={"jax"}).ok
    assert safety.check_source_safety("import jax\n", allowed_modules={"jax"}).ok


@pytest.mark.parametrize(
    "snippet",
    [
        "getattr(self, 'suffix', None)",
        "super().__init__()",
        "from collections import abc, namedtuple",
        "import enum, numbers, itertools, operator, abc",
        "import optax",
        "def __hash__(self): return 0",
        'import jax\njax.debug.print("{x}", x=1)',
        "import jax\njax.checkpoint(f)",
        "xs = []\nxs.extend([1])",
    ],
)
def test_benign_snippets_are_allowed(snippet):
    result = safety.check_source_safety(snippet + "\n")
    assert result.ok, result.reason
