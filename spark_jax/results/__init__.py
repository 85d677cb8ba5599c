"""The generators of the results/ folders: one module per folder's generator (a comparison's
module serves every folder that holds one `spark-jax compare` run). Each writes its folder's
generated README parts (the table block, the `**Answer.**` paragraph, a CSV or a figure where
the folder has one) from the folder's stored records: run and benchmark databases, JSON and
CSV files, never Markdown read back. `readme` holds what they share: the markers, the answer's
rewrite, the percentage cells and the folder argument. scripts/ calls each module's `main`.

It also holds the experiments whose runs those folders keep, where a run reads or writes a
program benchmark's records: `identity` (results/bench: the clrs10 benchmark's seed trained
again), `bench_workers` (results/bench: one worker against two), `chaos_runs`
(results/chaos-at-smoke), `families_smoke` (results/families), `port_equivalence`
(results/port-vs-official). The cost measurements themselves are `spark_jax.perf`'s.

It sits on the top floors, below the command line: it reads what search, benchmark and
compare stored, and nothing below imports it.
"""
