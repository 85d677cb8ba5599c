"""How evaluating a program failed in training: `TrainingError`, when its training diverged
(`source.ProgramError` is the other failure a program causes itself). What a training that
ended well measured is `families.Evaluation`, the one record of every task family.

Pure data (no JAX import), on a low floor so that the training side (`evaluation`, which
raises the error) and the job side (`jobs`, which classifies it) share it across process
boundaries.
"""

from __future__ import annotations

__all__ = ["TrainingError"]


class TrainingError(RuntimeError):
    """Training diverged (non-finite loss) or the setup is inconsistent."""
