#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets into ``fuzz/seeds/<target>/``.

* ``whole_file``: small good files as they are.
* ``envelope``: the (decompressed) header, footer and page-list envelopes of a
  few good files.
* ``compression``: compression blocks of each algorithm ROOT writes, prefixed
  with the 3-byte little-endian uncompressed length the fuzz target expects.
* ``page``: one small page of each column type, in the input layout of
  ``fuzz_targets/page.rs``.

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


# Column type id -> bits on storage (RNTuple 1.0, "Column Description").
COLUMN_BITS = {
    0x00: 1, 0x01: 8, 0x02: 8, 0x03: 8, 0x04: 8, 0x05: 16, 0x06: 16, 0x07: 32, 0x08: 32, 0x09: 64,
    0x0A: 64, 0x0B: 16, 0x0C: 32, 0x0D: 64, 0x0E: 32, 0x0F: 64, 0x10: 96, 0x11: 16, 0x12: 16,
    0x13: 32, 0x14: 32, 0x15: 64, 0x16: 64, 0x17: 16, 0x18: 32, 0x19: 64, 0x1A: 32, 0x1B: 64,
    0x1C: 20, 0x1D: 12,
}  # fmt: skip


def page_seed(type_id: int, bits: int, page: bytes, value_range: tuple[float, float] | None = None) -> bytes:
    flags = 1 if value_range else 0
    lo, hi = value_range or (0.0, 0.0)
    return bytes([type_id, bits, flags]) + struct.pack("<dd", lo, hi) + page


def block(tag: bytes, body: bytes, usize: int) -> bytes:
    return tag + len(body).to_bytes(3, "little") + usize.to_bytes(3, "little") + body


def recover_seeds(out: Path) -> None:
    """Unfinished files with their journals for the ``recover`` target: ``u32`` length of the file,
    the file, the journal (written by rntuple's own writer, then abandoned)."""
    import tempfile

    import numpy as np
    import rntuple

    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, clusters, compression in (("two-clusters", 2, 505), ("three-uncompressed", 3, 0)):
            path = Path(tmp) / f"{name}.root"
            f = rntuple.recreate(path, compression=compression)
            w = f.mkrntuple("Events", {"x": np.int64, "y": np.float64})
            for c in range(clusters):
                x = np.arange(c * 20, c * 20 + 20, dtype=np.int64)
                w.extend({"x": x, "y": x * 0.5})
                w.commit_cluster()
            f.abandon()
            body = path.read_bytes()
            journal = Path(str(path) + ".rntuple-journal").read_bytes()
            (out / name).write_bytes(struct.pack("<I", len(body)) + body + journal)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", type=Path)
    args = ap.parse_args()
    seeds = HERE / "seeds"
    for target in ("whole_file", "envelope", "compression", "page"):
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
    for type_id, bits in COLUMN_BITS.items():
        n = 16
        page = bytes((i * 37 + 11) & 0xFF for i in range((n * bits + 7) // 8))
        if type_id in (0x0E, 0x0F, 0x1A, 0x1B):  # index columns: small non-decreasing offsets
            width = bits // 8
            page = b"".join((i * 3).to_bytes(width, "little") for i in range(n))
        value_range = (-1.0, 1.0) if type_id == 0x1D else None
        (seeds / "page" / f"type-{type_id:02x}").write_bytes(page_seed(type_id, bits, page, value_range))
    recover_seeds(seeds / "recover")
    for target in ("whole_file", "envelope", "compression", "page", "recover"):
        files = sorted((seeds / target).iterdir())
        print(f"{target}: {len(files)} seeds, {sum(f.stat().st_size for f in files)} bytes")


if __name__ == "__main__":
    main()
