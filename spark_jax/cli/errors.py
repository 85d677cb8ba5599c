"""The command line's one error type and its exit codes, shared by every command.

  0  success
  1  the work ran and failed (an infeasible program, training diverged, a search error)
  2  a usage error (bad arguments, missing or malformed files, unknown task or preset)

argparse itself exits with 2 on arguments it cannot parse, which matches.
"""

from __future__ import annotations

import sys

__all__ = ["EXIT_FAILED", "EXIT_OK", "EXIT_USAGE", "UsageError", "fail"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """A problem with what the user asked for: printed as one `error:` line, exit code 2."""


def fail(message: str, code: int = EXIT_USAGE) -> int:
    """Prints `error: message` on stderr and returns `code` (for `return fail(...)`)."""
    print(f"error: {message}", file=sys.stderr)
    return code
