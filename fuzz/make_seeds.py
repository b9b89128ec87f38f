#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets into ``fuzz/seeds/<target>/``.

* ``whole_file``: small good files as they are.
* ``envelope``: the (decompressed) header, footer and page-list envelopes of a
  few good files.
* ``compression``: compression blocks of each algorithm ROOT writes, prefixed
  with the 3-byte little-endian uncompressed length the fuzz target expects.

Deterministic for given inputs and library versions. Usage:
``python fuzz/make_seeds.py [--source DIR]`` (``DIR`` as for
``tests/bad_files/make_bad.py``).
"""

from __future__ import annotations

import argparse
import shutil
import struct
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "bad_files"))

import cramjam  # noqa: E402
import xxhash  # noqa: E402
from make_bad import Good, decompress_blocks, find_source  # noqa: E402

WHOLE = [
    "rntviewer-testfile-uncomp-single-rntuple-v1-0-0-0.root",
    "rntviewer-testfile-multiple-rntuples-v1-0-0-0.root",
    "test_int_float_rntuple_v1-0-0-0.root",
    "test_stl_containers_rntuple_v1-0-0-0.root",
    "test_bit_rntuple_v1-0-0-0.root",
    "test_nested_structs_rntuple_v1-0-0-0.root",
    "test_multiple_representations_rntuple_v1-0-0-0.root",
    "test_extension_columns_rntuple_v1-0-0-0.root",
    "test_float_types_rntuple_v1-0-0-0.root",
    # not test_int_multicluster: 10^8 entries in 1.7 kB, too slow to fuzz
    "test_int_vfloat_tlv_vtlv_rntuple_v1-0-0-0.root",
    "test_splitint_rntuple_v1-0-1-0.root",
    "test_atomic_bitset_rntuple_v1-0-0-0.root",
    "test_class_inheritance_rntuple_v1-0-0-1.root",
]
ENVELOPES = [
    "rntviewer-testfile-uncomp-single-rntuple-v1-0-0-0.root",
    "test_stl_containers_rntuple_v1-0-0-0.root",
    "test_nested_structs_rntuple_v1-0-0-0.root",
    "test_multiple_representations_rntuple_v1-0-0-0.root",
    "test_extension_columns_rntuple_v1-0-0-0.root",
    "test_float_types_rntuple_v1-0-0-0.root",
]


def short(name: str) -> str:
    return name.removesuffix(".root")


def block(tag: bytes, body: bytes, usize: int) -> bytes:
    return tag + len(body).to_bytes(3, "little") + usize.to_bytes(3, "little") + body


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", type=Path)
    args = ap.parse_args()
    seeds = HERE / "seeds"
    for target in ("whole_file", "envelope", "compression"):
        shutil.rmtree(seeds / target, ignore_errors=True)
        (seeds / target).mkdir(parents=True)

    for name in WHOLE:
        shutil.copyfile(find_source(name, args.source), seeds / "whole_file" / name)

    plain = b""
    for name in ENVELOPES:
        g = Good(find_source(name, args.source).read_bytes())
        (seeds / "envelope" / f"{short(name)}.header").write_bytes(g.header)
        (seeds / "envelope" / f"{short(name)}.footer").write_bytes(g.footer)
        (seeds / "envelope" / f"{short(name)}.pagelist").write_bytes(g.page_list)
        a = g.anchor.values
        if g.header_compressed:
            raw = g.raw(a["seek_header"], a["nbytes_header"])
            assert decompress_blocks(raw, a["len_header"]) == g.header
            prefix = a["len_header"].to_bytes(3, "little")
            (seeds / "compression" / f"{short(name)}.header.zstd").write_bytes(prefix + raw)
        plain = plain or g.header

    n = len(plain).to_bytes(3, "little")
    out = seeds / "compression"
    (out / "plain").write_bytes(n + plain)
    (out / "zlib").write_bytes(n + block(b"ZL\x08", bytes(cramjam.zlib.compress(plain, level=6)), len(plain)))
    (out / "lzma").write_bytes(n + block(b"XZ\x00", bytes(cramjam.xz.compress(plain, preset=6)), len(plain)))
    lz4 = bytes(cramjam.lz4.compress_block(plain, store_size=False))
    lz4 = struct.pack(">Q", xxhash.xxh64_intdigest(lz4)) + lz4
    (out / "lz4").write_bytes(n + block(b"L4\x01", lz4, len(plain)))
    half = len(plain) // 2
    two = block(b"ZS\x01", bytes(cramjam.zstd.compress(plain[:half], level=5)), half) + block(
        b"ZS\x01", bytes(cramjam.zstd.compress(plain[half:], level=5)), len(plain) - half
    )
    (out / "zstd-two-chunks").write_bytes(n + two)
    for target in ("whole_file", "envelope", "compression"):
        files = sorted((seeds / target).iterdir())
        print(f"{target}: {len(files)} seeds, {sum(f.stat().st_size for f in files)} bytes")


if __name__ == "__main__":
    main()
