#!/usr/bin/env python3
"""Make the corrupt RNTuple files of ``tests/data/bad/`` from good files ROOT wrote.

Every output file has exactly one defect. The script is deterministic: the same
inputs give byte-identical outputs, and it writes ``tests/data/bad/README.md``
listing each file with what is wrong and how it was made (from the docstrings of
the functions registered with ``@case`` below).

Usage::

    python tests/bad_files/make_bad.py [--source DIR] [--out DIR]

``--source`` is a folder holding the good files named in ``SOURCES`` (default:
``tests/data`` of the repository, then ``$RNTUPLE_TESTDATA``). They come from
scikit-hep-testdata (BSD-3-Clause). Needs ``xxhash`` and ``cramjam`` (both
installed with uproot).

Layouts used here: ROOT ``TFile`` (file header, ``TKey``, ``TDirectory``, key
list) as in ``io/io/src/TFile.cxx`` / ``TKey.cxx``, and RNTuple binary format
1.0 (``tree/ntuple/doc/BinaryFormatSpecification.md``): anchor, envelopes,
frames, locators, compression blocks.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import struct
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import cramjam
import xxhash

REPO = Path(__file__).resolve().parents[2]

# Short names for the good files the cases start from.
SOURCES = {
    # Everything stored uncompressed: envelopes and pages can be edited in place.
    "uncomp": "rntviewer-testfile-uncomp-single-rntuple-v1-0-0-0.root",
    # zstd-compressed envelopes and pages (compression setting 505).
    "int_float": "test_int_float_rntuple_v1-0-0-0.root",
    "stl": "test_stl_containers_rntuple_v1-0-0-0.root",
}


def xxh3(data: bytes) -> int:
    return xxhash.xxh3_64_intdigest(bytes(data))


# ---------------------------------------------------------------- ROOT TFile --


@dataclass
class Key:
    """A TKey header at ``start`` (absolute offsets of its patchable fields)."""

    start: int
    nbytes: int
    version: int
    objlen: int
    keylen: int
    seek_key: int
    seek_pdir: int
    class_name: str
    name: str
    title: str
    big: bool  # 8-byte seeks (key version > 1000)
    end: int  # offset just after the header

    @property
    def objlen_at(self) -> int:
        return self.start + 6

    @property
    def seek_key_at(self) -> int:
        return self.start + 18


def read_tstring(buf: bytes, pos: int) -> tuple[str, int]:
    n = buf[pos]
    pos += 1
    if n == 255:
        (n,) = struct.unpack_from(">i", buf, pos)
        pos += 4
    return buf[pos : pos + n].decode("latin-1"), pos + n


def read_key(buf: bytes, pos: int) -> Key:
    nbytes, version, objlen, _datime, keylen, _cycle = struct.unpack_from(">ihiIhh", buf, pos)
    p = pos + 18
    big = version > 1000
    if big:
        seek_key, seek_pdir = struct.unpack_from(">qq", buf, p)
        p += 16
    else:
        seek_key, seek_pdir = struct.unpack_from(">ii", buf, p)
        p += 8
    class_name, p = read_tstring(buf, p)
    name, p = read_tstring(buf, p)
    title, p = read_tstring(buf, p)
    return Key(pos, nbytes, version, objlen, keylen, seek_key, seek_pdir, class_name, name, title, big, p)


@dataclass
class TFile:
    """The few structures of a ROOT file the cases patch."""

    data: bytes
    big: bool  # 8-byte fEND / fSeekFree / fSeekInfo (fVersion >= 1000000)
    begin: int
    end: int
    seek_free: int
    nbytes_name: int
    dir_at: int  # start of the top TDirectory record
    seek_keys_at: int  # absolute offset of the fSeekKeys field
    seek_keys: int
    key_list: Key  # the key in front of the key list
    nkeys_at: int
    keys: list[Key]  # the entries of the key list (headers only)

    @property
    def end_at(self) -> int:
        return 12

    def anchor_key(self) -> Key:
        anchors = [k for k in self.keys if k.class_name == "ROOT::RNTuple"]
        assert len(anchors) == 1, "cases expect exactly one RNTuple"
        return anchors[0]


def parse_tfile(data: bytes) -> TFile:
    assert data[:4] == b"root"
    (version, begin) = struct.unpack_from(">ii", data, 4)
    big = version >= 1000000
    if big:
        end, seek_free, _nbytes_free, _nfree, nbytes_name = struct.unpack_from(">qqiii", data, 12)
    else:
        end, seek_free, _nbytes_free, _nfree, nbytes_name = struct.unpack_from(">iiiii", data, 12)
    dir_at = begin + nbytes_name
    (dir_version,) = struct.unpack_from(">h", data, dir_at)
    p = dir_at + 2 + 4 + 4 + 4 + 4  # version, ctime, mtime, nbyteskeys, nbytesname
    if dir_version > 1000:
        seek_keys_at = p + 16
        (seek_keys,) = struct.unpack_from(">q", data, seek_keys_at)
    else:
        seek_keys_at = p + 8
        (seek_keys,) = struct.unpack_from(">i", data, seek_keys_at)
    key_list = read_key(data, seek_keys)
    nkeys_at = seek_keys + key_list.keylen
    (nkeys,) = struct.unpack_from(">i", data, nkeys_at)
    keys = []
    p = nkeys_at + 4
    for _ in range(nkeys):
        k = read_key(data, p)
        keys.append(k)
        p = k.end
    return TFile(
        data, big, begin, end, seek_free, nbytes_name, dir_at, seek_keys_at, seek_keys, key_list, nkeys_at, keys
    )


# ------------------------------------------------------------- RNTuple anchor --

ANCHOR_FIELDS = (
    "epoch",
    "major",
    "minor",
    "patch",
    "seek_header",
    "nbytes_header",
    "len_header",
    "seek_footer",
    "nbytes_footer",
    "len_footer",
    "max_key_size",
)
ANCHOR_FMT = ">4H7Q"  # after the 4-byte byte count and 2-byte class version
ANCHOR_FIELDS_LEN = struct.calcsize(ANCHOR_FMT)  # 64


@dataclass
class Anchor:
    at: int  # absolute offset of the object (its byte count)
    values: dict[str, int]

    @property
    def fields_at(self) -> int:
        return self.at + 6

    @property
    def checksum_at(self) -> int:
        return self.fields_at + ANCHOR_FIELDS_LEN


def parse_anchor(f: TFile) -> Anchor:
    key = f.anchor_key()
    assert key.nbytes - key.keylen == key.objlen, "cases expect an uncompressed anchor"
    at = key.seek_key + key.keylen
    values = dict(zip(ANCHOR_FIELDS, struct.unpack_from(ANCHOR_FMT, f.data, at + 6), strict=True))
    (stored,) = struct.unpack_from(">Q", f.data, at + 6 + ANCHOR_FIELDS_LEN)
    assert stored == xxh3(f.data[at + 6 : at + 6 + ANCHOR_FIELDS_LEN]), "anchor checksum of the good file"
    return Anchor(at, values)


def write_anchor(buf: bytearray, anchor: Anchor, **changes: int) -> None:
    """Writes the anchor fields with ``changes`` and a recomputed checksum."""
    values = dict(anchor.values, **changes)
    fields = struct.pack(ANCHOR_FMT, *(values[n] for n in ANCHOR_FIELDS))
    buf[anchor.fields_at : anchor.checksum_at] = fields
    struct.pack_into(">Q", buf, anchor.checksum_at, xxh3(fields))


# ---------------------------------------------------- RNTuple envelope walking --


class Cursor:
    def __init__(self, buf: bytes, pos: int = 0):
        self.buf = buf
        self.pos = pos

    def take(self, fmt: str):
        vals = struct.unpack_from("<" + fmt, self.buf, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return vals if len(vals) > 1 else vals[0]

    def string(self) -> str:
        n = self.take("I")
        s = self.buf[self.pos : self.pos + n].decode()
        self.pos += n
        return s

    def feature_flags(self) -> None:
        while self.take("q") < 0:
            pass

    def frame(self) -> tuple[int, int, int | None]:
        """Reads a frame preamble: (start, end, number of items or None for a record)."""
        start = self.pos
        size = self.take("q")
        if size < 0:
            return start, start - size, self.take("I")
        return start, start + size, None


@dataclass
class HeaderLayout:
    """Offsets (inside the envelope) of what the header cases patch."""

    field_list_at: int  # the list frame of fields
    field_records: list[int]  # each field record frame
    column_list_at: int
    column_records: list[int]

    def parent_id_at(self, field: int) -> int:
        return self.field_records[field] + 8 + 4 + 4

    def column_field_id_at(self, column: int) -> int:
        return self.column_records[column] + 8 + 2 + 2


def list_items(c: Cursor) -> tuple[int, list[int], int]:
    start, end, n = c.frame()
    assert n is not None
    items = []
    for _ in range(n):
        items.append(c.pos)
        _, item_end, _ = c.frame()
        c.pos = item_end
    c.pos = end
    return start, items, end


def header_layout(env: bytes) -> HeaderLayout:
    c = Cursor(env, 8)
    c.feature_flags()
    for _ in range(3):  # name, description, writer
        c.string()
    field_list_at, fields, _ = list_items(c)
    column_list_at, columns, _ = list_items(c)
    return HeaderLayout(field_list_at, fields, column_list_at, columns)


@dataclass
class ClusterGroupLink:
    length: int
    locator_at: int  # offset of the locator inside the footer
    size: int
    offset: int


def footer_links(env: bytes) -> list[ClusterGroupLink]:
    c = Cursor(env, 8)
    c.feature_flags()
    c.take("Q")  # header checksum
    _, ext_end, _ = c.frame()
    c.pos = ext_end
    _, items, _ = list_items(c)
    links = []
    for item in items:
        c.pos = item + 8 + 8 + 8 + 4  # record size, min entry, entry span, number of clusters
        length = c.take("Q")
        locator_at = c.pos
        size, offset = c.take("iQ")
        assert size >= 0, "cases expect standard locators"
        links.append(ClusterGroupLink(length, locator_at, size, offset))
    return links


@dataclass
class PageRef:
    cluster: int
    column: int
    page: int
    nelements_at: int  # offset inside the page list envelope
    locator_at: int
    size: int
    offset: int
    checksum: bool


@dataclass
class PageListLayout:
    cluster_summaries: list[int]
    pages: list[PageRef]

    def cluster_flags_at(self, cluster: int) -> int:
        # record size (8), first entry (8), then 56-bit number of entries + 8-bit flags
        return self.cluster_summaries[cluster] + 8 + 8 + 7


def page_list_layout(env: bytes) -> PageListLayout:
    c = Cursor(env, 8)
    c.take("Q")  # header checksum
    _, summaries, _ = list_items(c)
    _, clusters, _ = list_items(c)
    pages = []
    for ci, cluster in enumerate(clusters):
        c.pos = cluster
        _, columns, _ = list_items(c)
        for col, column in enumerate(columns):
            c.pos = column
            _, _, npages = c.frame()
            for pi in range(npages or 0):
                nelements_at = c.pos
                nelements = c.take("i")
                locator_at = c.pos
                size, offset = c.take("iQ")
                assert size >= 0, "cases expect standard locators"
                pages.append(PageRef(ci, col, pi, nelements_at, locator_at, size, offset, nelements < 0))
    return PageListLayout(summaries, pages)


def set_envelope_checksum(buf: bytearray, at: int, length: int) -> None:
    """Recomputes the checksum of the (uncompressed, in-place) envelope at ``at``."""
    struct.pack_into("<Q", buf, at + length - 8, xxh3(buf[at : at + length - 8]))


# ------------------------------------------------------ compression blocks ----


def decompress_blocks(raw: bytes, length: int) -> bytes:
    """Inflates ROOT compression blocks (zstd and zlib are all the sources use)."""
    if len(raw) == length:
        return raw
    out = bytearray()
    pos = 0
    while pos < len(raw):
        tag = raw[pos : pos + 3]
        csize = int.from_bytes(raw[pos + 3 : pos + 6], "little")
        usize = int.from_bytes(raw[pos + 6 : pos + 9], "little")
        body = raw[pos + 9 : pos + 9 + csize]
        if tag == b"ZS\x01":
            chunk = bytes(cramjam.zstd.decompress(body))
        elif tag == b"ZL\x08":
            chunk = bytes(cramjam.zlib.decompress(body))
        else:
            raise ValueError(f"unexpected compression block {tag!r}")
        assert len(chunk) == usize
        out += chunk
        pos += 9 + csize
    assert len(out) == length
    return bytes(out)


# ------------------------------------------------------------- one RNTuple ----


class Good:
    """A parsed good file: TFile structures, anchor and envelopes."""

    def __init__(self, data: bytes):
        self.data = data
        self.tfile = parse_tfile(data)
        self.anchor = parse_anchor(self.tfile)
        a = self.anchor.values
        self.header_compressed = a["nbytes_header"] != a["len_header"]
        self.header = decompress_blocks(self.raw(a["seek_header"], a["nbytes_header"]), a["len_header"])
        self.footer = decompress_blocks(self.raw(a["seek_footer"], a["nbytes_footer"]), a["len_footer"])
        self.links = footer_links(self.footer)
        link = self.links[0]
        self.page_list = decompress_blocks(self.raw(link.offset, link.size), link.length)
        self.pages = page_list_layout(self.page_list)
        self.header_layout = header_layout(self.header)

    def raw(self, offset: int, size: int) -> bytes:
        assert offset + size <= len(self.data)
        return self.data[offset : offset + size]

    def buf(self) -> bytearray:
        return bytearray(self.data)

    def require_plain_page_list(self) -> None:
        assert all(link.size == link.length for link in self.links)

    def require_plain_envelopes(self) -> None:
        a = self.anchor.values
        assert a["nbytes_header"] == a["len_header"] and a["nbytes_footer"] == a["len_footer"]
        assert all(link.size == link.length for link in self.links)

    @property
    def header_at(self) -> int:
        return self.anchor.values["seek_header"]

    @property
    def footer_at(self) -> int:
        return self.anchor.values["seek_footer"]

    @property
    def page_list_at(self) -> int:
        return self.links[0].offset

    def retarget_header_checksum(self, buf: bytearray) -> None:
        """After editing the (plain) header in ``buf``: recomputes its checksum and
        the copies of it in footer and page list, and their checksums, so that the
        only defect left is the edit."""
        hlen = self.anchor.values["len_header"]
        set_envelope_checksum(buf, self.header_at, hlen)
        (hsum,) = struct.unpack_from("<Q", buf, self.header_at + hlen - 8)
        flen = self.anchor.values["len_footer"]
        c = Cursor(buf, self.footer_at + 8)
        c.feature_flags()
        struct.pack_into("<Q", buf, c.pos, hsum)
        set_envelope_checksum(buf, self.footer_at, flen)
        for link in self.links:
            struct.pack_into("<Q", buf, link.offset + 8, hsum)
            set_envelope_checksum(buf, link.offset, link.length)

    def compressed_page(self) -> PageRef:
        """The first page stored in a zstd block that no other page locator shares
        (ROOT's same-page merging points several columns to one page)."""
        uses: dict[int, int] = {}
        for p in self.pages.pages:
            uses[p.offset] = uses.get(p.offset, 0) + 1
        for p in self.pages.pages:
            if self.data[p.offset : p.offset + 3] == b"ZS\x01" and uses[p.offset] == 1:
                return p
        raise AssertionError("no compressed page")

    def set_page_checksum(self, buf: bytearray, page: PageRef) -> None:
        assert page.checksum
        end = page.offset + page.size
        struct.pack_into("<Q", buf, end, xxh3(buf[page.offset : end]))

    def append_at_end(self, buf: bytearray, blob: bytes) -> int:
        """Appends ``blob`` to the file and moves fEND (and the free segment that
        starts there) after it. Returns the offset of the blob."""
        f = self.tfile
        at = len(buf)
        buf += blob
        new_end = len(buf)
        struct.pack_into(">q" if f.big else ">i", buf, f.end_at, new_end)
        # The last free segment [fEND, 2000000000] of the free list follows fEND.
        free = read_key(bytes(buf), f.seek_free)
        (tfree_version,) = struct.unpack_from(">h", buf, free.end)
        fmt = ">q" if tfree_version > 1000 else ">i"
        (first,) = struct.unpack_from(fmt, buf, free.end + 2)
        if first == f.end:
            struct.pack_into(fmt, buf, free.end + 2, new_end)
        return at


# ------------------------------------------------------------------ cases ----

Case = Callable[[dict[str, Good]], bytes]
CASES: list[tuple[str, str, Case]] = []


def case(name: str, source: str):
    def register(fn: Case) -> Case:
        CASES.append((name, source, fn))
        return fn

    return register


def truncate(good: Good, length: int) -> bytes:
    """The first ``length`` bytes, with fEND in the file header saying so."""
    buf = good.buf()[:length]
    struct.pack_into(">q" if good.tfile.big else ">i", buf, good.tfile.end_at, length)
    return bytes(buf)


def flip_bit(buf: bytearray, at: int, bit: int = 0) -> None:
    buf[at] ^= 1 << bit


# --- TFile ---


@case("truncated_in_file_header", "uncomp")
def _(g: dict[str, Good]) -> bytes:
    """The file ends after 30 bytes, inside the 100-byte TFile header (after `fEND`)."""
    return g["uncomp"].data[:30]


@case("truncated_in_top_directory", "uncomp")
def _(g: dict[str, Good]) -> bytes:
    """The file ends 8 bytes into the `TDirectory` record of the top directory (before `fSeekKeys`); `fEND` in
    the file header is set to the new length, so only the directory reader can notice."""
    good = g["uncomp"]
    return truncate(good, good.tfile.dir_at + 8)


@case("truncated_in_key_list", "uncomp")
def _(g: dict[str, Good]) -> bytes:
    """The file ends 10 bytes into the first key header of the top directory's key list (after the key-list key
    and the key count); `fEND` in the file header is set to the new length, so only the key-list reader can
    notice."""
    good = g["uncomp"]
    return truncate(good, good.tfile.nkeys_at + 4 + 10)


@case("truncated_mid_file", "int_float")
def _(g: dict[str, Good]) -> bytes:
    """The zstd-compressed file cut to half its length (nothing else changed, so `fEND` in the file header
    points past the end): the key list, anchor and footer are gone."""
    return g["int_float"].data[: len(g["int_float"].data) // 2]


@case("wrong_file_magic", "uncomp")
def _(g: dict[str, Good]) -> bytes:
    """The first four bytes are `rooX` instead of `root`."""
    buf = g["uncomp"].buf()
    buf[3:4] = b"X"
    return bytes(buf)


@case("key_list_count_absurd", "uncomp")
def _(g: dict[str, Good]) -> bytes:
    """The number of keys in the top directory's key list is 0x7fffffff (the file has 1)."""
    buf = g["uncomp"].buf()
    struct.pack_into(">i", buf, g["uncomp"].tfile.nkeys_at, 0x7FFFFFFF)
    return bytes(buf)


@case("key_objlen_absurd", "uncomp")
def _(g: dict[str, Good]) -> bytes:
    """The anchor's key (both its entry in the key list and its own header) says ObjLen is
    0x7fffffff bytes while its payload is 78 bytes, i.e. it claims a compressed object."""
    good = g["uncomp"]
    buf = good.buf()
    key = good.tfile.anchor_key()
    struct.pack_into(">i", buf, key.objlen_at, 0x7FFFFFFF)
    struct.pack_into(">i", buf, key.seek_key + 6, 0x7FFFFFFF)
    return bytes(buf)


@case("directory_seek_keys_negative", "uncomp")
def _(g: dict[str, Good]) -> bytes:
    """The top directory's `fSeekKeys` (a 4-byte field in this file) is -1."""
    good = g["uncomp"]
    buf = good.buf()
    assert not good.tfile.big
    struct.pack_into(">i", buf, good.tfile.seek_keys_at, -1)
    return bytes(buf)


@case("key_seek_huge", "uncomp")
def _(g: dict[str, Good]) -> bytes:
    """The anchor's entry in the key list has `fSeekKey` = 0x7ffffff0, far past the end of the 2.5 kB file."""
    good = g["uncomp"]
    buf = good.buf()
    struct.pack_into(">i", buf, good.tfile.anchor_key().seek_key_at, 0x7FFFFFF0)
    return bytes(buf)


@case("anchor_cut_at_eof", "uncomp")
def _(g: dict[str, Good]) -> bytes:
    """The anchor's key is copied to the end of the file with only its first 20 payload bytes, and the
    key list points to the copy (fEND and the free list follow the new end): the file ends inside the anchor."""
    good = g["uncomp"]
    buf = good.buf()
    key = good.tfile.anchor_key()
    blob = bytearray(good.data[key.seek_key : key.seek_key + key.keylen + 20])
    at = good.append_at_end(buf, blob)
    struct.pack_into(">i", buf, at + 18, at)  # the copy's own fSeekKey
    struct.pack_into(">i", buf, key.seek_key_at, at)
    return bytes(buf)


# --- anchor ---


@case("anchor_checksum_mismatch", "uncomp")
def _(g: dict[str, Good]) -> bytes:
    """Bit 0 of the last byte of the anchor's xxh3 checksum is flipped."""
    good = g["uncomp"]
    buf = good.buf()
    flip_bit(buf, good.anchor.checksum_at + 7)
    return bytes(buf)


@case("anchor_epoch_2", "uncomp")
def _(g: dict[str, Good]) -> bytes:
    """The anchor says format version 2.0.0.0 (checksum recomputed)."""
    good = g["uncomp"]
    buf = good.buf()
    write_anchor(buf, good.anchor, epoch=2)
    return bytes(buf)


@case("anchor_seek_header_past_eof", "uncomp")
def _(g: dict[str, Good]) -> bytes:
    """The anchor's `fSeekHeader` is 2^40 (checksum recomputed)."""
    good = g["uncomp"]
    buf = good.buf()
    write_anchor(buf, good.anchor, seek_header=1 << 40)
    return bytes(buf)


@case("anchor_seek_footer_negative", "uncomp")
def _(g: dict[str, Good]) -> bytes:
    """The anchor's `fSeekFooter` is 0xffffffffffffffff, i.e. -1 (checksum recomputed)."""
    good = g["uncomp"]
    buf = good.buf()
    write_anchor(buf, good.anchor, seek_footer=(1 << 64) - 1)
    return bytes(buf)


@case("anchor_len_header_huge", "int_float")
def _(g: dict[str, Good]) -> bytes:
    """The anchor says the (zstd-compressed) header envelope inflates to 2^40 bytes (checksum recomputed)."""
    good = g["int_float"]
    assert good.header_compressed
    buf = good.buf()
    write_anchor(buf, good.anchor, len_header=1 << 40)
    return bytes(buf)


@case("header_envelope_cut_at_eof", "uncomp")
def _(g: dict[str, Good]) -> bytes:
    """The first half of the header envelope is copied to the end of the file and the anchor points to it
    (checksum recomputed; fEND follows the new end): the file ends inside the header envelope."""
    good = g["uncomp"]
    buf = good.buf()
    a = good.anchor.values
    at = good.append_at_end(buf, good.raw(a["seek_header"], a["nbytes_header"] // 2))
    write_anchor(buf, good.anchor, seek_header=at)
    return bytes(buf)


# --- header envelope ---


@case("header_checksum_mismatch", "uncomp")
def _(g: dict[str, Good]) -> bytes:
    """One bit of the RNTuple description string inside the header envelope is flipped
    (`The first ever` becomes `Uhe first ever`); the stored xxh3 no longer matches."""
    good = g["uncomp"]
    good.require_plain_envelopes()
    buf = good.buf()
    pos = good.header.index(b"The first ever")
    flip_bit(buf, good.header_at + pos, 0)
    return bytes(buf)


@case("header_field_count_absurd", "uncomp")
def _(g: dict[str, Good]) -> bytes:
    """The list frame of fields in the header says it holds 0x7fffffff items (it holds 2);
    header checksum recomputed, and its copies in footer and page list updated."""
    good = g["uncomp"]
    good.require_plain_envelopes()
    buf = good.buf()
    struct.pack_into("<I", buf, good.header_at + good.header_layout.field_list_at + 8, 0x7FFFFFFF)
    good.retarget_header_checksum(buf)
    return bytes(buf)


@case("header_field_parent_out_of_range", "uncomp")
def _(g: dict[str, Good]) -> bytes:
    """Field 1's parent field id is 1000 (there are 2 fields); checksums recomputed."""
    good = g["uncomp"]
    good.require_plain_envelopes()
    buf = good.buf()
    struct.pack_into("<I", buf, good.header_at + good.header_layout.parent_id_at(1), 1000)
    good.retarget_header_checksum(buf)
    return bytes(buf)


@case("header_field_parent_cycle", "uncomp")
def _(g: dict[str, Good]) -> bytes:
    """Fields 0 and 1 are each other's parent (neither is top-level); checksums recomputed."""
    good = g["uncomp"]
    good.require_plain_envelopes()
    buf = good.buf()
    struct.pack_into("<I", buf, good.header_at + good.header_layout.parent_id_at(0), 1)
    struct.pack_into("<I", buf, good.header_at + good.header_layout.parent_id_at(1), 0)
    good.retarget_header_checksum(buf)
    return bytes(buf)


@case("header_column_field_out_of_range", "uncomp")
def _(g: dict[str, Good]) -> bytes:
    """Column 0 belongs to field 77 (there are 2 fields); checksums recomputed."""
    good = g["uncomp"]
    good.require_plain_envelopes()
    buf = good.buf()
    struct.pack_into("<I", buf, good.header_at + good.header_layout.column_field_id_at(0), 77)
    good.retarget_header_checksum(buf)
    return bytes(buf)


@case("header_unknown_feature_flag", "uncomp")
def _(g: dict[str, Good]) -> bytes:
    """The header's feature flags have bit 5 set (format 1.0 defines none); checksums recomputed."""
    good = g["uncomp"]
    good.require_plain_envelopes()
    buf = good.buf()
    struct.pack_into("<Q", buf, good.header_at + 8, 1 << 5)
    good.retarget_header_checksum(buf)
    return bytes(buf)


@case("header_nested_deferred_columns", "uncomp")
def _(g: dict[str, Good]) -> bytes:
    """The header's feature flags have bit 0 set, format 1.1.0.0's "nested deferred columns" (which
    ROOT 6.42's merger sets); checksums recomputed."""
    good = g["uncomp"]
    good.require_plain_envelopes()
    buf = good.buf()
    struct.pack_into("<Q", buf, good.header_at + 8, 1)
    good.retarget_header_checksum(buf)
    return bytes(buf)


@case("header_length_field_mismatch", "uncomp")
def _(g: dict[str, Good]) -> bytes:
    """The length in the header envelope's preamble is 8 more than the envelope's size (which the anchor
    gives); checksums recomputed."""
    good = g["uncomp"]
    good.require_plain_envelopes()
    buf = good.buf()
    (word,) = struct.unpack_from("<Q", buf, good.header_at)
    struct.pack_into("<Q", buf, good.header_at, word + (8 << 16))
    good.retarget_header_checksum(buf)
    return bytes(buf)


@case("header_block_unknown_algorithm", "int_float")
def _(g: dict[str, Good]) -> bytes:
    """The compression block of the zstd-compressed header envelope has the tag `QQ\\x01` instead of `ZS\\x01`."""
    good = g["int_float"]
    assert good.header_compressed
    buf = good.buf()
    assert buf[good.header_at : good.header_at + 3] == b"ZS\x01"
    buf[good.header_at : good.header_at + 2] = b"QQ"
    return bytes(buf)


@case("header_block_size_lies", "int_float")
def _(g: dict[str, Good]) -> bytes:
    """The compression block of the header envelope claims 1 more uncompressed byte than the zstd data holds
    (and than the anchor's `fLenHeader`)."""
    good = g["int_float"]
    assert good.header_compressed
    buf = good.buf()
    at = good.header_at + 6
    usize = int.from_bytes(buf[at : at + 3], "little")
    buf[at : at + 3] = (usize + 1).to_bytes(3, "little")
    return bytes(buf)


# --- footer and page list ---


@case("footer_checksum_mismatch", "uncomp")
def _(g: dict[str, Good]) -> bytes:
    """Bit 0 of the cluster group's entry span in the footer envelope is flipped; stored xxh3 left alone."""
    good = g["uncomp"]
    good.require_plain_envelopes()
    buf = good.buf()
    link_at = good.links[0].locator_at
    flip_bit(buf, good.footer_at + link_at - 8 - 4 - 8)  # entry span, before nclusters and length
    return bytes(buf)


@case("footer_unknown_locator_type", "uncomp")
def _(g: dict[str, Good]) -> bytes:
    """The footer's locator of the page list envelope is a non-standard locator of type 0x7e (reserved),
    written as ROOT writes non-standard locators (`-(12 | 0x7e << 24)`, 8 payload bytes); checksum recomputed."""
    good = g["uncomp"]
    good.require_plain_envelopes()
    buf = good.buf()
    struct.pack_into("<i", buf, good.footer_at + good.links[0].locator_at, -(12 | (0x7E << 24)))
    set_envelope_checksum(buf, good.footer_at, good.anchor.values["len_footer"])
    return bytes(buf)


@case("page_list_sharded_cluster", "uncomp")
def _(g: dict[str, Good]) -> bytes:
    """Cluster 0's summary in the page list has flag 0x01 (sharded cluster, reserved); checksum recomputed."""
    good = g["uncomp"]
    good.require_plain_envelopes()
    buf = good.buf()
    buf[good.page_list_at + good.pages.cluster_flags_at(0)] = 0x01
    set_envelope_checksum(buf, good.page_list_at, good.links[0].length)
    return bytes(buf)


@case("page_list_cluster_entry_overflow", "uncomp")
def _(g: dict[str, Good]) -> bytes:
    """Cluster 0's summary in the page list says its first entry is 2^64 - 2, so first entry + number of
    entries overflows 64 bits; page list checksum recomputed. (Regression: found by the `whole_file` fuzz
    target, it panicked with "attempt to add with overflow" in the read engine.)"""
    good = g["uncomp"]
    good.require_plain_envelopes()
    buf = good.buf()
    struct.pack_into("<Q", buf, good.page_list_at + good.pages.cluster_summaries[0] + 8, (1 << 64) - 2)
    set_envelope_checksum(buf, good.page_list_at, good.links[0].length)
    return bytes(buf)


@case("page_list_columns_missing", "uncomp")
def _(g: dict[str, Good]) -> bytes:
    """Cluster 0's list of columns in the page list says it has 0 items (the header declares 4 columns, none of
    them a late schema extension); the frame keeps its size, so a reader skips the unread items. Page list
    checksum recomputed. (A reader that took the columns for absent would fill them with zeros; with a
    `std::array` of absurd size that was an unbounded allocation found by the `whole_file` fuzz target.)"""
    good = g["uncomp"]
    good.require_plain_envelopes()
    buf = good.buf()
    c = Cursor(good.page_list, 8 + 8)
    _, _, _ = list_items(c)  # cluster summaries
    _, clusters, _ = list_items(c)
    struct.pack_into("<I", buf, good.page_list_at + clusters[0] + 8, 0)
    set_envelope_checksum(buf, good.page_list_at, good.links[0].length)
    return bytes(buf)


@case("page_list_wrong_header_checksum", "uncomp")
def _(g: dict[str, Good]) -> bytes:
    """The header checksum recorded in the page list envelope is off by one bit; the page list's own
    checksum is recomputed, so only the cross-check with the header catches it."""
    good = g["uncomp"]
    good.require_plain_envelopes()
    buf = good.buf()
    flip_bit(buf, good.page_list_at + 8)
    set_envelope_checksum(buf, good.page_list_at, good.links[0].length)
    return bytes(buf)


# --- pages ---


def char_page(good: Good) -> PageRef:
    """The first page of the last column (the characters of `lastName` in the uncompressed file)."""
    last = max(p.column for p in good.pages.pages)
    return next(p for p in good.pages.pages if p.column == last)


@case("page_checksum_mismatch", "uncomp")
def _(g: dict[str, Good]) -> bytes:
    """Bit 5 of the first byte of the (uncompressed) first page of the last column (the characters of
    `lastName`) is flipped: `B` becomes `b`. The page's stored xxh3 no longer matches; with checksum
    verification off the file reads, with one changed character."""
    good = g["uncomp"]
    buf = good.buf()
    p = char_page(good)
    assert p.checksum
    flip_bit(buf, p.offset, 5)
    return bytes(buf)


@case("page_locator_past_eof", "uncomp")
def _(g: dict[str, Good]) -> bytes:
    """The locator of the first page of column 0 in the page list has offset 2^40; page list checksum
    recomputed."""
    good = g["uncomp"]
    good.require_plain_envelopes()
    buf = good.buf()
    p = good.pages.pages[0]
    struct.pack_into("<Q", buf, good.page_list_at + p.locator_at + 4, 1 << 40)
    set_envelope_checksum(buf, good.page_list_at, good.links[0].length)
    return bytes(buf)


@case("page_cut_at_eof", "uncomp")
def _(g: dict[str, Good]) -> bytes:
    """The first 5 bytes of the first page of the last column are copied to the end of the file and the page
    list points to the copy (page list checksum recomputed; fEND follows the new end): the file ends inside
    a page."""
    good = g["uncomp"]
    good.require_plain_envelopes()
    buf = good.buf()
    p = char_page(good)
    assert p.size > 5
    at = good.append_at_end(buf, good.raw(p.offset, 5))
    struct.pack_into("<Q", buf, good.page_list_at + p.locator_at + 4, at)
    set_envelope_checksum(buf, good.page_list_at, good.links[0].length)
    return bytes(buf)


@case("page_block_size_lies", "stl")
def _(g: dict[str, Good]) -> bytes:
    """The compression block of the first (unshared) zstd-compressed page claims a compressed size 64 bytes larger than
    the page; the page checksum is recomputed so only the block check catches it."""
    good = g["stl"]
    buf = good.buf()
    p = good.compressed_page()
    at = p.offset + 3
    csize = int.from_bytes(buf[at : at + 3], "little")
    assert csize + 9 == p.size
    buf[at : at + 3] = (csize + 64).to_bytes(3, "little")
    good.set_page_checksum(buf, p)
    return bytes(buf)


@case("page_zstd_garbage", "stl")
def _(g: dict[str, Good]) -> bytes:
    """The zstd frame magic inside the first (unshared) compressed page is zeroed (`28 b5 2f fd` → `00 00 00 00`);
    the page checksum is recomputed so that only decompression catches it."""
    good = g["stl"]
    buf = good.buf()
    p = good.compressed_page()
    assert buf[p.offset + 9 : p.offset + 13] == b"\x28\xb5\x2f\xfd"
    buf[p.offset + 9 : p.offset + 13] = b"\0\0\0\0"
    good.set_page_checksum(buf, p)
    return bytes(buf)


@case("page_inflates_short", "stl")
def _(g: dict[str, Good]) -> bytes:
    """The first (unshared) zstd-compressed page is replaced in place by a zstd block of the same size whose
    header claims the page's uncompressed size but whose data (a valid zstd frame, padded to the old size with
    a zstd skippable frame) inflates to fewer bytes. Page checksum recomputed."""
    good = g["stl"]
    buf = good.buf()
    p = good.compressed_page()
    raw = good.raw(p.offset, p.size)
    usize = int.from_bytes(raw[6:9], "little")
    plain = decompress_blocks(raw, usize)
    for short, level in ((k, lv) for k in range(1, 17) for lv in (1, 3, 5, 9, 19)):
        body = bytes(cramjam.zstd.compress(plain[:-short], level=level))
        room = p.size - 9 - len(body)
        if room == 0 or room >= 8:
            break
    else:
        raise AssertionError("no zstd frame fits")
    if room:
        body += struct.pack("<II", 0x184D2A50, room - 8) + b"\0" * (room - 8)
    block = b"ZS\x01" + len(body).to_bytes(3, "little") + usize.to_bytes(3, "little") + body
    assert len(block) == p.size
    buf[p.offset : p.offset + p.size] = block
    good.set_page_checksum(buf, p)
    return bytes(buf)


# ------------------------------------------------------------------- main ----

README_HEAD = """\
# Corrupt RNTuple files

Each file here has exactly one defect. They are made by
[`tests/bad_files/make_bad.py`](../../bad_files/make_bad.py) from good files
written by ROOT (from scikit-hep-testdata, BSD-3-Clause); rerun it to regenerate
them byte for byte. Every file has its own test in
`crates/rntuple/tests/bad_files.rs`, and a test there fails if one has none.

Offsets are absolute file offsets unless stated otherwise. "Checksums
recomputed" means the file's xxh3 checksums were made to match again, so that
only the structural check can catch the defect.

The files are byte-exact reproductions except `page_inflates_short.root`,
whose zstd frame comes from the zstd library bundled with `cramjam`.

Sources:

"""


def find_source(name: str, source_dir: Path | None) -> Path:
    candidates = []
    if source_dir is not None:
        candidates.append(source_dir)
    candidates.append(REPO / "tests" / "data")
    if "RNTUPLE_TESTDATA" in os.environ:
        candidates.append(Path(os.environ["RNTUPLE_TESTDATA"]))
    for d in candidates:
        if (d / name).is_file():
            return d / name
    sys.exit(f"cannot find {name} in {', '.join(map(str, candidates))} (use --source)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", type=Path, help="folder with the good files")
    ap.add_argument("--out", type=Path, default=REPO / "tests" / "data" / "bad")
    args = ap.parse_args()

    paths = {short: find_source(name, args.source) for short, name in SOURCES.items()}
    goods = {short: Good(p.read_bytes()) for short, p in paths.items()}
    args.out.mkdir(parents=True, exist_ok=True)

    readme = [README_HEAD]
    for short, name in SOURCES.items():
        digest = hashlib.sha256(goods[short].data).hexdigest()
        readme.append(f"* `{short}`: `{name}` (sha256 `{digest[:16]}…`)\n")
    readme.append("\n| file | source | defect and how it was made |\n|---|---|---|\n")
    names = set()
    for name, source, fn in CASES:
        assert name not in names, name
        names.add(name)
        data = fn(goods)
        (args.out / f"{name}.root").write_bytes(data)
        doc = " ".join((fn.__doc__ or "").split()).replace("|", "\\|")
        readme.append(f"| `{name}.root` | `{source}` | {doc} |\n")
        print(f"{name}.root: {len(data)} bytes")
    for stale in sorted(args.out.glob("*.root")):
        if stale.stem not in names:
            print(f"warning: {stale} is not made by this script", file=sys.stderr)
    (args.out / "README.md").write_text("".join(readme))


if __name__ == "__main__":
    main()
