"""``rntuple browse``: a web page showing what is inside a file.

The page shows the fields (sortable table of compressed and uncompressed
sizes, treemap), the columns (encodings, compression ratios), the clusters
and cluster groups, a byte map of the whole file (keys, anchor, header,
footer, page lists and every page coloured by field; hover for details, wheel
or buttons to zoom), the values of the first entries of a field (paged) and a
histogram of a numeric field computed by the server on request.

:func:`serve` starts the server (stdlib ``http.server``) on 127.0.0.1 and a
free port; :func:`write_html` writes one self-contained page with the data
embedded (no server; no values or histograms beyond the embedded ones). The
page uses no network resource: its script and style ship with the package.
"""

from __future__ import annotations

import html
import json
import os
import sys
from typing import Any

from .. import _lib
from .._errors import InvalidArgumentError
from .._read_args import memory_budget
from ._server import ASSETS, BrowseServer, asset
from ._source import DEFAULT_MAX_MEMORY, Source

__all__ = ["BrowseServer", "Source", "page_html", "serve", "write_html"]

#: Entries per field embedded in a static page, and the most bytes of values embedded.
STATIC_ENTRIES = 20
STATIC_VALUE_BYTES = 2_000_000


def _split(target: str) -> tuple[str, str | None]:
    from .._dataset import object_spec

    path, name = object_spec(target)
    return path, name


def serve(
    target: str,
    host: str = "127.0.0.1",
    port: int = 0,
    verify_checksums: bool = True,
    max_memory: int | str | None = DEFAULT_MAX_MEMORY,
) -> BrowseServer:
    """Starts serving the page of ``target`` (``FILE[:NAME]``, a path or URL) in
    a background thread; ``server.url`` is its address, ``server.stop()`` ends it.
    ``max_memory``: the budget of each read a request makes (bytes or ``"2 GB"``;
    None: none); a read over it is an error answer, and the server goes on."""
    path, name = _split(target)
    server = BrowseServer(Source(path, name, verify_checksums, max_memory), host=host, port=port)
    server.start()
    return server


def _static_values(source: Source) -> dict[str, Any]:
    """The first entries of every field of every readable RNTuple, up to a byte budget."""
    out: dict[str, Any] = {}
    budget = STATIC_VALUE_BYTES
    for name in source.rntuple_names():
        try:
            fields = source.fields(name)
        except KeyError:
            continue
        for field in fields:
            if budget <= 0:
                return out
            try:
                v = source.values(name, field, 0, STATIC_ENTRIES)
            except Exception as err:  # noqa: BLE001 - shown on the page
                v = {"rntuple": name, "field": field, "error": str(err)}
            budget -= len(json.dumps(v))
            out.setdefault(name, {})[field] = v
    return out


def page_html(source: Source) -> str:
    """The self-contained page of ``source``: script, style and data inline."""
    summary = source.summary()
    for r in summary["rntuples"]:
        if r["report"] is not None and r["pages"] is None:
            r["pages"] = [p for c in r["report"]["clusters"] for p in source.pages(r["name"], c["id"])]
    data = {"summary": summary, "values": _static_values(source)}
    text = json.dumps(data).replace("</", "<\\/").replace("<!--", "<\\!--")
    page = asset("index.html")
    page = page.replace(
        '<link rel="stylesheet" href="static/style.css">', "<style>\n" + asset("style.css") + "\n</style>"
    )
    script = asset("app.js").replace("</script", "<\\/script")
    page = page.replace('<script src="static/app.js"></script>', "<script>\n" + script + "\n</script>")
    page = page.replace("<title>rntuple browse</title>", f"<title>{html.escape(source.shown)} - rntuple browse</title>")
    return page.replace("<!--DATA-->", f'<script id="rntuple-data" type="application/json">{text}</script>')


def write_html(
    target: str,
    output: str | os.PathLike[str],
    verify_checksums: bool = True,
    max_memory: int | str | None = DEFAULT_MAX_MEMORY,
) -> str:
    """Writes the self-contained page of ``target`` to ``output``; returns its path."""
    path, name = _split(target)
    source = Source(path, name, verify_checksums, max_memory)
    try:
        text = page_html(source)
    finally:
        source.close()
    out = os.fspath(output)
    tmp = out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, out)
    return out


def main(args: dict[str, Any]) -> None:
    """``rntuple browse`` with the registry's parsed arguments."""
    verify = args.get("verify_checksums", True)
    try:
        budget = memory_budget(args.get("max_memory") or DEFAULT_MAX_MEMORY)
    except ValueError as err:
        raise InvalidArgumentError(f"--max-memory: {err}") from None
    if args.get("html"):
        out = write_html(args["target"], args["output"], verify, budget)
        print(f"wrote {out}")
        return
    host = args.get("host") or "127.0.0.1"
    if host not in ("127.0.0.1", "localhost", "::1", "[::1]"):
        print(
            f"rntuple browse: warning: listening on {host}: anyone who can reach this address can read the file",
            file=sys.stderr,
        )
    server = serve(args["target"], host=host, port=args.get("port") or 0, verify_checksums=verify, max_memory=budget)
    shown = _lib.redact_url(args["target"])
    print(f"rntuple browse: serving {shown} at {server.url} (Ctrl-C stops)", flush=True)
    try:
        if not args.get("no_browser"):
            import webbrowser

            webbrowser.open(server.url)
        while server._thread is not None and server._thread.is_alive():
            server._thread.join(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


# The static assets (for packaging checks).
_ASSETS = ("index.html", *ASSETS)
