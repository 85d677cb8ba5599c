"""Small helpers below every stage: RNG state round-trips, files shipped with the package,
atomic writes. Imports nothing from the rest of spark_jax."""
