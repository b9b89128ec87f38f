"""The AGC ttbar analysis (analysis.py) as a coffea processor on NanoEvents read by rntuple.

The selection and observables are analysis.py's, written against coffea's NanoEvents
collections (``events.Jet.pt`` rather than ``events.Jet_pt``); the events come from
``rntuple.integrations.coffea.NanoEventsFactory`` (coffea's ``from_root`` signature,
rntuple's reader) in virtual or dask mode, or from coffea's own factory (uproot):

    python examples/agc/coffea_processor.py FILE.root [--mode dask] [--reader uproot]
"""

from __future__ import annotations

import argparse
import time
import warnings
from typing import Any

import awkward as ak
import hist
import numpy as np
from coffea import processor
from coffea.nanoevents import NanoAODSchema

B_TAG = 0.5
BINS = (25, 50.0, 550.0)
REGIONS = ("4j1b", "4j2b")


def _four_vector(pt: Any, eta: Any, phi: Any, mass: Any) -> tuple[Any, Any, Any, Any]:
    px, py, pz = pt * np.cos(phi), pt * np.sin(phi), pt * np.sinh(eta)
    return px, py, pz, np.sqrt(px * px + py * py + pz * pz + mass * mass)


class TtbarProcessor(processor.ProcessorABC):
    """HT of the 4j1b events and the b-tagged trijet mass of the 4j2b events."""

    def process(self, events: Any) -> dict[str, Any]:
        el, mu, jet = events.Electron, events.Muon, events.Jet
        ele = (el.pt > 30) & (abs(el.eta) < 2.1) & (el.cutBased == 4) & (el.sip3d < 4)
        muo = (mu.pt > 30) & (abs(mu.eta) < 2.1) & mu.tightId & (mu.sip3d < 4) & (mu.pfRelIso04_all < 0.15)
        good = (jet.pt > 30) & (abs(jet.eta) < 2.4) & ((jet.jetId & 4) != 0)
        jets = ak.zip(
            {
                "pt": jet.pt[good],
                "eta": jet.eta[good],
                "phi": jet.phi[good],
                "mass": jet.mass[good],
                "btag": jet.btagCSVV2[good],
            }
        )
        n_btag = ak.sum(jets.btag >= B_TAG, axis=1)
        selected = (ak.sum(ele, axis=1) + ak.sum(muo, axis=1) == 1) & (ak.num(jets, axis=1) >= 4) & (n_btag >= 1)
        ht = ak.sum(jets[selected & (n_btag == 1)].pt, axis=1)
        two_b = jets[selected & (n_btag >= 2)]
        j1, j2, j3 = ak.unzip(ak.combinations(two_b, 3))
        parts = [_four_vector(j.pt, j.eta, j.phi, j.mass) for j in (j1, j2, j3)]
        px, py, pz, e = (parts[0][i] + parts[1][i] + parts[2][i] for i in range(4))
        has_b = (j1.btag >= B_TAG) | (j2.btag >= B_TAG) | (j3.btag >= B_TAG)
        tri_pt = np.sqrt(px * px + py * py)[has_b]
        tri_mass = np.sqrt(np.maximum(e * e - px * px - py * py - pz * pz, 0))[has_b]
        best = ak.argmax(tri_pt, axis=1, keepdims=True)
        mass = ak.drop_none(ak.flatten(tri_mass[best], axis=1), axis=0)
        return {"4j1b": ht, "4j2b": mass}

    def postprocess(self, accumulator: Any) -> Any:
        return accumulator


def events(path: str, mode: str, reader: str = "rntuple") -> Any:
    """NanoEvents of ``path``'s ``Events`` in coffea's ``mode``, read by ``reader``."""
    if reader == "rntuple":
        from rntuple.integrations.coffea import NanoEventsFactory
    else:
        from coffea.nanoevents import NanoEventsFactory  # type: ignore[no-redef]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return NanoEventsFactory.from_root({path: "Events"}, mode=mode, schemaclass=NanoAODSchema).events()


def run(path: str, mode: str = "dask", reader: str = "rntuple", scheduler: Any = "sync") -> dict[str, hist.Hist]:
    """The processor's histograms over ``path``."""
    out = TtbarProcessor().process(events(path, mode, reader))
    if mode == "dask":
        import dask

        (out,) = dask.compute(out, scheduler=scheduler)
    histograms = {r: hist.Hist.new.Reg(*BINS, name="observable").Double() for r in REGIONS}
    for region in REGIONS:
        histograms[region].fill(observable=ak.to_numpy(out[region]))
    return histograms


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--mode", default="dask", choices=["eager", "virtual", "dask"])
    parser.add_argument("--reader", default="rntuple", choices=["rntuple", "uproot"])
    args = parser.parse_args(argv)
    start = time.perf_counter()
    histograms = run(args.path, args.mode, args.reader)
    wall = time.perf_counter() - start
    for region, h in histograms.items():
        print(region, h.values().astype(int).tolist())
    print(f"wall {wall:.2f} s ({args.reader}, {args.mode})")


if __name__ == "__main__":
    main()
