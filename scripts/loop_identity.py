"""The training loop's scores at `tiny` (bfs, processors/mpnn.py, seed 3): one seed, one seed
with a cascade, two vmapped seeds, and DeepMind's model in `spark-jax bench`'s loop, as one
JSON line. Run it with two checkouts on PYTHONPATH and compare the lines: a refactor of the
loop must leave them byte-identical.

    PYTHONPATH=OLD python scripts/loop_identity.py > old.json
    PYTHONPATH=NEW python scripts/loop_identity.py > new.json && cmp old.json new.json
"""

import json

from spark_jax import program as program_lib
from spark_jax.config import assets, protocol
from spark_jax.evaluation import bridge, evaluate, seeds
from spark_jax.perf import candidate

cfg = protocol.get_preset("tiny")
prog = program_lib.read_program(assets.seed_program_path("mpnn"))
factory = bridge.processor_factory(prog, cfg.use_ln, cfg.nb_triplet_fts)
keys = ("ood_score", "val_score", "best_step", "final_loss", "steps")
out = {}
m, _ = evaluate.train_and_score(factory, "bfs", cfg, 3)
out["one"] = {k: m[k] for k in keys}
m, _ = evaluate.train_and_score(factory, "bfs", cfg, 3, cascade=(2.0, 0.5))
out["cascade"] = {
    k: m.get(k) for k in keys + ("cascade_steps", "cascade_val_score", "cascade_promoted")
}
per = seeds.train_and_score_seeds(factory, "bfs", cfg, [3, 4])
out["stack"] = [{k: p[k] for k in keys} for p in per]
off = candidate._official_candidate("bfs", cfg, 3)
out["official"] = off["ood_score"]
print(json.dumps(out, sort_keys=True))
