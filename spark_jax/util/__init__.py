"""Small helpers below every stage: RNG state round-trips, atomic writes, labels, the
accelerator probe. Imports nothing from the rest of spark_jax."""
