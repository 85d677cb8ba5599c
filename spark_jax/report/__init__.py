"""Reports of a run: Markdown tables shaped like the paper's, plots, reference figures.

  tables     `write_report(run_dir)`: the report and its plots
  reference  the paper's tables (shipped CSVs), printed beside our runs

May import: `search`, `config`, `util`.
"""
