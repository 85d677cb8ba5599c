"""Reports of a run: Markdown tables shaped like the paper's, plots, reference figures.

  accounting  `summarize(db)` -> `RunAccounting`: the numbers and curves, by the paper's
              metric definitions
  plots       the PNGs drawn from those curves
  tables      `write_report(run_dir)`: report.md and its plots; `report_main` (the CLI's)
  reference   the paper's tables (shipped CSVs), each row with its true source, printed
              beside our runs
  spread      seed noise: per-seed scores and the verdict of the best against the seed

May import: `search`, `config`, `stats`, `util`.
"""
