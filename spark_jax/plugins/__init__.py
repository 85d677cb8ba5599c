"""The shipped task families, one plug-in folder each: `clrs`, `classify`, `cartpole`.

Each folder is a package whose module defines `FAMILY`, an object with the
`spark_jax.families.TaskFamily` contract, with its seed programs in `seeds/` and its contract
beside them (CLRS's processors and prompts stay in `assets/`). The registry
(`spark_jax.families`, on a low floor) imports a plug-in by name the first time it is asked
for; a plug-in stands above what it uses (evaluation, feasibility, the offline editor), so
nothing below imports this package.
"""
