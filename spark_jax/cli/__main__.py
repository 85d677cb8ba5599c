import sys

from spark_jax.cli.main import main

sys.exit(main())
