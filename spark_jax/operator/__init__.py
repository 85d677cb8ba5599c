"""The SPARK operator (paper Algorithm 2): route -> directive -> edit -> feasibility.

  step     `SparkOperator.step` -> one immutable `Proposal`; the ablations
  signals  stagnation and failure signals over the recent outcomes (RC's inputs)
  editors  the `Editor` boundary (three roles) and `LLMEditor`
  two_step SPARK's two-step edit in its prompts (submodules defined, not called yet)
  prompts  role prompt templates, read from the shipped `prompts/`
  llm      LLM backends behind one async contract (openai, command, record/replay)
  offline  the rule-based editor (not an LLM): bandit router, rule director, libcst edits

May import: `feasibility`, `program`, `config`, `util`.
"""
