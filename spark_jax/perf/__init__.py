"""The performance harness (`spark-jax perf`): ratios against the official loop, and the
cost measurements behind results/bench and results/gpu (each run by its script in scripts/).
Measurements that read or write a program benchmark's records (the identity check against
the clrs10 benchmark, the workers' benchmark, the chaos runs, the families' retests, the
port's equivalence) are experiments of their results folders: `spark_jax.results`.

training             our trainer vs DeepMind's `BaselineModel` on identical batches
candidate            one candidate, official vs ours; an unseen program's feasibility cost
pipeline             evaluator-busy fraction of a search with a loopback LLM
profile              where one evaluation's time goes (scripts/profile_evaluation.py)
feasibility_profile  where an unseen program's feasibility check goes (profile_feasibility.py)
identity             scores unchanged by the cost work: stack_divergence, loop_identity
                     (scripts/stack_divergence.py, loop_identity.py)
seed_modes           K seeds alone, mapped and vmapped (scripts/seed_modes.py)
gpu_measure          the accelerator phases of results/gpu (scripts/gpu_measure.py)
gpu_runs             timed `spark-jax` processes and an nvidia-smi sampler
cartpole_climb       CartPole's seed policy and a short offline hill climb (cartpole_smoke.py)
"""
