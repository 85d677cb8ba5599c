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
