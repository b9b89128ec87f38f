"""The progress bar of the Python-implemented commands: the one bar of the
``rntuple`` command (``rntuple_tools::term::Bar`` in the Rust core), so that
``convert``, ``draw``, ``verify`` and ``merge`` draw the same line."""

from __future__ import annotations

from . import _lib

__all__ = ["Progress"]


class Progress:
    """A one-line progress bar (done / total, rate, ETA) on standard error.

    ``enabled=None`` shows it only when standard error is a terminal, so
    output piped into a file or another program stays clean; the last state
    stays on screen after ``close()``.
    """

    def __init__(self, total: int, label: str, enabled: bool | None = None, unit: str = "entries") -> None:
        self.total = max(0, int(total))
        self.done = 0
        self._bar = _lib.ProgressBar(self.total, label, enabled, unit)

    @property
    def enabled(self) -> bool:
        return self._bar.enabled

    def update(self, n: int) -> None:
        n = max(0, int(n))
        self.done += n
        self._bar.update(n)

    def close(self) -> None:
        self._bar.close()
