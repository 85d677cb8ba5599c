"""The search engine (paper Algorithm 1): archive, run database and the loop.

  archive    island MAP-Elites archive (pure; its state round-trips through JSON)
  candidate  the archive's records: Candidate, fitness order, AddResult, Sample
  rundb      one SQLite file per run: programs, proposals, evaluations, LLM calls, snapshots
  queries    the database's read side (records back as stored, report row views)
  schema     the database schema, its errors, value encoding, the credential guard
  loop       `run_search`: propose, check, evaluate with bounded overlap, persist, resume
  pipeline   propose -> check -> record, one for the search and the proposal-only mode
  parents    where an attempt's parents come from: the archive, or a fixed pool
  budget     the budget and duplicate rules, one for every method (the paper's)

May import: `evaluation`, `operator`, `feasibility`, `program`, `config`, `util`.
"""
