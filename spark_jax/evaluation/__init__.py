"""Evaluation: train and score a candidate inside the official CLRS library.

  bridge     lifts a Flax processor into a CLRS (Haiku) `Processor`
  data       samplers and the official OOD set, by the protocol
  train      our jitted, sharded train step around CLRS's nets and losses
  evaluate   `evaluate_program` -> one immutable `Evaluation`
  record     the `Evaluation` record (pure data)
  executors  local worker processes (or Ray, `ray_executor`); one `EvalJob` -> one `EvalResult`
  worker     the evaluation worker process (child side) and the job function

Modules that import JAX/CLRS are imported only where used. May import: `operator`,
`feasibility`, `workers`, `program`, `config`, `util`.
"""
