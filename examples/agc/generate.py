"""Writes NanoAOD-like RNTuple files for the Analysis Grand Challenge example, deterministically.

Each file holds an ``Events`` RNTuple with the columns the AGC ttbar analysis
reads (``Jet_pt/eta/phi/mass/btagCSVV2/jetId``, ``Electron_pt/eta/cutBased/sip3d``,
``Muon_pt/eta/tightId/sip3d/pfRelIso04_all``), their counts (``nJet``,
``nElectron``, ``nMuon``) and a few columns it does not read (so that a
projection has something to skip), with distributions shaped like a
semi-leptonic ttbar sample: about seven jets above 15 GeV with falling pT,
two of them b-like, a lepton in most events. The same arguments give the
same bytes.

    python examples/agc/generate.py OUTDIR --files 20 --events 20000 --cluster 5000

also converts the bundled real NanoAOD TTree (``tests/data``) into
``OUTDIR/real_nanoaod.root`` unless ``--no-real``.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import awkward as ak
import numpy as np
import rntuple

REAL_NANOAOD = Path(__file__).resolve().parents[2] / "tests" / "data" / "nanoAOD_2015_CMS_Open_Data_ttbar.root"


def _falling_pt(rng: np.random.Generator, n: int, floor: float, scale: float) -> np.ndarray:
    return (floor + rng.exponential(scale, n)).astype(np.float32)


def _jagged(counts: np.ndarray, flat: np.ndarray) -> ak.Array:
    return ak.unflatten(flat, counts)


def _lepton(rng: np.random.Generator, prefix: str, n: int, mass: float) -> dict[str, np.ndarray]:
    """Kinematics and charge of ``n`` leptons (NanoAODSchema needs mass and charge)."""
    return {
        f"{prefix}_pt": _falling_pt(rng, n, 10.0, 30.0),
        f"{prefix}_eta": rng.normal(0.0, 1.2, n).astype(np.float32),
        f"{prefix}_phi": rng.uniform(-np.pi, np.pi, n).astype(np.float32),
        f"{prefix}_mass": np.full(n, mass, dtype=np.float32),
        f"{prefix}_charge": rng.choice(np.array([-1, 1], dtype=np.int32), n),
    }


def make_events(n: int, seed: int) -> ak.Array:
    """``n`` NanoAOD-like events from the random stream ``seed``."""
    rng = np.random.default_rng(seed)
    n_jet = rng.poisson(7.0, n).astype(np.uint32)
    nj = int(n_jet.sum())
    # Jets: pT-ordered within each event, as NanoAOD stores them.
    pt = _falling_pt(rng, nj, 15.0, 50.0)
    order = np.lexsort((-pt, np.repeat(np.arange(n), n_jet)))
    pt = pt[order]
    b_like = rng.random(nj) < 0.3
    btag = np.where(b_like, rng.beta(6.0, 1.5, nj), rng.beta(1.0, 6.0, nj)).astype(np.float32)
    jet_id = rng.choice(np.array([2, 6, 6, 6, 6, 6, 6, 6, 0], dtype=np.int32), nj)
    jets = {
        "Jet_pt": pt,
        "Jet_eta": np.clip(rng.normal(0.0, 1.6, nj), -4.7, 4.7).astype(np.float32),
        "Jet_phi": rng.uniform(-np.pi, np.pi, nj).astype(np.float32),
        "Jet_mass": (pt * rng.uniform(0.05, 0.25, nj)).astype(np.float32),
        "Jet_btagCSVV2": btag,
        "Jet_jetId": jet_id,
        "Jet_area": rng.normal(0.5, 0.05, nj).astype(np.float32),
        "Jet_qgl": rng.random(nj).astype(np.float32),
    }
    # Leptons: 0, 1 or 2 of each flavour; most events have one lepton in total.
    n_ele = rng.choice(np.array([0, 0, 1, 2], dtype=np.uint32), n)
    n_mu = rng.choice(np.array([0, 0, 1, 1, 2], dtype=np.uint32), n)
    ne, nm = int(n_ele.sum()), int(n_mu.sum())
    electrons = _lepton(rng, "Electron", ne, 0.000511)
    electrons["Electron_cutBased"] = rng.choice(np.array([0, 1, 2, 3, 4, 4, 4], dtype=np.int32), ne)
    electrons["Electron_sip3d"] = rng.exponential(2.0, ne).astype(np.float32)
    muons = _lepton(rng, "Muon", nm, 0.10566)
    muons["Muon_tightId"] = rng.random(nm) < 0.8
    muons["Muon_sip3d"] = rng.exponential(2.0, nm).astype(np.float32)
    muons["Muon_pfRelIso04_all"] = rng.exponential(0.08, nm).astype(np.float32)
    fields: dict[str, ak.Array | np.ndarray] = {
        "run": np.full(n, 1, dtype=np.uint32),
        "luminosityBlock": (np.arange(n, dtype=np.uint32) // 1000 + 1).astype(np.uint32),
        "event": (np.arange(n, dtype=np.uint64) + np.uint64(seed) * np.uint64(10**9)),
        "nJet": n_jet,
    }
    fields.update({k: _jagged(n_jet, v) for k, v in jets.items()})
    fields["nElectron"] = n_ele
    fields.update({k: _jagged(n_ele, v) for k, v in electrons.items()})
    fields["nMuon"] = n_mu
    fields.update({k: _jagged(n_mu, v) for k, v in muons.items()})
    fields["MET_pt"] = _falling_pt(rng, n, 0.0, 40.0)
    return ak.Array(fields)


def write_file(path: str | os.PathLike[str], n_events: int, seed: int, cluster_entries: int) -> None:
    """One file of ``n_events`` events in clusters of ``cluster_entries`` entries."""
    events = make_events(n_events, seed)
    with rntuple.recreate(path) as f:
        with f.mkrntuple("Events", events[:0]) as writer:
            for start in range(0, n_events, cluster_entries):
                writer.extend(events[start : start + cluster_entries])
                writer.commit_cluster()


def generate(outdir: str | os.PathLike[str], files: int, events: int, cluster: int, real: bool = True) -> list[str]:
    """Writes ``files`` files (seeds 1..files) and, with ``real``, the converted real NanoAOD."""
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(files):
        path = out / f"ttbar_{i:04d}.root"
        write_file(path, events, seed=i + 1, cluster_entries=cluster)
        paths.append(str(path))
    if real:
        path = out / "real_nanoaod.root"
        rntuple.convert(f"{REAL_NANOAOD}:Events", path, name="Events", progress=False)
        paths.append(str(path))
    return paths


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir")
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--events", type=int, default=20000, help="events per file")
    parser.add_argument("--cluster", type=int, default=5000, help="entries per cluster")
    parser.add_argument("--no-real", action="store_true", help="skip converting the bundled real NanoAOD")
    args = parser.parse_args(argv)
    paths = generate(args.outdir, args.files, args.events, args.cluster, real=not args.no_real)
    total = sum(os.path.getsize(p) for p in paths)
    print(f"wrote {len(paths)} files, {total / 1e6:.1f} MB, into {args.outdir}")


if __name__ == "__main__":
    main()
