"""`spark-jax serve`: a read-only, live browser view of run, benchmark and comparison
directories.

  reader   read-only (`mode=ro`) database access, run discovery, run status, path checks
  data     the JSON of the runs list, a run and a proposal (numbers from `report.accounting`)
  benchmarks  the benchmark pages' JSON (cells and comparisons from `benchmark.stats`)
  comparison  the comparison pages' JSON (rows and bands from `compare.tables`)
  verdicts the reports' verdict sections, made by the reports' own code, as page blocks
  pages    the HTML shells; `static/app.js` fills them, as text, never as markup
  app      the HTTP server (standard library, threading): routes, 403/404, headers

Static files: `static/uplot.min.js` and `static/uplot.min.css` are uPlot (MIT, see
`static/uplot.LICENSE`), vendored unchanged.

May import: `compare`, `benchmark`, `report`, `search` and everything below them.
"""

from spark_jax.serve.app import ServeServer, make_server
from spark_jax.serve.reader import NotFound, OutsideRoot, Root, run_status

__all__ = ["NotFound", "OutsideRoot", "Root", "ServeServer", "make_server", "run_status"]
