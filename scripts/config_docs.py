"""Writes docs/configuration.md from the config schema (`spark_jax.config.docs`).

python scripts/config_docs.py            # write the file
python scripts/config_docs.py --check    # exit 1 if the file differs from the schema
"""

from __future__ import annotations

import argparse
import pathlib
import sys

from spark_jax.config import docs

OUT = pathlib.Path(__file__).resolve().parent.parent / "docs" / "configuration.md"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    args = parser.parse_args(argv)
    if args.check:
        if not docs.is_current(OUT):
            print(f"{OUT}: differs from the config schema; run scripts/config_docs.py")
            return 1
        return 0
    docs.write_configuration(OUT)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
