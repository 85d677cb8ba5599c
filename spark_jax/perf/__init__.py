"""Benchmarks and measurements (beside the CLI, above everything else): ratios against the
official loop, and the measurements behind results/bench, results/gpu, results/chaos-at-smoke,
results/families and results/port-vs-official (each run by its script in scripts/).

training             our trainer vs DeepMind's `BaselineModel` on identical batches
candidate            one candidate, official vs ours; an unseen program's feasibility cost
pipeline             evaluator-busy fraction of a search with a loopback LLM
profile              where one evaluation's time goes (scripts/profile_evaluation.py)
feasibility_profile  where an unseen program's feasibility check goes (profile_feasibility.py)
identity             scores unchanged by the cost work: smoke_identity, stack_divergence,
                     loop_identity (scripts/smoke_identity.py, stack_divergence.py,
                     loop_identity.py)
seed_modes           K seeds alone, mapped and vmapped (scripts/seed_modes.py)
workers              one local worker against two on a CPU (scripts/bench_workers.py)
gpu_measure          the accelerator phases of results/gpu (scripts/gpu_measure.py)
gpu_runs             timed `spark-jax` processes and an nvidia-smi sampler
port_equivalence     our port against DeepMind's model at equal parameters
chaos                a training run under 1e-7 perturbations of its initial parameters
families_smoke       the five non-CLRS benchmarks at a preset (scripts/families_smoke.py)
cartpole_climb       CartPole's seed policy and a short offline hill climb (cartpole_smoke.py)
"""
