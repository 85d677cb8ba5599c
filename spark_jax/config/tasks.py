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


# Each task's outputs (name, location, type) and its number of hints, as in `clrs.SPECS`
# (checked against it by tests/test_bridge.py): the prompts tell the editor what is decoded.
TASK_OUTPUTS: dict[str, tuple[tuple[tuple[str, str, str], ...], int]] = {
    "articulation_points": ((("is_cut", "node", "mask"),), 13),
    "activity_selector": ((("selected", "node", "mask"),), 4),
    "bellman_ford": ((("pi", "node", "pointer"),), 3),
    "bfs": ((("pi", "node", "pointer"),), 2),
    "binary_search": ((("return", "node", "mask_one"),), 4),
    "bridges": ((("is_bridge", "edge", "mask"),), 12),
    "bubble_sort": ((("pred", "node", "should_be_permutation"),), 3),
    "dag_shortest_paths": ((("pi", "node", "pointer"),), 11),
    "dfs": ((("pi", "node", "pointer"),), 10),
    "dijkstra": ((("pi", "node", "pointer"),), 5),
    "find_maximum_subarray_kadane": (
        (("start", "node", "mask_one"), ("end", "node", "mask_one")),
        7,
    ),
    "floyd_warshall": ((("Pi", "edge", "pointer"),), 4),
    "graham_scan": ((("in_hull", "node", "mask"),), 7),
    "heapsort": ((("pred", "node", "should_be_permutation"),), 7),
    "insertion_sort": ((("pred", "node", "should_be_permutation"),), 3),
    "jarvis_march": ((("in_hull", "node", "mask"),), 7),
    "kmp_matcher": ((("match", "node", "mask_one"),), 10),
    "lcs_length": ((("b", "edge", "categorical"),), 3),
    "matrix_chain_order": ((("s", "edge", "pointer"),), 4),
    "minimum": ((("min", "node", "mask_one"),), 3),
    "mst_kruskal": ((("in_mst", "edge", "mask"),), 9),
    "mst_prim": ((("pi", "node", "pointer"),), 5),
    "naive_string_matcher": ((("match", "node", "mask_one"),), 4),
    "optimal_bst": ((("root", "edge", "pointer"),), 5),
    "quickselect": ((("median", "node", "mask_one"),), 8),
    "quicksort": ((("pred", "node", "should_be_permutation"),), 5),
    "segments_intersect": ((("intersect", "graph", "mask"),), 5),
    "strongly_connected_components": ((("scc_id", "node", "pointer"),), 12),
    "task_scheduling": ((("selected", "node", "mask"),), 4),
    "topological_sort": ((("topo", "node", "pointer"), ("topo_head", "node", "mask_one")), 8),
}
