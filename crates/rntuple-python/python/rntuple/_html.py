"""Notebook views (``_repr_html_``) of a file, an RNTuple and a field.

What they show comes from the metadata the reader loads when it opens an
RNTuple (anchor, header, footer, page lists): the field tree with C++ types,
the entries, and per field the bytes its pages take on disk and once
decompressed (summed over its columns and those of its subfields) and their
ratio. No page is read. Fields with subfields are collapsible
(``<details>``), closed by default, so that a schema of thousands of fields
(ATLAS PHYSLITE: 2,402) renders as one line per top-level field.

The styles are inline and scoped to the ``rntuple-repr`` class, so the views
look the same in Jupyter, VS Code and a plain HTML page, in light and dark
themes (colors inherit).
"""

from __future__ import annotations

import html
from typing import Any

from . import _lib

__all__ = ["field_html", "file_html", "rntuple_html"]

_STYLE = """<style>
.rntuple-repr { font-family: var(--jp-code-font-family, monospace); font-size: 12px; line-height: 1.5; }
.rntuple-repr .rn-head { font-weight: bold; }
.rntuple-repr .rn-facts { opacity: 0.8; margin-bottom: 4px; }
.rntuple-repr .rn-row { display: grid; grid-template-columns: minmax(16em, 2fr) minmax(12em, 3fr) 7em 7em 4em;
  column-gap: 1em; align-items: baseline; }
.rntuple-repr .rn-cols { font-weight: bold; border-bottom: 1px solid currentColor; }
.rntuple-repr .rn-num { text-align: right; font-variant-numeric: tabular-nums; }
.rntuple-repr .rn-type { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; opacity: 0.85; }
.rntuple-repr .rn-name { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.rntuple-repr details > summary { cursor: pointer; list-style: none; }
.rntuple-repr details > summary::-webkit-details-marker { display: none; }
.rntuple-repr details > summary .rn-name::before { content: "\\25B8  "; }
.rntuple-repr details[open] > summary .rn-name::before { content: "\\25BE  "; }
.rntuple-repr .rn-leaf .rn-name::before { content: "\\00B7  "; opacity: 0.5; }
.rntuple-repr table { border-collapse: collapse; }
.rntuple-repr td, .rntuple-repr th { padding: 1px 10px 1px 0; text-align: left; }
</style>"""

_UNITS = ("B", "kB", "MB", "GB", "TB", "PB")


def _bytes(n: float | None) -> str:
    """``1234567`` -> ``"1.23 MB"`` (decimal units, as ``rntuple inspect``); None -> ``"-"``."""
    if n is None:
        return "-"
    value = float(n)
    for unit in _UNITS:
        if value < 1000 or unit == _UNITS[-1]:
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.3g} {unit}"
        value /= 1000
    return f"{n} B"  # not reached


def _ratio(compressed: int | None, uncompressed: int | None) -> str:
    if not compressed or uncompressed is None:
        return "-"
    return f"{uncompressed / compressed:.2f}"


def column_sizes(ntuple: Any) -> dict[int, tuple[int, int]] | None:
    """``{column id: (compressed bytes, uncompressed bytes)}`` from the page lists (the report of
    ``rntuple inspect``: metadata only), or None when the RNTuple cannot be opened again by path
    (one read from a file-like object)."""
    if getattr(ntuple, "_origin", None) is None:
        return None
    location, name, _ = ntuple._origin
    try:
        report = _lib.inspect(location, name.rpartition(";")[0] or name, False)
    except Exception:  # noqa: BLE001 - the view shows the sizes as unknown rather than failing
        return None
    rntuples = report.get("rntuples") or []
    if not rntuples:
        return None
    return {c["id"]: (int(c["compressed"]), int(c["uncompressed"])) for c in rntuples[0]["columns"]}


def _field_sizes(f: Any, sizes: dict[int, tuple[int, int]] | None, out: dict[int, tuple[int, int]]) -> tuple[int, int]:
    """Bytes of ``f``'s columns and of its subfields', into ``out[f.id]`` (alias columns of a
    projected field are its source's and count as nothing)."""
    zipped = unzipped = 0
    if sizes is not None and not f.projected:
        for representation in f.columns:
            for column in representation:
                z, u = sizes.get(column[0], (0, 0))
                zipped += z
                unzipped += u
    for c in f.children:
        z, u = _field_sizes(c, sizes, out)
        zipped += z
        unzipped += u
    out[f.id] = (zipped, unzipped)
    return zipped, unzipped


def _type_of(f: Any) -> str:
    text = f.type_name or f"({f.kind})"
    if f.type_alias and f.type_alias != f.type_name:  # as written: Double32_t, std::vector<uint32_t>
        text += f" [{f.type_alias}]"
    if f.projected:
        text += " (projected)"
    return text


def _row(f: Any, depth: int, sizes: dict[int, tuple[int, int]] | None, totals: dict[int, tuple[int, int]]) -> str:
    zipped, unzipped = totals.get(f.id, (0, 0))
    known = sizes is not None and not f.projected
    indent = f' style="padding-left: {1.2 * depth:.1f}em"' if depth else ""
    name = html.escape(f.name)
    kind = html.escape(_type_of(f))
    cells = (
        f'<span class="rn-name"{indent} title="{name}">{name}</span>'
        f'<span class="rn-type" title="{kind}">{kind}</span>'
        f'<span class="rn-num">{_bytes(zipped) if known else "-"}</span>'
        f'<span class="rn-num">{_bytes(unzipped) if known else "-"}</span>'
        f'<span class="rn-num">{_ratio(zipped, unzipped) if known else "-"}</span>'
    )
    if not f.children:
        return f'<div class="rn-row rn-leaf">{cells}</div>'
    inner = "".join(_row(c, depth + 1, sizes, totals) for c in f.children)
    return f'<details><summary class="rn-row">{cells}</summary>{inner}</details>'


def _tree(fields: list[Any], sizes: dict[int, tuple[int, int]] | None) -> str:
    totals: dict[int, tuple[int, int]] = {}
    for f in fields:
        _field_sizes(f, sizes, totals)
    header = (
        '<div class="rn-row rn-cols"><span>field</span><span>type</span>'
        '<span class="rn-num">compressed</span><span class="rn-num">uncompressed</span>'
        '<span class="rn-num">ratio</span></div>'
    )
    return header + "".join(_row(f, 0, sizes, totals) for f in fields)


def rntuple_html(ntuple: Any) -> str:
    """The notebook view of an RNTuple: counts, sizes and the collapsible field tree."""
    top, total, columns, alias = ntuple._inner.counts
    sizes = column_sizes(ntuple)
    fields = ntuple.fields
    clusters = len(ntuple.clusters)
    head = f"RNTuple {html.escape(repr(ntuple.name))}"
    if ntuple._file_path:
        head += f" in {html.escape(repr(ntuple._file_path))}"
    facts = (
        f"{ntuple.num_entries:,} entries in {clusters:,} cluster(s); {top:,} top-level fields, "
        f"{total:,} fields in all, {columns:,} columns" + (f" (+{alias:,} alias)" if alias else "")
    )
    if sizes is not None:
        zipped = sum(z for z, _ in sizes.values())
        unzipped = sum(u for _, u in sizes.values())
        facts += f"; pages {_bytes(zipped)} on disk, {_bytes(unzipped)} uncompressed (ratio {_ratio(zipped, unzipped)})"
    if ntuple.description:
        facts += f"; {html.escape(repr(ntuple.description))}"
    return (
        f'{_STYLE}<div class="rntuple-repr"><div class="rn-head">{head}</div>'
        f'<div class="rn-facts">{facts}</div>{_tree(fields, sizes)}</div>'
    )


def field_html(field: Any) -> str:
    """The notebook view of a field: its subtree with types and sizes."""
    ntuple = field._ntuple
    sizes = column_sizes(ntuple) if ntuple is not None else None
    where = f" of RNTuple {html.escape(repr(ntuple.name))}" if ntuple is not None else ""
    head = f"Field {html.escape(repr(field.path))}{where}"
    return f'{_STYLE}<div class="rntuple-repr"><div class="rn-head">{head}</div>{_tree([field], sizes)}</div>'


def file_html(file: Any) -> str:
    """The notebook view of a file: its RNTuples with their entries and fields, then its other keys
    (folded: ATLAS files hold dozens of TTree cycles)."""
    head = f"ROOT file {html.escape(repr(file.path))}"
    if file.closed:
        return f'{_STYLE}<div class="rntuple-repr"><div class="rn-head">{head} (closed)</div></div>'
    rows, others = [], []
    for key, classname in file.classnames().items():
        if classname != "ROOT::RNTuple":
            others.append(f"<tr><td>{html.escape(key)}</td><td>{html.escape(classname)}</td></tr>")
            continue
        entries = fields = ""
        if classname == "ROOT::RNTuple":
            try:
                ntuple = file[key]
                top, total, _, _ = ntuple._inner.counts
                entries, fields = f"{ntuple.num_entries:,}", f"{top:,} top-level ({total:,} in all)"
            except Exception as err:  # noqa: BLE001 - a key that cannot be read is shown, not fatal
                fields = html.escape(f"cannot read: {err}")
        rows.append(
            f"<tr><td>{html.escape(key)}</td><td>{html.escape(classname)}</td>"
            f'<td class="rn-num">{entries}</td><td>{fields}</td></tr>'
        )
    size = _bytes(file._lib_file.size)
    table = "<table><tr><th>RNTuple</th><th>class</th><th>entries</th><th>fields</th></tr>" + "".join(rows) + "</table>"
    if others:
        table += (
            f"<details><summary>{len(others)} other key{'s' if len(others) != 1 else ''}</summary>"
            "<table><tr><th>key</th><th>class</th></tr>" + "".join(others) + "</table></details>"
        )
    return f'{_STYLE}<div class="rntuple-repr"><div class="rn-head">{head}, {size}</div>{table}</div>'
