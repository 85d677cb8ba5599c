"""The 30 CLRS algorithms, known without importing clrs (which pulls in TensorFlow).

`tests/test_bridge.py` checks this list against `clrs.CLRS_30_ALGS_SETTINGS`.
"""

from __future__ import annotations

TASKS: tuple[str, ...] = (
    "articulation_points",
    "activity_selector",
    "bellman_ford",
    "bfs",
    "binary_search",
    "bridges",
    "bubble_sort",
    "dag_shortest_paths",
    "dfs",
    "dijkstra",
    "find_maximum_subarray_kadane",
    "floyd_warshall",
    "graham_scan",
    "heapsort",
    "insertion_sort",
    "jarvis_march",
    "kmp_matcher",
    "lcs_length",
    "matrix_chain_order",
    "minimum",
    "mst_kruskal",
    "mst_prim",
    "naive_string_matcher",
    "optimal_bst",
    "quickselect",
    "quicksort",
    "segments_intersect",
    "strongly_connected_components",
    "task_scheduling",
    "topological_sort",
)


class TaskError(ValueError):
    """Unknown CLRS task."""


def check_task(task: str) -> str:
    """Returns `task` if it is a CLRS-30 algorithm; raises TaskError naming the known ones."""
    if task not in TASKS:
        raise TaskError(f"unknown CLRS task {task!r}; known tasks: {', '.join(TASKS)}")
    return task


# Each task's inputs and outputs (name, location, type) and its number of hints, as in
# `clrs.SPECS` (checked against it by tests/test_bridge.py): the prompts say what is decoded.
TaskIO = tuple[tuple[tuple[str, str, str], ...], tuple[tuple[str, str, str], ...], int]
TASK_IO: dict[str, TaskIO] = {
    "articulation_points": (
        (("pos", "node", "scalar"), ("A", "edge", "scalar"), ("adj", "edge", "mask")),
        (("is_cut", "node", "mask"),),
        13,
    ),
    "activity_selector": (
        (("pos", "node", "scalar"), ("s", "node", "scalar"), ("f", "node", "scalar")),
        (("selected", "node", "mask"),),
        4,
    ),
    "bellman_ford": (
        (
            ("pos", "node", "scalar"),
            ("s", "node", "mask_one"),
            ("A", "edge", "scalar"),
            ("adj", "edge", "mask"),
        ),
        (("pi", "node", "pointer"),),
        3,
    ),
    "bfs": (
        (
            ("pos", "node", "scalar"),
            ("s", "node", "mask_one"),
            ("A", "edge", "scalar"),
            ("adj", "edge", "mask"),
        ),
        (("pi", "node", "pointer"),),
        2,
    ),
    "binary_search": (
        (("pos", "node", "scalar"), ("key", "node", "scalar"), ("target", "graph", "scalar")),
        (("return", "node", "mask_one"),),
        4,
    ),
    "bridges": (
        (("pos", "node", "scalar"), ("A", "edge", "scalar"), ("adj", "edge", "mask")),
        (("is_bridge", "edge", "mask"),),
        12,
    ),
    "bubble_sort": (
        (("pos", "node", "scalar"), ("key", "node", "scalar")),
        (("pred", "node", "should_be_permutation"),),
        3,
    ),
    "dag_shortest_paths": (
        (
            ("pos", "node", "scalar"),
            ("s", "node", "mask_one"),
            ("A", "edge", "scalar"),
            ("adj", "edge", "mask"),
        ),
        (("pi", "node", "pointer"),),
        11,
    ),
    "dfs": (
        (("pos", "node", "scalar"), ("A", "edge", "scalar"), ("adj", "edge", "mask")),
        (("pi", "node", "pointer"),),
        10,
    ),
    "dijkstra": (
        (
            ("pos", "node", "scalar"),
            ("s", "node", "mask_one"),
            ("A", "edge", "scalar"),
            ("adj", "edge", "mask"),
        ),
        (("pi", "node", "pointer"),),
        5,
    ),
    "find_maximum_subarray_kadane": (
        (("pos", "node", "scalar"), ("key", "node", "scalar")),
        (("start", "node", "mask_one"), ("end", "node", "mask_one")),
        7,
    ),
    "floyd_warshall": (
        (("pos", "node", "scalar"), ("A", "edge", "scalar"), ("adj", "edge", "mask")),
        (("Pi", "edge", "pointer"),),
        4,
    ),
    "graham_scan": (
        (("pos", "node", "scalar"), ("x", "node", "scalar"), ("y", "node", "scalar")),
        (("in_hull", "node", "mask"),),
        7,
    ),
    "heapsort": (
        (("pos", "node", "scalar"), ("key", "node", "scalar")),
        (("pred", "node", "should_be_permutation"),),
        7,
    ),
    "insertion_sort": (
        (("pos", "node", "scalar"), ("key", "node", "scalar")),
        (("pred", "node", "should_be_permutation"),),
        3,
    ),
    "jarvis_march": (
        (("pos", "node", "scalar"), ("x", "node", "scalar"), ("y", "node", "scalar")),
        (("in_hull", "node", "mask"),),
        7,
    ),
    "kmp_matcher": (
        (("string", "node", "mask"), ("pos", "node", "scalar"), ("key", "node", "categorical")),
        (("match", "node", "mask_one"),),
        10,
    ),
    "lcs_length": (
        (("string", "node", "mask"), ("pos", "node", "scalar"), ("key", "node", "categorical")),
        (("b", "edge", "categorical"),),
        3,
    ),
    "matrix_chain_order": (
        (("pos", "node", "scalar"), ("p", "node", "scalar")),
        (("s", "edge", "pointer"),),
        4,
    ),
    "minimum": (
        (("pos", "node", "scalar"), ("key", "node", "scalar")),
        (("min", "node", "mask_one"),),
        3,
    ),
    "mst_kruskal": (
        (("pos", "node", "scalar"), ("A", "edge", "scalar"), ("adj", "edge", "mask")),
        (("in_mst", "edge", "mask"),),
        9,
    ),
    "mst_prim": (
        (
            ("pos", "node", "scalar"),
            ("s", "node", "mask_one"),
            ("A", "edge", "scalar"),
            ("adj", "edge", "mask"),
        ),
        (("pi", "node", "pointer"),),
        5,
    ),
    "naive_string_matcher": (
        (("string", "node", "mask"), ("pos", "node", "scalar"), ("key", "node", "categorical")),
        (("match", "node", "mask_one"),),
        4,
    ),
    "optimal_bst": (
        (("pos", "node", "scalar"), ("p", "node", "scalar"), ("q", "node", "scalar")),
        (("root", "edge", "pointer"),),
        5,
    ),
    "quickselect": (
        (("pos", "node", "scalar"), ("key", "node", "scalar")),
        (("median", "node", "mask_one"),),
        8,
    ),
    "quicksort": (
        (("pos", "node", "scalar"), ("key", "node", "scalar")),
        (("pred", "node", "should_be_permutation"),),
        5,
    ),
    "segments_intersect": (
        (("pos", "node", "scalar"), ("x", "node", "scalar"), ("y", "node", "scalar")),
        (("intersect", "graph", "mask"),),
        5,
    ),
    "strongly_connected_components": (
        (("pos", "node", "scalar"), ("A", "edge", "scalar"), ("adj", "edge", "mask")),
        (("scc_id", "node", "pointer"),),
        12,
    ),
    "task_scheduling": (
        (("pos", "node", "scalar"), ("d", "node", "scalar"), ("w", "node", "scalar")),
        (("selected", "node", "mask"),),
        4,
    ),
    "topological_sort": (
        (("pos", "node", "scalar"), ("A", "edge", "scalar"), ("adj", "edge", "mask")),
        (("topo", "node", "pointer"), ("topo_head", "node", "mask_one")),
        8,
    ),
}
