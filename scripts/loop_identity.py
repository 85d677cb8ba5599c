"""The training loop's scores at `tiny` (bfs, processors/mpnn.py, seed 3): one seed, one seed
with a cascade, two vmapped seeds, and DeepMind's model in `spark-jax bench`'s loop, as one
JSON line (`spark_jax.perf.identity.loop_identity`). Run it with two checkouts on PYTHONPATH
and compare the lines: a refactor of the loop must leave them byte-identical.

    PYTHONPATH=OLD python scripts/loop_identity.py > old.json
    PYTHONPATH=NEW python scripts/loop_identity.py > new.json && cmp old.json new.json

(A checkout before spark_jax.perf.identity existed: run that checkout's own script.)
"""

import json

from spark_jax.perf import identity

print(json.dumps(identity.loop_identity(), sort_keys=True))
