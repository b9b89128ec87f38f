"""The CMS open-data ttbar analysis of the Analysis Grand Challenge, three ways.

Object selection, regions and observables as in iris-hep/analysis-grand-challenge
(``analyses/cms-open-data-ttbar``), without systematics or weights:

* electrons: pT > 30 GeV, |eta| < 2.1, ``cutBased == 4`` (tight), ``sip3d < 4``;
* muons: pT > 30 GeV, |eta| < 2.1, ``tightId``, ``sip3d < 4``, ``pfRelIso04_all < 0.15``;
* jets: pT > 30 GeV, |eta| < 2.4, tight lepton veto (``jetId`` bit 2);
  b-tagged when ``btagCSVV2 >= 0.5``;
* events: exactly one lepton, at least four jets, at least one b-tag;
* region 4j1b (exactly one b-tag): HT, the scalar sum of the jets' pT;
* region 4j2b (two or more b-tags): the mass of the trijet with the largest pT
  among the trijets with at least one b-tagged jet.

Histograms: 25 bins from 50 to 550 GeV (``hist``). The same ``observables``
function runs on awkward arrays (eager) and dask-awkward arrays (lazy):

    python examples/agc/analysis.py DIR_OF_FILES [--workers 2] [--ways dask,eager,uproot]

prints the histograms' counts, bytes read ÷ file size, and wall times.
"""

from __future__ import annotations

import argparse
import glob
import os
import time
from collections.abc import Callable, Iterable
from typing import Any

import awkward as ak
import hist
import numpy as np
import rntuple

B_TAG = 0.5
BINS = (25, 50.0, 550.0)
REGIONS = ("4j1b", "4j2b")
# The columns the analysis reads (the real AGC reads 7 branches groups of NanoAOD; here 15 columns).
COLUMNS = [
    "Jet_pt",
    "Jet_eta",
    "Jet_phi",
    "Jet_mass",
    "Jet_btagCSVV2",
    "Jet_jetId",
    "Electron_pt",
    "Electron_eta",
    "Electron_cutBased",
    "Electron_sip3d",
    "Muon_pt",
    "Muon_eta",
    "Muon_tightId",
    "Muon_sip3d",
    "Muon_pfRelIso04_all",
]


def _four_vector(pt: Any, eta: Any, phi: Any, mass: Any) -> tuple[Any, Any, Any, Any]:
    px, py, pz = pt * np.cos(phi), pt * np.sin(phi), pt * np.sinh(eta)
    return px, py, pz, np.sqrt(px * px + py * py + pz * pz + mass * mass)


def object_masks(events: Any) -> tuple[Any, Any, Any]:
    """The AGC's tight electrons, tight muons and good jets of each event (jagged masks)."""
    ele = (
        (events.Electron_pt > 30)
        & (abs(events.Electron_eta) < 2.1)
        & (events.Electron_cutBased == 4)
        & (events.Electron_sip3d < 4)
    )
    mu = (
        (events.Muon_pt > 30)
        & (abs(events.Muon_eta) < 2.1)
        & events.Muon_tightId
        & (events.Muon_sip3d < 4)
        & (events.Muon_pfRelIso04_all < 0.15)
    )
    good_jet = (events.Jet_pt > 30) & (abs(events.Jet_eta) < 2.4) & ((events.Jet_jetId & 4) != 0)
    return ele, mu, good_jet


def observables(events: Any) -> dict[str, Any]:
    """HT of the 4j1b events and the trijet mass of the 4j2b events (flat arrays).

    ``events``: an awkward or dask-awkward array of NanoAOD-style flat fields.
    """
    ele, mu, good_jet = object_masks(events)
    jets = ak.zip(
        {
            "pt": events.Jet_pt[good_jet],
            "eta": events.Jet_eta[good_jet],
            "phi": events.Jet_phi[good_jet],
            "mass": events.Jet_mass[good_jet],
            "btag": events.Jet_btagCSVV2[good_jet],
        }
    )
    n_btag = ak.sum(jets.btag >= B_TAG, axis=1)
    selected = (ak.sum(ele, axis=1) + ak.sum(mu, axis=1) == 1) & (ak.num(jets, axis=1) >= 4) & (n_btag >= 1)

    one_b = jets[selected & (n_btag == 1)]
    ht = ak.sum(one_b.pt, axis=1)

    two_b = jets[selected & (n_btag >= 2)]
    j1, j2, j3 = ak.unzip(ak.combinations(two_b, 3))
    parts = [_four_vector(j.pt, j.eta, j.phi, j.mass) for j in (j1, j2, j3)]
    px, py, pz, e = (parts[0][i] + parts[1][i] + parts[2][i] for i in range(4))
    has_b = (j1.btag >= B_TAG) | (j2.btag >= B_TAG) | (j3.btag >= B_TAG)
    tri_pt = np.sqrt(px * px + py * py)[has_b]
    tri_mass = np.sqrt(np.maximum(e * e - px * px - py * py - pz * pz, 0))[has_b]
    best = ak.argmax(tri_pt, axis=1, keepdims=True)
    mass = ak.flatten(tri_mass[best], axis=1)
    return {"4j1b": ht, "4j2b": ak.drop_none(mass, axis=0)}


def new_histograms() -> dict[str, hist.Hist]:
    labels = {"4j1b": "$H_T$ [GeV]", "4j2b": "$m_{bjj}$ [GeV]"}
    return {r: hist.Hist.new.Reg(*BINS, name="observable", label=labels[r]).Double() for r in REGIONS}


def fill(histograms: dict[str, hist.Hist], values: dict[str, Any]) -> None:
    for region in REGIONS:
        histograms[region].fill(observable=ak.to_numpy(values[region]))


# --------------------------------------------------------------------------
# The three ways


def run_dask(files: list[str], client: Any = None, step_size: int | str = "100 MB") -> dict[str, hist.Hist]:
    """``rntuple.dask``: one lazy array over all files; dask-awkward projects the columns."""
    import dask

    events = rntuple.dask(files, filter_name=COLUMNS, step_size=step_size)
    (values,) = dask.compute(observables(events), scheduler=client)
    out = new_histograms()
    fill(out, values)
    return out


def _batches(files: list[str], step_size: int | str) -> Iterable[ak.Array]:
    """``rntuple.iterate`` over the files; a loop over ``RNTuple.iterate`` while that is not there."""
    iterate: Callable[..., Iterable[ak.Array]] | None = getattr(rntuple, "iterate", None) if _has_iterate() else None
    if iterate is not None:
        yield from iterate(files, filter_name=COLUMNS, step_size=step_size)
        return
    for path in files:
        with rntuple.open(path) as f:
            yield from f["Events"].iterate(filter_name=COLUMNS, step_size=step_size)


def _has_iterate() -> bool:
    try:
        getattr(rntuple, "iterate")  # noqa: B009 (lazy export, may not exist yet)
    except AttributeError:
        return False
    return True


def run_eager(files: list[str], step_size: int | str = "100 MB") -> dict[str, hist.Hist]:
    """Eagerly, batch by batch, in this process."""
    out = new_histograms()
    for batch in _batches(files, step_size):
        fill(out, observables(batch))
    return out


def run_uproot(files: list[str], client: Any = None, handler: Any = None) -> dict[str, hist.Hist]:
    """``uproot.dask`` on the same files (``open_files=False``: the only mode of uproot 5.7 whose
    RNTuple graph deserialises on distributed workers)."""
    import dask
    import uproot

    options = {} if handler is None else {"handler": handler}
    events = uproot.dask({f: "Events" for f in files}, filter_name=COLUMNS, open_files=False, **options)
    (values,) = dask.compute(observables(events), scheduler=client)
    out = new_histograms()
    fill(out, values)
    return out


# --------------------------------------------------------------------------
# Measuring


def worker_read_bytes(client: Any) -> int:
    """Bytes the worker processes read through read(2) so far (``rchar`` of /proc/PID/io)."""

    def rchar() -> int:
        with open("/proc/self/io") as f:
            return int(next(line for line in f if line.startswith("rchar")).split()[1])

    return sum(client.run(rchar).values())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inputs", help="a directory of files from generate.py, or a glob")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--ways", default="dask,eager,uproot")
    args = parser.parse_args(argv)
    pattern = os.path.join(args.inputs, "*.root") if os.path.isdir(args.inputs) else args.inputs
    files = sorted(glob.glob(pattern))
    size = sum(os.path.getsize(f) for f in files)
    print(f"{len(files)} files, {size / 1e6:.1f} MB")

    import rntuple.integrations.dask as rdask
    from distributed import Client, LocalCluster

    results = {}
    with (
        LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster,
        Client(cluster) as client,
    ):
        # warm the workers up (imports), so that the first way timed does not pay for it
        client.run(lambda: __import__("rntuple.integrations.dask") and __import__("uproot") and None)
        for way in args.ways.split(","):
            client.run(rdask.reset_read_log)
            before = worker_read_bytes(client)
            start = time.perf_counter()
            if way == "dask":
                results[way] = run_dask(files, client)
            elif way == "eager":
                results[way] = run_eager(files)
            elif way == "uproot":
                import uproot

                results[way] = run_uproot(files, client, handler=uproot.source.file.MultithreadedFileSource)
            else:
                raise SystemExit(f"unknown way {way!r}")
            wall = time.perf_counter() - start
            read = worker_read_bytes(client) - before
            line = f"{way:7s} {wall:7.2f} s"
            if way != "eager":
                line += f"  worker read(2) bytes {read / 1e6:8.2f} MB ({read / size:.3f} of the files)"
            if way == "dask":
                logs = [e for log in client.run(rdask.read_log).values() for e in log]
                ours = sum(e["bytes_read"] for e in logs)
                line += f"  pages read {ours / 1e6:.2f} MB ({ours / size:.3f} of the files), {len(logs)} tasks"
            print(line)
    first = next(iter(results.values()))
    for region in REGIONS:
        print(region, first[region].values().astype(int).tolist())
    same = all(np.array_equal(h[r].values(), first[r].values()) for h in results.values() for r in REGIONS)
    print("histograms identical:", same)


if __name__ == "__main__":
    main()
