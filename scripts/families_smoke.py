"""Seed programs of the classification families at a preset: one table shaped like the paper's.

Usage: python scripts/families_smoke.py [--preset smoke] [--benchmarks mnist1d,breast_cancer]
Columns: Benchmark, Seed, Cand., Wall-s, Train(s), MACs(K), Acc, Loss. A benchmark whose family
or data is not available is skipped with one line saying why.
"""

import argparse
import time

from spark_jax import families


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="smoke")
    ap.add_argument("--benchmarks", default="mnist1d,breast_cancer")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    try:
        from spark_jax.evaluation import classify_family  # noqa: F401 - registers the family
    except ImportError as e:
        print(f"skip classify family: not installed ({e})")
        return
    family = families.get("classify")
    print("| Benchmark | Seed | Cand. | Wall-s | Train(s) | MACs(K) | Acc | Loss |")
    print("|---|---|---|---|---|---|---|---|")
    for bench in args.benchmarks.split(","):
        for name, path in family.seed_programs().items():
            start = time.perf_counter()
            try:
                ev = family.evaluate(path.read_text(), bench, args.preset, args.seed)
            except Exception as e:  # noqa: BLE001 - report and go on
                print(f"skip {bench}/{name}: {type(e).__name__}: {e}")
                continue
            wall = time.perf_counter() - start
            print(
                f"| {bench} | {name} | 1 | {wall:.1f} | {ev.train_seconds:.1f} | "
                f"{ev.macs / 1e3:.1f} | {ev.metrics['accuracy']:.4f} | {ev.metrics['loss']:.4f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
