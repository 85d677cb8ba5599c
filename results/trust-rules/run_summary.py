"""Prints per-run attempts, statuses, evaluated counts and best figures of a comparison dir."""
import pathlib
import sqlite3
import sys

out = pathlib.Path(sys.argv[1])
for db in sorted(out.glob("*/seed-*/run.db")):
    c = sqlite3.connect(db)
    props = c.execute("SELECT attempt, status, failure_type FROM proposals ORDER BY attempt").fetchall()
    evs = c.execute("SELECT proposal_attempt, status, ood_score, error_type FROM evaluations ORDER BY id").fetchall()
    seed = [e for e in evs if e[0] is None]
    cands = [e for e in evs if e[0] is not None]
    ok = [e for e in cands if e[1] == "ok"]
    best_cand = max((e[2] for e in ok), default=None)
    best_incl = max([e[2] for e in ok] + [s[2] for s in seed if s[1] == "ok"], default=None)
    statuses = {}
    for _, st, ft in props:
        k = "duplicate" if ft == "duplicate" else st
        statuses[k] = statuses.get(k, 0) + 1
    print(f"{db.parent.parent.name}/{db.parent.name}: attempts={len(props)} statuses={statuses} "
          f"evaluated(entered training)={len(cands)} scored={len(ok)} errors={len(cands)-len(ok)} "
          f"seed_ood={seed[0][2] if seed else None:.4f} best_incl_seed={best_incl:.4f} "
          f"best_candidate={'—' if best_cand is None else f'{best_cand:.4f}'}")
