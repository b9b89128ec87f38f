"""Integrations of ``rntuple`` with other libraries and stores: the place for them.

Each integration is a small module of this package (``rntuple.integrations.dask``,
remote stores such as ``rntuple.integrations.store.http``, ...) that

* imports its optional dependency lazily, inside the functions that need it,
  through :func:`require`, so that ``import rntuple`` stays fast and works
  without it, and a missing dependency is an ``ImportError`` that says what to
  install;
* builds on the public API only: handles pickle as (path or URL, name,
  options) (``rntuple.File`` and ``rntuple.RNTuple``), locations are paths or
  URLs dispatched by scheme in the Rust core, ``RNTuple.arrays`` reads
  columns over entry ranges (a partition is whole clusters: ``RNTuple.clusters``).

Nothing here is imported by ``import rntuple``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .._errors import MissingDependencyError

__all__ = ["require"]


def require(module: str, *, feature: str, extra: str | None = None) -> ModuleType:
    """Imports ``module``, an optional dependency of ``feature``.

    Raises ``ImportError`` naming the feature and what to install
    (``pip install 'rntuple[EXTRA]'`` when the package has an extra for it,
    else ``pip install MODULE``).
    """
    try:
        return importlib.import_module(module)
    except ImportError as err:
        top = module.split(".")[0]
        hint = f"pip install 'rntuple[{extra}]'" if extra else f"pip install {top}"
        raise MissingDependencyError(f"{feature} needs {top}, which is not installed: {hint}") from err
