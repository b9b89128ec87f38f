"""The ``rntuple`` command line (``python -m rntuple``); the work is done by the Rust CLI."""

from __future__ import annotations

import os
import sys
from typing import NoReturn

from . import _lib

__all__ = ["main"]


def main(argv: list[str] | None = None) -> NoReturn:
    """Runs the ``rntuple`` command with ``argv`` (default ``sys.argv``) and exits with its status."""
    args = list(sys.argv if argv is None else argv)
    if not args or os.path.basename(args[0]) in ("__main__.py", "-m", "-c"):
        args[:1] = ["rntuple"]
    sys.stdout.flush()
    sys.stderr.flush()
    raise SystemExit(_lib.cli_main(args))


if __name__ == "__main__":
    main()
