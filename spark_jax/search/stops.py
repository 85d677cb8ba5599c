"""Why a search stops early: its error types and the editor-failure cap.

  SearchError        the search cannot start or continue (exit 1 at the command line)
  SearchUsageError   something the user must fix; nothing was written (exit 2)
  EditorFailing      the LLM editor failed on too many proposals in a row (exit 1, resumable)

The in-flight evaluation on an interrupt is abandoned, not awaited: its worker is killed,
its proposal stays recorded without an evaluation, and a resume evaluates it again.
"""

from __future__ import annotations

__all__ = ["EditorFailing", "FailureStreak", "SearchError", "SearchUsageError"]


class SearchError(RuntimeError):
    """The search cannot start or continue (bad run directory, seed failed to train, ...)."""


class SearchUsageError(SearchError):
    """A problem the user must fix (input, run directory, endpoint); nothing was written."""


class EditorFailing(SearchError):
    """The editor produced no program on `limit` proposals in a row; the run is resumable."""


class FailureStreak:
    """Counts consecutive proposals on which an LLM editor produced no program.

    Only this process's proposals count, so a resume starts a fresh streak.
    """

    def __init__(self, limit: int, is_llm: bool) -> None:
        self.limit, self.is_llm, self.count = limit, is_llm, 0
        self.last_error = ""

    def note(self, status: str, error: str, run_dir: str) -> None:
        """Records one proposal; raises EditorFailing once the streak reaches the limit."""
        if not self.is_llm or status != "failed":
            self.count = 0
            return
        self.count += 1
        self.last_error = error
        if self.count >= self.limit:
            first_line = (error.strip().splitlines() or ["no detail"])[0][:300]
            raise EditorFailing(
                f"the LLM editor produced no program on {self.count} proposals in a row "
                f"(editor.max_consecutive_failures); last error: {first_line}; fix the "
                f"endpoint, then: spark-jax search --resume {run_dir}"
            )
