#!/usr/bin/env python3
"""ROOT 6.40 reads streamer fields this project wrote, through a compiled dictionary of their
classes (``streamer/streamer_write_classes.hxx``: ``WHit``, ``WBase``, ``WDerived``), and prints
the values its ``RNTupleReader`` gives as JSON (one object per entry; a base class as the member
``:_0``, as ROOT names base subfields). Used by ``tests/python/test_streamer_write.py``::

    ~/.cache/rntuple-ci/venv/bin/python tests/reference/streamer_write_root.py FILE [NTUPLE]

The fields read are those of the RNTuple whose names appear in ``FIELDS`` (``hit``: ``WHit``,
``hits``: ``std::vector<WHit>``, ``der``: ``WDerived``).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

from root_dictionary import hit, import_root, load_dictionary

HERE = os.path.dirname(os.path.abspath(__file__))

READ = r"""
#include <ROOT/RNTupleReader.hxx>
#include "streamer_write_classes.hxx"
void rntuple_w26_read(const char *path, const char *name, std::vector<WHit> &hit,
                      std::vector<std::vector<WHit>> &hits, std::vector<WDerived> &der) {
   auto reader = ROOT::RNTupleReader::Open(name, path);
   auto entry = reader->CreateEntry();
   for (ROOT::NTupleSize_t i = 0; i < reader->GetNEntries(); ++i) {
      reader->LoadEntry(i, *entry);
      hit.push_back(*entry->GetPtr<WHit>("hit"));
      hits.push_back(*entry->GetPtr<std::vector<WHit>>("hits"));
      der.push_back(*entry->GetPtr<WDerived>("der"));
   }
}
"""


def main() -> int:
    path = os.path.abspath(sys.argv[1])
    name = sys.argv[2] if len(sys.argv) > 2 else "Events"
    ROOT = import_root()  # noqa: N806
    with tempfile.TemporaryDirectory() as d:
        load_dictionary(
            ROOT,
            os.path.join(HERE, "streamer"),
            ["streamer_write_classes.hxx", "streamer_write_linkdef.h"],
            d,
            ["Core", "RIO"],
        )
        if not ROOT.gInterpreter.Declare(READ):
            raise RuntimeError("cannot compile the reader")
        vector = ROOT.std.vector
        hits_, vhits, ders = vector["WHit"](), vector["std::vector<WHit>"](), vector["WDerived"]()
        ROOT.rntuple_w26_read(path, name, hits_, vhits, ders)
        out = []
        for i in range(hits_.size()):
            d_ = ders[i]
            out.append(
                {
                    "hit": hit(hits_[i]),
                    "hits": [hit(x) for x in vhits[i]],
                    "der": {
                        ":_0": {"w": float(d_.w), "tags": [int(t) for t in d_.tags]},
                        "h": hit(d_.h),
                        "more": [hit(x) for x in d_.more],
                        "big": int(d_.big),
                        "name": str(d_.name),
                        "ok": bool(d_.ok),
                    },
                }
            )
    json.dump(out, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
