"""Run reports: a Markdown summary and PNG plots from a run's database (DESIGN §6-7, §9).

`write_report(run_dir)` reads `run_dir/run.db` and writes `run_dir/report.md` and
`run_dir/plots/*.png` (matplotlib, Agg canvas; no pyplot state). `summarize(db)` returns the
numbers the report prints (`RunAccounting`). Counting follows the paper's metric definitions
and issue 5: an *attempt* is every proposal; an *evaluated candidate* is a proposal whose
evaluation finished with status 'ok' (the seed's baseline evaluation is not a candidate);
the valid rate is feasible proposals / attempts; the entanglement rate is proposals whose
entanglement is 'entangled' or 'scaffold' / attempts. Curves are attributed to the attempt
that proposed a program, whatever order evaluations finished in. OOD scores stored as
fractions (CLRS `score`) are printed as percentages. Any NULL field prints as '—'.
"""
from __future__ import annotations

import collections
import dataclasses
import json
import math
import pathlib
import sqlite3
import sys
from typing import Any, Mapping, Sequence

from spark_jax.report import reference
from spark_jax.search.rundb import ProposalRecord, RunDB, RunDBError

__all__ = ['ENTANGLED_KINDS', 'PLOT_FILES', 'ReportPaths', 'RunAccounting', 'summarize',
           'write_report', 'report_main']

ENTANGLED_KINDS = ('entangled', 'scaffold')
PLOT_FILES = ('best_ood_vs_attempt.png', 'best_ood_vs_evaluated.png', 'entanglement_rate.png',
              'valid_rate.png', 'incumbent_macs.png')
_HIGHLIGHTS = ('task', 'preset', 'seed', 'editor', 'operator_variant', 'variant', 'budget',
               'max_attempts', 'in_flight', 'versions', 'command')
_DASH = '—'


@dataclasses.dataclass(frozen=True)
class ReportPaths:
    """What `write_report` wrote: the Markdown file and the PNG plots (in PLOT_FILES order)."""

    report: pathlib.Path
    plots: tuple[pathlib.Path, ...]


@dataclasses.dataclass(frozen=True)
class RunAccounting:
    """A run's numbers. Rates are None with zero attempts; `*_attempt` fields are 1-based
    positions among attempts (`best_attempt_index` is the stored 0-based index), None when
    the seed holds the best-so-far; `verdict` is 'beats'/'equals'/'below' (best evaluated
    candidate vs seed on OOD) or None when either is missing."""

    attempts: int
    feasible: int
    infeasible: int
    failed: int
    evaluated: int
    eval_errors: int
    not_evaluated: int
    valid_rate: float | None
    entangled: int
    entanglement_rate: float | None
    seed: Mapping[str, Any] | None
    best_candidate: Mapping[str, Any] | None
    incumbent: Mapping[str, Any] | None
    best_ood: float | None
    best_attempt: int | None
    best_attempt_index: int | None
    best_evaluated: int | None
    verdict: str | None
    wall_hours: float | None
    device_hours: float
    mean_train_seconds: float | None
    mean_compile_seconds: float | None
    curves: Mapping[str, tuple[float, ...]]


def _better(e: Mapping[str, Any], inc: Mapping[str, Any] | None) -> bool:
    """Higher OOD wins; equal OOD: lower MACs (the archive's tie-break)."""
    if inc is None:
        return True
    if e['ood_score'] != inc['ood_score']:
        return e['ood_score'] > inc['ood_score']
    return e['macs'] is not None and (inc['macs'] is None or e['macs'] < inc['macs'])


def _scored(e: Mapping[str, Any]) -> bool:
    return e['status'] == 'ok' and e['ood_score'] is not None


def _raw_meta(db: RunDB) -> tuple[dict[str, Any], float | None]:
    """All run_meta keys (decoded by RunDB.get_meta) and the database creation time."""
    try:
        conn = sqlite3.connect(str(db.path))
        try:
            keys = [r[0] for r in conn.execute('SELECT key FROM run_meta ORDER BY key')]
            created = conn.execute('SELECT MIN(created_at) FROM schema_version').fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return {}, None
    return {k: db.get_meta(k) for k in keys}, created


def _flatten(value: Any, prefix: str = '') -> dict[str, Any]:
    """{'a': {'b': 1}} -> {'a.b': 1}; an empty mapping stays a value (none at top level)."""
    if isinstance(value, Mapping) and (value or not prefix):
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f'{prefix}.{k}' if prefix else str(k)))
        return out
    return {prefix: value}


def _find(meta: Mapping[str, Any], name: str) -> Any:
    for key, value in meta.items():
        if key == name or key.endswith('.' + name):
            return value
    return None


def summarize(db: RunDB, meta: Mapping[str, Any] | None = None,
              created_at: float | None = None) -> RunAccounting:
    """Computes every number and curve of the report from an open run database."""
    if meta is None:
        raw, created_at = _raw_meta(db)
        meta = _flatten(raw)
    props: list[ProposalRecord] = db.proposals()
    evals = db.evaluations()
    by_attempt = {e['proposal_attempt']: e for e in evals if e['proposal_attempt'] is not None}
    baselines = [e for e in evals if e['proposal_attempt'] is None and _scored(e)]
    task, preset = _find(meta, 'task'), _find(meta, 'preset')
    matching = [e for e in baselines if (task is None or e['task'] in (None, task))
                and (preset is None or e['preset'] in (None, preset))]
    seed = (matching or baselines or [None])[0]
    cands = [e for e in evals if e['proposal_attempt'] is not None and e['status'] == 'ok']
    nan = float('nan')
    # Per attempt (x = 0 is the seed, before any attempt).
    incumbent = seed
    best_curve = [seed['ood_score'] if seed else nan]
    macs_curve = [seed['macs'] if seed and seed['macs'] is not None else nan]
    cand_ood, valid, entangled = [nan], [], []
    n_feasible = n_entangled = 0
    for k, p in enumerate(props, 1):
        e = by_attempt.get(p.attempt)
        if e is not None and _scored(e) and _better(e, incumbent):
            incumbent = e
        best_curve.append(incumbent['ood_score'] if incumbent else nan)
        macs_curve.append(nan if incumbent is None or incumbent['macs'] is None
                          else float(incumbent['macs']))
        cand_ood.append(e['ood_score'] if e is not None and _scored(e) else nan)
        n_feasible += p.status == 'feasible'
        n_entangled += p.entanglement in ENTANGLED_KINDS
        valid.append(n_feasible / k)
        entangled.append(n_entangled / k)
    # Per evaluated candidate, in the order evaluations were recorded.
    eval_curve, running, best_candidate = [seed['ood_score'] if seed else nan], seed, None
    for e in cands:
        if _scored(e):
            running = e if _better(e, running) else running
            best_candidate = e if _better(e, best_candidate) else best_candidate
        eval_curve.append(running['ood_score'] if running else nan)
    best_ood = incumbent['ood_score'] if incumbent else None
    best_attempt = best_index = best_eval = None
    if best_ood is not None and not (seed and seed['ood_score'] == best_ood):
        best_attempt = next(k for k, v in enumerate(best_curve) if v == best_ood)
        best_index = props[best_attempt - 1].attempt
        first = by_attempt[best_index]
        best_eval = next(i for i, e in enumerate(cands, 1) if e['id'] == first['id'])
    verdict = None
    if seed is not None and best_candidate is not None:
        diff = best_candidate['ood_score'] - seed['ood_score']
        verdict = 'beats' if diff > 0 else 'equals' if diff == 0 else 'below'
    stamps = [p.created_at for p in props] + [e['created_at'] for e in evals]
    stamps += [c['created_at'] for c in db.llm_calls()] + [created_at]
    stamps = [s for s in stamps if s is not None]
    train = [e['train_seconds'] for e in cands if e['train_seconds'] is not None]
    comp = [e['compile_seconds'] for e in cands if e['compile_seconds'] is not None]
    device_s = sum((e['train_seconds'] or 0.0) + (e['compile_seconds'] or 0.0) for e in evals)
    n = len(props)
    return RunAccounting(
        attempts=n, feasible=n_feasible,
        infeasible=sum(p.status == 'infeasible' for p in props),
        failed=sum(p.status == 'failed' for p in props), evaluated=len(cands),
        eval_errors=sum(e['status'] != 'ok' for e in by_attempt.values()),
        not_evaluated=sum(p.status == 'feasible' and p.attempt not in by_attempt
                          for p in props),
        valid_rate=n_feasible / n if n else None, entangled=n_entangled,
        entanglement_rate=n_entangled / n if n else None, seed=seed,
        best_candidate=best_candidate, incumbent=incumbent, best_ood=best_ood,
        best_attempt=best_attempt, best_attempt_index=best_index, best_evaluated=best_eval,
        verdict=verdict,
        wall_hours=(max(stamps) - min(stamps)) / 3600 if len(stamps) > 1 else None,
        device_hours=device_s / 3600,
        mean_train_seconds=sum(train) / len(train) if train else None,
        mean_compile_seconds=sum(comp) / len(comp) if comp else None,
        curves={'best': tuple(best_curve), 'macs': tuple(macs_curve),
                'cand_ood': tuple(cand_ood), 'valid': tuple(valid),
                'entangled': tuple(entangled), 'best_eval': tuple(eval_curve)})


# ---------------------------------------------------------------- formatting


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return _DASH
    if isinstance(value, float):
        return f'{value:.{digits}f}'
    if isinstance(value, int) and not isinstance(value, bool):
        return f'{value:,}'
    return str(value)


def _pct(score: float | None) -> str:
    return _DASH if score is None else f'{100.0 * score:.2f}'


def _cell(value: Any, limit: int = 160) -> str:
    """A run_meta value as one table cell: a list of strings (a command) joined, else JSON."""
    words = isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)
    text = ' '.join(value) if words else value if isinstance(value, str) else json.dumps(
        value, default=str, sort_keys=True)
    text = text.replace('|', '\\|').replace('\n', ' ')
    return text if len(text) <= limit else text[:limit - 1] + '…'


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    lines = ['| ' + ' | '.join(header) + ' |', '|' + '---|' * len(header)]
    return lines + ['| ' + ' | '.join(str(c) for c in row) + ' |' for row in rows]


def _verdict_line(acc: RunAccounting, protocol: str) -> str:
    if acc.seed is None:
        return ('**Verdict:** the seed has no recorded evaluation, so the best candidate '
                'cannot be compared with it.')
    if acc.best_candidate is None:
        return ('**Verdict:** no candidate was evaluated, so nothing beats the seed; the '
                'best program is the seed itself.')
    b, s = acc.best_candidate, acc.seed
    word = {'beats': 'beats', 'equals': 'equals', 'below': 'is below'}[acc.verdict or '']
    line = (f"**Verdict:** the best evaluated candidate (program `{b['program_id']}`, attempt "
            f"index {b['proposal_attempt']}) {word} the seed on this run's own protocol "
            f"({protocol}): OOD {_pct(b['ood_score'])}% vs {_pct(s['ood_score'])}% "
            f"({100 * (b['ood_score'] - s['ood_score']):+.2f} pp).")
    if (b['task'], b['preset'], b['seed']) != (s['task'], s['preset'], s['seed']):
        line += (' Warning: the seed and the candidate were evaluated under different '
                 f"task/preset/seed ({s['task']}/{s['preset']}/{s['seed']} vs "
                 f"{b['task']}/{b['preset']}/{b['seed']}).")
    return line


def _llm_table(calls: Sequence[Mapping[str, Any]]) -> list[str]:
    roles: dict[str, list[Mapping[str, Any]]] = collections.defaultdict(list)
    for c in calls:
        roles[c['role'] or _DASH].append(c)
    rows = []
    for role, cs in roles.items():
        llm = [c for c in cs if c['is_llm']]
        kind = 'offline rules (not an LLM)' if not llm else ', '.join(sorted(
            {f"{c['backend'] or '?'}/{c['model'] or '?'}" for c in llm}))
        total = {key: [c[key] for c in cs if c[key] is not None]
                 for key in ('prompt_tokens', 'completion_tokens', 'latency_s')}
        lat = total['latency_s']
        rows.append([role, len(cs), kind, sum(not c['ok'] for c in cs)]
                    + [_fmt(sum(v) if v else None, 2) for v in total.values()]
                    + [_fmt(sum(lat) / len(lat) if lat else None, 3)])
    if not rows:
        return ['(no editor calls recorded)']
    return _table(['role', 'calls', 'kind', 'failed', 'prompt tokens', 'completion tokens',
                   'latency s (total)', 'latency s (mean)'], rows)


def _markdown(run_dir: pathlib.Path, meta: Mapping[str, Any], acc: RunAccounting,
              props: Sequence[ProposalRecord], evals: Sequence[Mapping[str, Any]],
              calls: Sequence[Mapping[str, Any]], plots: Sequence[pathlib.Path],
              top_k: int) -> str:
    anchor = acc.seed or acc.best_candidate or {}
    task = anchor.get('task') or _find(meta, 'task')
    preset = anchor.get('preset') or _find(meta, 'preset')
    seed_no = anchor.get('seed') if anchor.get('seed') is not None else _find(meta, 'seed')
    protocol = f'task `{task or "unknown"}`, preset `{preset or "unknown"}`, seed {seed_no}'
    lines = [f'# SPARK run report: {run_dir.name}', '', f'Protocol: {protocol}.', '',
             '## Configuration', '']
    order = sorted(meta, key=lambda k: (min((i for i, h in enumerate(_HIGHLIGHTS)
                                             if k == h or k.startswith(h + '.')
                                             or k.endswith('.' + h)), default=99), k))
    lines += (_table(['key', 'value'], [[f'`{k}`', _cell(meta[k])] for k in order])
              if meta else ['(no run metadata recorded)'])
    lines += ['', '## Seed vs best', '']
    cols = [('OOD (%)', 'ood_score', _pct), ('val (%)', 'val_score', _pct),
            ('MACs', 'macs', _fmt), ('params', 'params', _fmt)]
    pair = [('seed', acc.seed), ('best evaluated candidate', acc.best_candidate)]
    lines += _table(['program', 'id', 'attempt index'] + [c[0] for c in cols], [
        [name, f"`{e['program_id']}`" if e else _DASH,
         _fmt(e['proposal_attempt']) if e else _DASH]
        + [f(e[key]) if e else _DASH for _, key, f in cols] for name, e in pair])
    lines += ['', _verdict_line(acc, protocol), '',
              '## Search accounting (paper metric definitions)', '']
    if acc.best_ood is None:
        where = 'no scored program'
    elif acc.best_attempt is None:
        where = 'by the seed (no candidate exceeded its OOD)'
    else:
        where = (f'at attempt {acc.best_attempt} of {acc.attempts} (0-based attempt index '
                 f'{acc.best_attempt_index}), evaluated candidate {acc.best_evaluated} of '
                 f'{acc.evaluated}')
    lines += [
        f'- Attempts (every proposal; the paper\'s *Cand.*): {acc.attempts} '
        f'({acc.feasible} feasible, {acc.infeasible} infeasible, {acc.failed} editor failures).',
        f'- Evaluated candidates (feasible and trained, status ok; the budget): {acc.evaluated}'
        f' ({acc.eval_errors} evaluation errors, {acc.not_evaluated} feasible not evaluated; '
        'the seed\'s baseline evaluation is not counted).',
        f'- Valid rate (feasible / attempts): {_fmt(acc.valid_rate, 3)}.',
        f'- Entanglement rate (entangled or scaffold / attempts): {_fmt(acc.entanglement_rate, 3)}'
        f' ({acc.entangled} of {acc.attempts}).']
    n_llm = sum(bool(c['is_llm']) for c in calls)
    per = f'{len(calls) / acc.attempts:.2f} per attempt' if acc.attempts else 'no attempts'
    lines += [
        f'- LLM calls (routing + directives + editing): {len(calls)} editor calls ({per}); '
        f'{n_llm} to an LLM, {len(calls) - n_llm} offline rules (not an LLM).',
        f'- Wall hours (first to last record, database creation included): '
        f'{_fmt(acc.wall_hours, 3)}.',
        f'- Device hours (sum of train + compile seconds over all evaluations): '
        f'{acc.device_hours:.3f}.',
        f'- Train seconds per evaluated candidate (mean): {_fmt(acc.mean_train_seconds, 1)} '
        f'(compile: {_fmt(acc.mean_compile_seconds, 1)}).',
        f'- Best OOD {_pct(acc.best_ood)}% (best-so-far, seed included) first reached {where}.',
        '', '## LLM calls by role', '']
    lines += _llm_table(calls)
    lines += ['', f'## Top {top_k} programs', '']
    factor = {p.attempt: p.factor for p in props}
    ranked = sorted([e for e in evals if _scored(e)], key=lambda e: (
        -e['ood_score'], e['macs'] if e['macs'] is not None else math.inf, e['id']))[:top_k]
    lines += _table(['rank', 'program', 'attempt index', 'factor', 'OOD (%)', 'val (%)',
                     'MACs', 'params', 'train s'], [
        [i, f"`{e['program_id']}`", 'seed' if e['proposal_attempt'] is None
         else e['proposal_attempt'], factor.get(e['proposal_attempt']) or _DASH,
         _pct(e['ood_score']), _pct(e['val_score']), _fmt(e['macs']), _fmt(e['params']),
         _fmt(e['train_seconds'], 1)] for i, e in enumerate(ranked, 1)]) if ranked else [
        '(no scored program)']
    fails: collections.Counter[tuple[str, str]] = collections.Counter()
    for p in props:
        if p.status != 'feasible':
            stage = p.failure_stage or ('editor' if p.status == 'failed' else 'unknown')
            fails[stage, p.failure_type or p.status] += 1
    for e in evals:
        if e['status'] != 'ok':
            head = (e['error'] or '').split(':')[0].strip()
            fails['evaluation', head if 0 < len(head) <= 40 else 'error'] += 1
    lines += ['', '## Failures by stage', '']
    lines += (_table(['stage', 'failure type', 'count'],
                     [[s, t, c] for (s, t), c in sorted(fails.items())])
              if fails else ['(no failures)'])
    lines += ['', '## Plots', ''] + [f'![{p.stem}](plots/{p.name})' for p in plots]
    ours = [(label, None if e['ood_score'] is None else 100.0 * e['ood_score'],
             None if e['macs'] is None else e['macs'] / 1000.0) for label, e in pair if e]
    lines += [''] + reference.comparison_lines(str(task) if task else None,
                                               str(preset) if preset else None, ours)
    return '\n'.join(lines) + '\n'


# ---------------------------------------------------------------- plots


def _plots(acc: RunAccounting, out: pathlib.Path) -> tuple[pathlib.Path, ...]:
    """The five PNGs of PLOT_FILES; a plot with nothing to draw says so instead."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    c = {k: [100.0 * y for y in v] if k in ('best', 'cand_ood', 'best_eval') else list(v)
         for k, v in acc.curves.items()}
    att, seed_x, ood = list(range(len(c['best']))), 'attempt (0: the seed)', 'OOD accuracy (%)'
    specs = [  # title, x label, y label, [(xs, ys, label, style)]
        ('best-so-far OOD accuracy vs attempt', seed_x, ood,
         [(att, c['best'], 'best so far', 'step'), (att, c['cand_ood'], 'candidate', '.')]),
        ('best-so-far OOD accuracy vs evaluated candidates', 'evaluated candidates (0: the seed)',
         ood, [(list(range(len(c['best_eval']))), c['best_eval'], 'best so far', 'step')]),
        ('entanglement rate (cumulative)', 'attempt', 'entangled or scaffold / attempts',
         [(att[1:], c['entangled'], 'entanglement rate', '-')]),
        ('cumulative valid rate', 'attempt', 'feasible / attempts',
         [(att[1:], c['valid'], 'valid rate', '-')]),
        ('incumbent MACs', seed_x, 'MACs of the best-so-far program',
         [(att, c['macs'], 'incumbent MACs', 'step')])]
    out.mkdir(parents=True, exist_ok=True)
    for name, (title, xlabel, ylabel, series) in zip(PLOT_FILES, specs):
        fig = Figure(figsize=(6.4, 4.0), dpi=100)
        FigureCanvasAgg(fig)
        ax = fig.add_subplot()
        drawn = [s for s in series if any(not math.isnan(y) for y in s[1])]
        for xs, ys, label, style in drawn:
            if style == 'step':
                ax.step(xs, ys, where='post', label=label, marker='.' if len(xs) < 3 else None)
            else:
                ax.plot(xs, ys, style, label=label, alpha=0.5 if style == '.' else 1.0)
        if 'rate' in title:
            ax.set_ylim(-0.02, 1.02)
        if len(drawn) > 1:
            ax.legend(loc='lower right', fontsize='small')
        elif not drawn:
            ax.text(0.5, 0.5, 'no data recorded', ha='center', va='center',
                    transform=ax.transAxes)
        ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
        ax.grid(True, alpha=0.3)
        fig.subplots_adjust(left=0.13, right=0.97, bottom=0.12, top=0.92)
        fig.savefig(out / name, format='png')
    return tuple(out / name for name in PLOT_FILES)


# ---------------------------------------------------------------- entry points


def write_report(run_dir: str | pathlib.Path, top_k: int = 10) -> ReportPaths:
    """Writes `run_dir/report.md` and `run_dir/plots/*.png` from `run_dir/run.db`.

    Raises RunDBError when the directory or its database is missing or unusable.
    """
    run_dir = pathlib.Path(run_dir)
    if not run_dir.is_dir():
        raise RunDBError(f'run directory {run_dir} does not exist')
    with RunDB.open(run_dir / 'run.db') as db:
        raw, created = _raw_meta(db)
        meta = _flatten(raw)
        acc = summarize(db, meta, created)
        props, evals, calls = db.proposals(), db.evaluations(), db.llm_calls()
    plots = _plots(acc, run_dir / 'plots')
    path = run_dir / 'report.md'
    path.write_text(_markdown(run_dir, meta, acc, props, evals, calls, plots, top_k))
    return ReportPaths(path, plots)


def report_main(run_dir: str | pathlib.Path) -> int:
    """`spark-jax report RUN_DIR`: writes the report, prints its paths; 2 on a bad run dir."""
    run_dir = pathlib.Path(run_dir)
    if not run_dir.is_dir():
        print(f'error: run directory {run_dir} does not exist', file=sys.stderr)
        return 2
    if not (run_dir / 'run.db').is_file():
        print(f'error: {run_dir / "run.db"} not found (not a run directory?)', file=sys.stderr)
        return 2
    try:
        paths = write_report(run_dir)
    except (RunDBError, OSError) as exc:
        print(f'error: {exc}', file=sys.stderr)
        return 2
    print(paths.report)
    for p in paths.plots:
        print(p)
    return 0
