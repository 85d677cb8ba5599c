"""Job running: one `EvalJob` -> one `EvalResult`, on worker processes or Ray, cached.

  contract      the `EvalJob` and `EvalResult` records and the `Executor` interface
  executors     local worker processes (`LocalExecutor`) and `make_executor`, the factory
  ray_executor  one Ray task per job (`RayExecutor`; Ray imported when one is built)
  result_cache  identical jobs answered from a folder of stored results (`ResultCache`)
  worker        the evaluation worker process (child side), its handle, the job function
  family_jobs   a job handed to its task family; the family's check options and data record

The training a job runs is the `evaluation` package's; this package never imports it (a job
reaches it through its family's plug-in, found by name), and `evaluation` never imports this
one. May import: `program`, `families`, `workers`, `config`, `util`.
"""
