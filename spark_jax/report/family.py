"""The run report's section for a task family: paper metrics and reference rows.

A family run stores its family and data record in `run_meta` and each evaluation's metrics in
its evaluation record: on the validation part when the search selected on it (`val_accuracy`,
`val_loss`, `val_return`; `fitness.source: ood_val`, the default), else on the test part (the
paper's names: `accuracy`, `loss`, `test_return`). The test part of the final programs (seed
and best) is in `run_meta['final_test']`. This section prints both, labelled by part, for the
seed and the best evaluated program, then the paper's rows for the same benchmark from
`reference/extra_benchmarks.csv`, labelled with the paper's protocol. A family with its own
`report_section` (CLRS: none, its protocol heads the report) gives that instead.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any, Mapping

from spark_jax import families
from spark_jax.report import reference
from spark_jax.report.accounting import meta_group
from spark_jax.util import markdown

__all__ = ["family_lines", "paper_key"]

_METRIC_COLUMNS = {
    "val_accuracy": "validation accuracy (%)",
    "val_loss": "validation loss",
    "val_return": "validation return",
    "accuracy": "test accuracy (%)",
    "loss": "test loss",
    "test_return": "test return",
    "train_return": "train return",
}
_ORDER = ("val_accuracy", "val_loss", "val_return", "accuracy", "loss", "test_return")


def _own_section(family: str) -> Any:
    """The family's optional `report_section(meta, seed, best)`; None for one without it or
    not installed here (its run database still holds its metrics: the section below)."""
    try:
        return getattr(families.get(family), "report_section", None)
    except ValueError:
        return None


def paper_key(family: str, benchmark: str, seed_program: str | None) -> str | None:
    """The benchmark's key in the paper's table: the family's `paper_keys` (None when it has
    no row, or the family is not installed)."""
    try:
        keys = getattr(families.get(family), "paper_keys", None) or {}
    except ValueError:
        return None
    key = keys.get(benchmark)
    if key is None:
        return None
    return key.format(seed=pathlib.Path(seed_program or "").stem)


def _metrics(row: Mapping[str, Any] | None) -> dict[str, float]:
    if not row or not row.get("evaluation_json"):
        return {}
    return dict(json.loads(row["evaluation_json"]).get("metrics") or {})


def _final_metrics(meta: Mapping[str, Any], program_id: str) -> dict[str, float]:
    """The test-part metrics of a final program (flattened `final_test` meta; {} if none)."""
    prefix = f"final_test.programs.{program_id}.evaluation.metrics."
    return meta_group(meta, prefix)


def _cell(name: str, value: float | None) -> str:
    if value is None:
        return "—"
    return f"{100 * value:.2f}" if name.endswith("accuracy") else f"{value:.4g}"


def _selection_text(meta: Mapping[str, Any], data: Mapping[str, Any]) -> str:
    """Which part the search selected on, and where the test part was scored."""
    source = meta.get("fitness_source") or meta.get("config.fitness.source") or "ood_test"
    if source != "ood_val":
        return (
            "Selection: on the **test** part (`fitness.source: ood_test`, the paper's "
            "protocol); the scores below chose the best program."
        )
    if "val_seed" in data:
        part = f"the validation episodes (`val_seed` {data['val_seed']})"
    else:
        n = data.get("n_val", "?")
        part = f"the validation split ({n} examples, {data.get('val_split', 'from train')})"
    return (
        f"Selection: on {part}, disjoint from the training data and the test part; the "
        "test part was scored only for the final programs (seed and best), after the search."
    )


def family_lines(
    meta: Mapping[str, Any],  # `accounting.read_meta`: flattened to dotted keys
    seed: Mapping[str, Any] | None,
    best: Mapping[str, Any] | None,
) -> list[str]:
    """Markdown lines of the family section ([] for a run that names no family: it predates
    families; the family's own `report_section` where it has one: CLRS's is [])."""
    family = meta.get("family")
    if not family:
        return []
    own = _own_section(str(family))
    if own is not None:
        return list(own(meta, seed, best))
    benchmark = meta.get("task")
    data = {k[5:]: v for k, v in meta.items() if k.startswith("data.")}  # flattened meta
    editor = "offline editor, not an LLM" if meta.get("editor") == "offline" else "LLM editor"
    lines = [
        f"## Task family `{family}`: benchmark `{benchmark}` (preset `{meta.get('preset')}`, "
        f"{editor})",
        "",
        "Fixed data split and seeds (stored in run_meta 'data'): "
        + (", ".join(f"{k}={v}" for k, v in data.items()) or "not recorded")
        + ".",
        "",
        _selection_text(meta, data),
        "",
    ]
    lines += _program_table(meta, [("seed", seed), ("best evaluated candidate", best)])
    key = paper_key(str(family), str(benchmark), meta.get("config.seed_program"))
    return lines + _paper_rows(key)


def _program_table(meta: Mapping[str, Any], pair) -> list[str]:
    """The seed's and the best candidate's selection score, final metrics, MACs and params."""
    found = {
        label: {**_metrics(row), **_final_metrics(meta, row["program_id"])}
        for label, row in pair
        if row is not None
    }
    names = {k for m in found.values() for k in m}
    names = sorted(names, key=lambda n: (_ORDER.index(n) if n in _ORDER else len(_ORDER), n))
    header = ["program", "id", "selection score"] + [_METRIC_COLUMNS.get(n, n) for n in names]
    header += ["MACs (K, one example)", "params", "train (s)"]
    rows = []
    for label, row in pair:
        if row is None:
            rows.append([label] + ["—"] * (len(header) - 1))
            continue
        m = found[label]
        cells = [label, f"`{row['program_id']}`", f"{row['ood_score']:.4f}"]
        cells += [_cell(n, m.get(n)) for n in names]
        macs = row.get("macs")
        cells += [
            "—" if macs is None else f"{macs / 1000:.2f}",
            str(row.get("params")),
            f"{row.get('train_seconds') or 0:.1f}",
        ]
        rows.append(cells)
    return markdown.table(header, rows)


def _value(value: float | None) -> str:
    return "—" if value is None else f"{value:g}"


def _paper_rows(key: str) -> list[str]:
    """The paper's figures for this benchmark and seed program (targets, not comparable)."""
    rows = [r for r in reference.extra_benchmarks() if r.benchmark == key]
    lines = ["", f"### Paper reference figures for `{key}` ({reference.paper_label()})", ""]
    if not rows:
        lines.append("The paper reports no row for this benchmark and seed program.")
        return lines + [""]
    methods = list(rows[0].values)
    cells = [[r.metric] + [_value(r.values[m]) for m in methods] for r in rows]
    lines += markdown.table(["metric", *methods], cells)
    lines += [
        "",
        "The paper's rows were measured under its own protocol (full training, its search "
        "budget, an LLM editor); ours under the preset above. They are not comparable "
        "numbers, only the targets.",
        "",
    ]
    return lines
