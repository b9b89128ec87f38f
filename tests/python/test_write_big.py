"""A file of more than 4 GiB written by ``rntuple``, with pages larger than the maximum key size,
read back by ROOT 6.40 (issue 3: "payloads larger than the maximum key size split over several keys").

Only with ``RNTUPLE_BIG=1`` (as CI runs, like the > 4 GiB ROOT-written file of the reference tests).
The RNTuple has one ``std::uint64_t`` field, stored uncompressed in pages of 1 GiB + 64 MiB: more
than ROOT's default maximum key size of 1 GiB, so each page (with its checksum) is one payload split
over two ``RBlob`` keys (spec "Anchor schema", ``Max Key Size``); four pages make 4.25 GiB, so keys,
locators and the anchor lie beyond 2^32 (the TFile's large-file forms). The values are a
deterministic sequence: ROOT reads every entry and computes checksums, which are compared with the
same checksums computed here with numpy from the generator (not from anything written), and reads
the entries at the key boundaries of every page. The file is deleted afterwards.
"""

from __future__ import annotations

import json
import os
import subprocess

import numpy as np
import rntuple
from conftest import big_enabled, big_scratch_dir, root_python

MAX_KEY_SIZE = 1 << 30  # ROOT's default (RNTupleWriteOptions::fMaxKeySize), which we write too
PAGE_BYTES = (1 << 30) + (64 << 20)
PER_PAGE = PAGE_BYTES // 8
PAGES = 4
ENTRIES = PER_PAGE * PAGES
MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
CHUNK = 1 << 24
# A page's blob (page + 8-byte checksum) spans two keys; the first holds MAX_KEY_SIZE - 8 payload bytes
# (then the 8-byte offset of the second chunk), so element FIRST_IN_SECOND_KEY starts the second key.
FIRST_IN_SECOND_KEY = (MAX_KEY_SIZE - 8) // 8


def values(a: int, b: int) -> np.ndarray:
    """Entries [a, b) of the sequence: i * 0x9E3779B97F4A7C15 modulo 2^64."""
    return np.arange(a, b, dtype=np.uint64) * MULTIPLIER


def spots() -> list[int]:
    out = []
    for p in range(PAGES):
        first = p * PER_PAGE
        out += [first, first + FIRST_IN_SECOND_KEY - 1, first + FIRST_IN_SECOND_KEY, first + PER_PAGE - 1]
    return out


ROOT_CHECK = r"""
import json, sys, warnings
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import ROOT
ROOT.gROOT.SetBatch(True)
assert ROOT.gInterpreter.Declare(r'''
#pragma cling optimize(3)
#include <ROOT/RNTuple.hxx>
#include <ROOT/RNTupleReader.hxx>
#include <TFile.h>
#include <cstdint>
#include <memory>
#include <vector>
// n, sum, xor of v * (i | 1), max key size of the anchor, largest page locator, then the spot values
std::vector<std::uint64_t> rntuple_big_check(const char *path, const std::vector<std::uint64_t> &spots) {
   std::uint64_t maxKey = 0;
   {
      std::unique_ptr<TFile> f(TFile::Open(path));
      maxKey = f->Get<ROOT::RNTuple>("big")->GetMaxKeySize();
   }
   auto reader = ROOT::RNTupleReader::Open("big", path);
   std::uint64_t largest = 0;
   const auto &desc = reader->GetDescriptor();
   for (const auto &c : desc.GetClusterIterable())
      for (const auto &p : c.GetPageRange(0).GetPageInfos())
         largest = std::max<std::uint64_t>(largest, p.GetLocator().GetNBytesOnStorage());
   auto x = reader->GetView<std::uint64_t>("x");
   std::uint64_t n = reader->GetNEntries(), sum = 0, xr = 0;
   for (std::uint64_t i = 0; i < n; ++i) {
      auto v = x(i);
      sum += v;
      xr ^= v * (i | 1);
   }
   std::vector<std::uint64_t> out{n, sum, xr, maxKey, largest};
   for (auto s : spots)
      out.push_back(x(s));
   return out;
}
''')
spots = ROOT.std.vector["std::uint64_t"]([int(s) for s in json.loads(sys.argv[2])])
print(json.dumps([int(v) for v in ROOT.rntuple_big_check(sys.argv[1], spots)]))
"""


def expected() -> list[int]:
    total = 0
    xr = 0
    for a in range(0, ENTRIES, CHUNK):
        v = values(a, min(a + CHUNK, ENTRIES))
        total = (total + int(v.sum(dtype=np.uint64))) % (1 << 64)  # numpy sums wrap modulo 2^64, as C++ does
        xr ^= int(np.bitwise_xor.reduce(v * (np.arange(a, a + len(v), dtype=np.uint64) | np.uint64(1))))
    return [ENTRIES, total, xr, MAX_KEY_SIZE, PAGE_BYTES] + [int(values(s, s + 1)[0]) for s in spots()]


if big_enabled():

    def test_root_reads_pages_larger_than_the_max_key_size_in_a_file_over_4_gib(tmp_path):
        scratch = big_scratch_dir(tmp_path, PAGES * PAGE_BYTES)
        path = os.path.join(scratch, "big_written.root")
        try:
            with rntuple.recreate(path, compression=0) as f:
                w = f.mkrntuple(
                    "big",
                    {"x": np.uint64},
                    max_unzipped_page_size=PAGE_BYTES,
                    approx_zipped_cluster_size="2 GiB",
                    max_unzipped_cluster_size="2 GiB",
                    page_buffer_budget="2 GiB",
                )
                for p in range(PAGES):
                    for a in range(p * PER_PAGE, (p + 1) * PER_PAGE, CHUNK):
                        w.extend({"x": values(a, min(a + CHUNK, (p + 1) * PER_PAGE))})
                    w.commit_cluster()  # one page per cluster
            assert os.path.getsize(path) > PAGES * PAGE_BYTES > 1 << 32
            nt = rntuple.open(path)["big"]
            assert nt.num_entries == ENTRIES
            assert [c.num_entries for c in nt.clusters] == [PER_PAGE] * PAGES
            proc = subprocess.run(
                [root_python(), "-c", ROOT_CHECK, path, json.dumps(spots())], capture_output=True, text=True
            )
            assert proc.returncode == 0, proc.stderr[-3000:]
            got = json.loads(proc.stdout.strip().splitlines()[-1])
            want = expected()
            names = ["entries", "sum", "xor", "anchor max key size", "largest page", *(f"x[{s}]" for s in spots())]
            assert dict(zip(names, got, strict=True)) == dict(zip(names, want, strict=True))
        finally:
            if os.path.exists(path):
                os.remove(path)
            if scratch != str(tmp_path):
                os.rmdir(scratch)
