"""Benchmarks (beside the CLI, above everything else): ratios against the official loop.

training  our trainer vs DeepMind's `BaselineModel` on identical batches; feasibility cost
pipeline  evaluator-busy fraction of a search with a loopback LLM
"""
