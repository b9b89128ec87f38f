"""The progress bar of the Python-implemented operations (``convert``, ``draw``, ``iterate``
over a dataset, ``dask_write``, ``study``, ``update``): in a terminal the one bar of the
``rntuple`` command (``rntuple_tools::term::Bar`` in the Rust core, on standard error), in a
notebook a bar that updates in place in the cell's output (tqdm's widget or text when tqdm is
installed, else a text line rewritten in place).

When it shows (``progress=`` of those functions, :func:`wanted`):

* ``progress=False``: never; ``progress=True``: always (in a notebook, the notebook bar; else
  the terminal bar on standard error, even when it is not a terminal);
* ``progress=None`` (the default): the environment variable ``RNTUPLE_PROGRESS`` decides when
  set (``0``/``false``/``off``: never, ``1``/``true``/``on``: always); else the bar shows in a
  notebook (an IPython kernel) or when standard error is a terminal, and not when output goes to a
  file, a pipe or a batch job's log.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from . import _lib

__all__ = ["ENV", "NotebookSink", "Progress", "for_rust", "in_notebook", "wanted"]

ENV = "RNTUPLE_PROGRESS"
_OFF = {"0", "false", "no", "off"}
_ON = {"1", "true", "yes", "on"}


def in_notebook() -> bool:
    """Whether this process is a Jupyter (IPython) kernel: its output goes to a notebook."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return False
    try:
        shell = ipython.get_ipython()
    except Exception:
        return False
    return shell is not None and (hasattr(shell, "kernel") or type(shell).__name__ == "ZMQInteractiveShell")


def wanted(enabled: bool | None) -> bool | None:
    """``progress=`` resolved against ``RNTUPLE_PROGRESS``: True, False, or None (show when
    interactive)."""
    if enabled is not None:
        return bool(enabled)
    env = os.environ.get(ENV, "").strip().lower()
    if env in _OFF:
        return False
    if env in _ON:
        return True
    return None


class _TextBar:
    """A text line rewritten in place (``\\r``) on standard output: what a notebook shows when
    tqdm is not installed (Jupyter renders the carriage return as an update of the line)."""

    _EVERY = 0.2  # seconds between redraws

    def __init__(self, total: int, label: str, unit: str) -> None:
        self.total, self.label, self.unit = total, label, unit
        self.done = 0
        self._start = time.monotonic()
        self._drawn = 0.0
        self._draw()

    def _draw(self) -> None:
        elapsed = time.monotonic() - self._start
        pct = f" {100 * self.done / self.total:3.0f}%" if self.total else ""
        rate = f", {self.done / elapsed:,.0f} {self.unit}/s" if elapsed > 0 and self.done else ""
        line = f"{self.label}:{pct} {self.done:,}/{self.total:,} {self.unit}{rate}"
        sys.stdout.write("\r" + line)
        sys.stdout.flush()
        self._drawn = time.monotonic()

    def update(self, n: int) -> None:
        self.done += n
        if time.monotonic() - self._drawn >= self._EVERY or self.done >= self.total:
            self._draw()

    def close(self) -> None:
        self._draw()
        sys.stdout.write("\n")
        sys.stdout.flush()


def _notebook_bar(total: int, label: str, unit: str) -> Any:
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _TextBar(total, label, unit)
    return tqdm(total=total, desc=label, unit=f" {unit}", unit_scale=unit == "B", leave=True)


class Progress:
    """A progress bar: done / total, rate, ETA (see the module documentation for where and when
    it shows); the last state stays on screen after ``close()``."""

    def __init__(self, total: int, label: str, enabled: bool | None = None, unit: str = "entries") -> None:
        self.total = max(0, int(total))
        self.done = 0
        self._closed = False
        want = wanted(enabled)
        self._notebook: Any = None
        self._bar: Any = None
        if want is not False and in_notebook():
            self._notebook = _notebook_bar(self.total, label, unit)
        else:
            self._bar = _lib.ProgressBar(self.total, label, want, unit)

    @property
    def enabled(self) -> bool:
        return self._notebook is not None or bool(self._bar is not None and self._bar.enabled)

    @property
    def where(self) -> str:
        """``"notebook"``, ``"terminal"`` or ``"off"``."""
        if self._notebook is not None:
            return "notebook"
        return "terminal" if self.enabled else "off"

    def update(self, n: int) -> None:
        n = max(0, int(n))
        self.done += n
        if self._notebook is not None:
            self._notebook.update(n)
        else:
            self._bar.update(n)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._notebook is not None:
            self._notebook.close()
        else:
            self._bar.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class NotebookSink:
    """What a tool of the Rust core (``merge``, ``verify``) reports its progress to in a notebook:
    each phase it starts (``start(what, total, unit)``) gets a notebook bar."""

    def __init__(self) -> None:
        self._bar: Any = None

    def start(self, what: str, total: int, unit: str) -> None:
        self.finish()
        self._bar = _notebook_bar(int(total), what, unit)

    def update(self, n: int) -> None:
        if self._bar is not None:
            self._bar.update(int(n))

    def finish(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def for_rust(enabled: bool | None) -> bool | NotebookSink:
    """``progress=`` as the Rust tools take it: a :class:`NotebookSink` in a notebook, else whether
    to draw the terminal bar (which shows on a terminal only)."""
    want = wanted(enabled)
    if want is False:
        return False
    if in_notebook():
        return NotebookSink()
    return True
