"""The one exception this package raises on purpose. The pipeline does not import it: it treats
any exception from `summarize()` as a failed segment. It exists so that the message says why, and
so that a failed call still reports what it cost (`usage`)."""

from __future__ import annotations

from jezero.plugin import Usage


class SummarizerError(RuntimeError):
    """A summarizer could not be built (missing key, bad setting) or gave no valid summary."""

    def __init__(self, message: str, usage: Usage | None = None):
        super().__init__(message)
        self.usage = usage  # tokens and cost spent before giving up, for budgets
