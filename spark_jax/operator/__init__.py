"""The SPARK operator (paper Algorithm 2): route -> directive -> edit -> feasibility.

  step     `SparkOperator.step` -> one immutable `Proposal`; the ablations
  signals  stagnation and failure signals over the recent outcomes (RC's inputs)
  editors  the `Editor` boundary (three roles) and `LLMEditor`
  two_step SPARK's two-step edit in its prompts (submodules defined, not called yet)
  prompts  role prompt templates, read from the shipped `prompts/`
  offline  the rule-based editor (not an LLM): bandit router, rule director, libcst edits
  baselines the other search methods' operators

The LLM transport (backends, cassettes, parsing) is `spark_jax.llm`, a floor below.

May import: `feasibility`, `llm`, `program`, `config`, `util`.
"""
