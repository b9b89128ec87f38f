"""The skim workflow on the AGC example: read with column projection, select, write from the
workers with ``rntuple.dask_write``, read the skim.

    python examples/agc/generate.py /tmp/agc --files 8 --events 20000 --cluster 5000 --no-real
    python examples/agc/skim.py /tmp/agc /tmp/agc-skim [--workers 2] [--merge /tmp/agc-skim.root]

1. ``rntuple.dask`` over the dataset: a lazy array; only the columns the skim uses are read.
2. the AGC preselection (:func:`preselect`): exactly one tight lepton, at least four good jets, at
   least one b-tag; the skim keeps the 15 columns the analysis reads, of the selected events.
3. ``rntuple.dask_write``: every worker writes the partitions it computed as
   ``{out}/part-NNNNN.root`` (and, with ``--merge``, the parts are merged into one file).
4. the analysis (``analysis.observables``) on the skim, read back with ``rntuple.dask``, gives the
   same histograms as on the whole dataset, from a fraction of the bytes.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time
from typing import Any

import awkward as ak
import numpy as np
import rntuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from analysis import B_TAG, COLUMNS, REGIONS, fill, new_histograms, object_masks, observables  # noqa: E402


def preselect(events: Any) -> Any:
    """The events the AGC analysis can use (one tight lepton, >= 4 good jets, >= 1 b-tag), with
    the columns it reads: an awkward or dask-awkward array of records."""
    ele, mu, good_jet = object_masks(events)
    n_jets = ak.sum(good_jet, axis=1)
    n_btag = ak.sum(good_jet & (events.Jet_btagCSVV2 >= B_TAG), axis=1)
    selected = (ak.sum(ele, axis=1) + ak.sum(mu, axis=1) == 1) & (n_jets >= 4) & (n_btag >= 1)
    return events[selected][COLUMNS]


def skim(files: list[str], out: str, *, merge: str | None = None, step_size: int | str = "100 MB") -> Any:
    """Steps 1-3: the skim of ``files`` written to the directory (or URL) ``out``."""
    events = rntuple.dask(files, step_size=step_size)
    return rntuple.dask_write(preselect(events), out, merge=merge)


def histograms(files: list[str], client: Any = None) -> dict[str, Any]:
    """Step 4 (and the reference): the analysis' histograms of ``files``."""
    import dask

    events = rntuple.dask(files, filter_name=COLUMNS)
    (values,) = dask.compute(observables(events), scheduler=client)
    out = new_histograms()
    fill(out, values)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", help="a directory of files from generate.py, or a glob")
    parser.add_argument("out", help="the skim's directory (or URL prefix)")
    parser.add_argument("--merge", help="also merge the skim into this file")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    pattern = os.path.join(args.inputs, "*.root") if os.path.isdir(args.inputs) else args.inputs
    files = sorted(glob.glob(pattern))

    from distributed import Client, LocalCluster

    with (
        LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        Client(cluster),
    ):
        start = time.perf_counter()
        written = skim(files, args.out, merge=args.merge)
        wall = time.perf_counter() - start
        size_in = sum(os.path.getsize(f) for f in files)
        size_out = sum(b or 0 for b in written.bytes)
        print(
            f"skim: {len(files)} files, {size_in / 1e6:.1f} MB -> {len(written.paths)} parts, "
            f"{written.num_entries} events, {size_out / 1e6:.1f} MB in {wall:.2f} s"
        )
        if written.merged:
            print(f"merged: {written.merged} ({written.merge.pages_recompressed} pages recompressed)")
        full = histograms(files)
        skimmed = histograms(sorted(glob.glob(os.path.join(args.out, "part-*.root"))))
    same = all(np.array_equal(full[r].values(), skimmed[r].values()) for r in REGIONS)
    for region in REGIONS:
        print(region, skimmed[region].values().astype(int).tolist())
    print("histograms of the skim identical to the full dataset's:", same)


if __name__ == "__main__":
    main()
