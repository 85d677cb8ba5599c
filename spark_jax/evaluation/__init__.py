"""Evaluation: train and score a candidate inside the official CLRS library.

  bridge            lifts a Flax processor into a CLRS (Haiku) `Processor`
  data              samplers and the official OOD set, by the protocol
  train             our jitted, sharded train step around CLRS's nets and losses
  training_loop     the one loop: one seed, K seeds as one program, the official model
  seeds             the seed axis: K seeds as one program (vmap, map, scan)
  training_options  the options record a training run takes
  evaluate          `evaluate_program` -> one immutable `families.Evaluation`
  compiling         ahead-of-time compiles, run concurrently and timed
  prefetch          batches sampled on a thread ahead of the step
  port_params       DeepMind's parameters in our port (the name map)
  identity          identity before training: do two programs compute the same function?

Training only: running evaluation jobs (executors, the worker process, Ray, the result
cache) is the `jobs` package, above this one; nothing here imports it. Modules that import
JAX/CLRS are imported only where used. May import: `program`, `families`, `workers`,
`config`, `util`.
"""
