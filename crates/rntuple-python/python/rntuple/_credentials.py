"""Credentials in the URLs a pickle would carry.

A pickled :class:`~rntuple.File` or :class:`~rntuple.RNTuple` holds the path or URL it reopens.
A URL with credentials in it (``user:password@``, a presigned signature, an ``authz=`` or
``access_token=`` parameter: what ``_lib.redact_url`` removes) would travel with the pickle to
wherever it is sent (a Dask worker, a file, a log). Such a handle is not pickled unless the user
says so with ``RNTUPLE_PICKLE_CREDENTIALS=1``; credentials from the environment (``BEARER_TOKEN``,
``AWS_*``) are never in a pickle, the worker finds its own.
"""

from __future__ import annotations

import os
import pickle

from . import _lib

__all__ = ["PICKLE_CREDENTIALS_ENV", "picklable_location"]

#: Set to ``1`` to pickle handles whose URL carries credentials.
PICKLE_CREDENTIALS_ENV = "RNTUPLE_PICKLE_CREDENTIALS"


def picklable_location(location: str) -> str:
    """``location``, if a pickle may carry it; else :class:`pickle.PicklingError`."""
    shown = _lib.redact_url(location)
    if shown != location and os.environ.get(PICKLE_CREDENTIALS_ENV) != "1":
        raise pickle.PicklingError(
            f"{shown}: the URL carries credentials, which a pickle would carry to wherever it is sent; "
            f"give them through the environment (BEARER_TOKEN, AWS_*) or set {PICKLE_CREDENTIALS_ENV}=1"
        )
    return location
