"""The 30 CLRS algorithms, known without importing clrs (which pulls in TensorFlow).

`tests/test_bridge.py` checks this list against `clrs.CLRS_30_ALGS_SETTINGS`.
"""

from __future__ import annotations

Spec = tuple[str, str, str]  # (name, location, type) of one input or output, as in clrs.SPECS
TaskIO = tuple[tuple[Spec, ...], tuple[Spec, ...], int]

# The inputs many tasks share: node positions, then a weighted graph (with a source node),
# scalar node features, or a string and its key.
_POS: Spec = ("pos", "node", "scalar")
_GRAPH = (_POS, ("A", "edge", "scalar"), ("adj", "edge", "mask"))
_SOURCE_GRAPH = (_POS, ("s", "node", "mask_one"), ("A", "edge", "scalar"), ("adj", "edge", "mask"))
_STRING = (("string", "node", "mask"), _POS, ("key", "node", "categorical"))


def _scalars(*names: str) -> tuple[Spec, ...]:
    """Node positions and one scalar node feature per name."""
    return (_POS, *((name, "node", "scalar") for name in names))


def _out(name: str, location: str, kind: str) -> tuple[Spec, ...]:
    """A task's one output."""
    return ((name, location, kind),)


_PI = _out("pi", "node", "pointer")  # a shortest-path or search tree's parent pointers
_SORTED = _out("pred", "node", "should_be_permutation")

# Each task's inputs and outputs and its number of hints, in CLRS-30's order, as in
# `clrs.SPECS` (checked against it by tests/test_bridge.py): the prompts say what is decoded.
TASK_IO: dict[str, TaskIO] = {
    "articulation_points": (_GRAPH, _out("is_cut", "node", "mask"), 13),
    "activity_selector": (_scalars("s", "f"), _out("selected", "node", "mask"), 4),
    "bellman_ford": (_SOURCE_GRAPH, _PI, 3),
    "bfs": (_SOURCE_GRAPH, _PI, 2),
    "binary_search": (
        (*_scalars("key"), ("target", "graph", "scalar")),
        _out("return", "node", "mask_one"),
        4,
    ),
    "bridges": (_GRAPH, _out("is_bridge", "edge", "mask"), 12),
    "bubble_sort": (_scalars("key"), _SORTED, 3),
    "dag_shortest_paths": (_SOURCE_GRAPH, _PI, 11),
    "dfs": (_GRAPH, _PI, 10),
    "dijkstra": (_SOURCE_GRAPH, _PI, 5),
    "find_maximum_subarray_kadane": (
        _scalars("key"),
        (("start", "node", "mask_one"), ("end", "node", "mask_one")),
        7,
    ),
    "floyd_warshall": (_GRAPH, _out("Pi", "edge", "pointer"), 4),
    "graham_scan": (_scalars("x", "y"), _out("in_hull", "node", "mask"), 7),
    "heapsort": (_scalars("key"), _SORTED, 7),
    "insertion_sort": (_scalars("key"), _SORTED, 3),
    "jarvis_march": (_scalars("x", "y"), _out("in_hull", "node", "mask"), 7),
    "kmp_matcher": (_STRING, _out("match", "node", "mask_one"), 10),
    "lcs_length": (_STRING, _out("b", "edge", "categorical"), 3),
    "matrix_chain_order": (_scalars("p"), _out("s", "edge", "pointer"), 4),
    "minimum": (_scalars("key"), _out("min", "node", "mask_one"), 3),
    "mst_kruskal": (_GRAPH, _out("in_mst", "edge", "mask"), 9),
    "mst_prim": (_SOURCE_GRAPH, _PI, 5),
    "naive_string_matcher": (_STRING, _out("match", "node", "mask_one"), 4),
    "optimal_bst": (_scalars("p", "q"), _out("root", "edge", "pointer"), 5),
    "quickselect": (_scalars("key"), _out("median", "node", "mask_one"), 8),
    "quicksort": (_scalars("key"), _SORTED, 5),
    "segments_intersect": (_scalars("x", "y"), _out("intersect", "graph", "mask"), 5),
    "strongly_connected_components": (_GRAPH, _out("scc_id", "node", "pointer"), 12),
    "task_scheduling": (_scalars("d", "w"), _out("selected", "node", "mask"), 4),
    "topological_sort": (
        _GRAPH,
        (("topo", "node", "pointer"), ("topo_head", "node", "mask_one")),
        8,
    ),
}

TASKS: tuple[str, ...] = tuple(TASK_IO)


class TaskError(ValueError):
    """Unknown CLRS task."""


def check_task(task: str) -> str:
    """Returns `task` if it is a CLRS-30 algorithm; raises TaskError naming the known ones."""
    if task not in TASKS:
        raise TaskError(f"unknown CLRS task {task!r}; known tasks: {', '.join(TASKS)}")
    return task
