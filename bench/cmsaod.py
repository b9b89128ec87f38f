"""The ``cmsaod`` workload: a CMS AOD-like event, the wide nested case of CMS's memory worry
(issue 15): 552 top-level fields written with LZMA level 4, CMS's AOD setting.

Shape (per event; multiplicities are Poisson with the given means, so sizes vary per event):

* 48 **rich products**: collections of records of 5-30 members, modelled on the reco classes
  of an AOD (``reco::Track`` with its 15-element covariance and hit pattern, ``PFCandidate``,
  ``Vertex`` with track weights, ``PFJet``/``CaloJet`` with constituent keys, ``Muon``,
  ``GsfElectron``, ``Photon``, ``PFTau``, super-/calo-/PF clusters with hit keys and fractions,
  ECAL/HCAL rec hits, muon segments, ``GenParticle``, ``GenJet``, ``MET``, conversions, L1
  objects) plus single-object records (beam spot, trigger results of 650 paths, the HLT
  trigger summary). Members are floats and small ints of CMS's types (float kinematics,
  double positions, ``uint8`` counters, ``uint32`` detector ids and keys); vector members
  make vectors of vectors (collection -> record -> vector). Fixed-size C arrays (a track's
  covariance) are flattened into members ``cov00``... because the benchmark's neutral input
  has no fixed-array kind; ROOT's TTree splits them per element too.
* 100 ``edm::ValueMap<float>``-like records: ``values`` (one float per object of a collection:
  electrons, photons, muons, jets, and a few over PF candidates / tracks) and ``ids``.
* 60 association / ``RefVector``-like products: vectors of ``uint32`` keys.
* 90 ``PFTauDiscriminator``-like products: collections of (key, value) records.
* 254 flat scalars: ``double`` rho / weights, ``bool`` filter decisions, ``int`` / ``uint``
  counters and the event id.

About 330 kB of raw values per event, dominated by tracks, PF candidates and rec hits as in
a real AOD (whose events are larger, ~1 MB, mostly from more tracks and hits: the shape, not
the bulk, is what drives the writers' memory).
"""

from __future__ import annotations

import numpy as np

N_TOP_LEVEL = 552

_KIN = [("pt", "f4", "pt"), ("eta", "f4", "eta"), ("phi", "f4", "phi"), ("mass", "f4", "mass")]
_VTX = [("vx", "f8", "pos"), ("vy", "f8", "pos"), ("vz", "f8", "posz")]


def _cov(n: int, prefix: str = "cov") -> list:
    return [(f"{prefix}{i:02d}", "f4", "disp") for i in range(n)]


# class name -> members: (name, dtype, distribution) or (name, "vec", dtype, distribution, mean)
CLASSES = {
    "AodTrack": [
        ("pt", "f4", "pt"),
        ("eta", "f4", "eta"),
        ("phi", "f4", "phi"),
        ("chi2", "f4", "full"),
        ("ndof", "f4", "gauss"),
        *_VTX,
        ("charge", "i1", "charge"),
        ("algo", "u1", 30),
        ("quality", "u1", 8),
        ("nValidHits", "u1", 40),
        ("nLostHits", "u1", 4),
        *_cov(15),
        ("hitPattern", "vec", "u2", 1 << 11, 25.0),
    ],
    "AodPFCandidate": [
        *_KIN,
        *_VTX,
        ("pdgId", "i4", "pdg"),
        ("charge", "i1", "charge"),
        ("ecalEnergy", "f4", "pt"),
        ("hcalEnergy", "f4", "pt"),
        ("rawEcalEnergy", "f4", "pt"),
        ("rawHcalEnergy", "f4", "pt"),
        ("ps1Energy", "f4", "iso"),
        ("ps2Energy", "f4", "iso"),
        ("deltaP", "f4", "disp"),
        ("mvaEPi", "f4", "unit"),
        ("mvaNothingGamma", "f4", "unit"),
        ("time", "f4", "disp"),
        ("timeError", "f4", "iso"),
        ("flags", "u4", 1 << 10),
        ("trackKey", "u4", 600),
        ("elementsInBlocks", "vec", "u4", 4000, 2.0),
    ],
    "AodVertex": [
        ("x", "f8", "pos"),
        ("y", "f8", "pos"),
        ("z", "f8", "posz"),
        *_cov(6),
        ("chi2", "f4", "full"),
        ("ndof", "f4", "gauss"),
        ("time", "f4", "disp"),
        ("timeError", "f4", "iso"),
        ("valid", "b", 0.98),
        ("trackWeights", "vec", "f4", "unit", 20.0),
        ("trackKeys", "vec", "u4", 600, 20.0),
    ],
    "AodPFJet": [
        *_KIN,
        *_VTX,
        ("jetArea", "f4", "weight"),
        ("pileup", "f4", "iso"),
        *[(f"{k}Energy", "f4", "pt") for k in ("chargedHadron", "neutralHadron", "photon", "electron", "muon")],
        ("HFHadronEnergy", "f4", "iso"),
        ("HFEMEnergy", "f4", "iso"),
        *[(f"{k}Multiplicity", "i4", 30) for k in ("chargedHadron", "neutralHadron", "photon", "electron", "muon")],
        ("constituentKeys", "vec", "u4", 1000, 18.0),
    ],
    "AodCaloJet": [
        *_KIN,
        *_VTX,
        ("jetArea", "f4", "weight"),
        ("maxEInEmTowers", "f4", "pt"),
        ("maxEInHadTowers", "f4", "pt"),
        ("emEnergyFraction", "f4", "unit"),
        ("energyFractionHadronic", "f4", "unit"),
        ("n90", "i4", 20),
        ("n60", "i4", 12),
        ("towersArea", "f4", "weight"),
        ("towerKeys", "vec", "u4", 4000, 10.0),
    ],
    "AodMuon": [
        *_KIN,
        *_VTX,
        ("charge", "i1", "charge"),
        ("type", "u4", 1 << 8),
        ("selectors", "u8", 1 << 40),
        *[(f"isoR03{k}", "f4", "iso") for k in ("SumPt", "EmEt", "HadEt")],
        *[(f"isoR05{k}", "f4", "iso") for k in ("SumPt", "EmEt", "HadEt")],
        *[(f"pfIso04{k}", "f4", "iso") for k in ("ChargedHadron", "NeutralHadron", "Photon", "PU")],
        ("time", "f4", "disp"),
        ("timeError", "f4", "iso"),
        ("nMatches", "i4", 5),
        ("caloCompatibility", "f4", "unit"),
        ("segmentCompatibility", "f4", "unit"),
        ("matchDistances", "vec", "f4", "disp", 3.0),
    ],
    "AodElectron": [
        *_KIN,
        *_VTX,
        ("charge", "i1", "charge"),
        *[
            (k, "f4", "unit")
            for k in (
                "sigmaIetaIeta",
                "sigmaIphiIphi",
                "e1x5",
                "e2x5Max",
                "e5x5",
                "r9",
                "hcalOverEcal",
                "eSuperClusterOverP",
                "deltaEtaSuperClusterTrackAtVtx",
                "deltaPhiSuperClusterTrackAtVtx",
                "fbrem",
                "dr03TkSumPt",
                "dr03EcalRecHitSumEt",
                "dr03HcalTowerSumEt",
            )
        ],
        ("classification", "i4", 5),
        ("ecalDrivenSeed", "b", 0.9),
        ("ambiguousTrackKeys", "vec", "u4", 600, 1.0),
    ],
    "AodPhoton": [
        *_KIN,
        *_VTX,
        *[
            (k, "f4", "unit")
            for k in (
                "sigmaIetaIeta",
                "r9",
                "hadronicOverEm",
                "e1x5",
                "e2x5",
                "e3x3",
                "e5x5",
                "ecalRecHitSumEtConeDR04",
                "hcalTowerSumEtConeDR04",
                "trkSumPtHollowConeDR04",
                "chargedHadronIso",
                "neutralHadronIso",
                "photonIso",
            )
        ],
        ("hasPixelSeed", "b", 0.2),
        ("preshowerKeys", "vec", "u4", 500, 2.0),
    ],
    "AodPFTau": [
        *_KIN,
        ("charge", "i1", "charge"),
        ("decayMode", "i4", 12),
        *[(f"discriminant{i}", "f4", "unit") for i in range(8)],
        ("signalChargedHadrCandKeys", "vec", "u4", 1000, 3.0),
        ("isolationCandKeys", "vec", "u4", 1000, 8.0),
    ],
    "AodSuperCluster": [
        ("energy", "f4", "pt"),
        ("rawEnergy", "f4", "pt"),
        ("preshowerEnergy", "f4", "iso"),
        ("x", "f8", "pos"),
        ("y", "f8", "pos"),
        ("z", "f8", "posz"),
        ("eta", "f4", "eta"),
        ("phi", "f4", "phi"),
        ("etaWidth", "f4", "iso"),
        ("phiWidth", "f4", "iso"),
        ("seedKey", "u4", 200),
        ("hitIds", "vec", "u4", 1 << 30, 25.0),
        ("hitFractions", "vec", "f4", "unit", 25.0),
    ],
    "AodCaloCluster": [
        ("energy", "f4", "pt"),
        ("correctedEnergy", "f4", "pt"),
        ("x", "f8", "pos"),
        ("y", "f8", "pos"),
        ("z", "f8", "posz"),
        ("eta", "f4", "eta"),
        ("phi", "f4", "phi"),
        ("algoID", "i4", 8),
        ("flags", "u4", 16),
        ("seedId", "u4", 1 << 30),
        ("hitIds", "vec", "u4", 1 << 30, 12.0),
    ],
    "AodPFCluster": [
        ("energy", "f4", "pt"),
        ("time", "f4", "disp"),
        ("depth", "f4", "unit"),
        ("x", "f4", "disp"),
        ("y", "f4", "disp"),
        ("z", "f4", "eta"),
        ("layer", "i4", 12),
        ("rechitKeys", "vec", "u4", 4000, 6.0),
    ],
    "AodEcalRecHit": [
        ("id", "u4", 1 << 30),
        ("energy", "f4", "iso"),
        ("time", "f4", "disp"),
        ("energyError", "f4", "iso"),
        ("flagBits", "u4", 1 << 6),
    ],
    "AodHcalRecHit": [
        ("id", "u4", 1 << 30),
        ("energy", "f4", "iso"),
        ("time", "f4", "disp"),
        ("eraw", "f4", "iso"),
        ("eaux", "f4", "iso"),
        ("chi2", "f4", "full"),
        ("flags", "u4", 1 << 8),
    ],
    "AodMuonSegment": [
        ("x", "f4", "disp"),
        ("y", "f4", "disp"),
        ("z", "f4", "eta"),
        ("dx", "f4", "unit"),
        ("dy", "f4", "unit"),
        ("dz", "f4", "unit"),
        ("chi2", "f4", "full"),
        ("nHits", "u1", 12),
        ("chamberId", "u4", 1 << 28),
        ("hitKeys", "vec", "u4", 2000, 8.0),
    ],
    "AodRPCRecHit": [
        ("id", "u4", 1 << 28),
        ("x", "f4", "disp"),
        ("y", "f4", "disp"),
        ("bx", "i4", 5),
        ("clusterSize", "i4", 6),
    ],
    "AodGenParticle": [
        *_KIN,
        *_VTX,
        ("pdgId", "i4", "pdg"),
        ("status", "i4", 3),
        ("charge", "i1", "charge"),
        ("motherKeys", "vec", "u4", 300, 1.0),
        ("daughterKeys", "vec", "u4", 300, 1.5),
    ],
    "AodGenJet": [
        *_KIN,
        ("emEnergy", "f4", "pt"),
        ("hadEnergy", "f4", "pt"),
        ("invisibleEnergy", "f4", "iso"),
        ("auxEnergy", "f4", "iso"),
        ("constituentKeys", "vec", "u4", 300, 15.0),
    ],
    "AodMET": [
        ("pt", "f4", "pt"),
        ("phi", "f4", "phi"),
        ("sumEt", "f4", "full"),
        ("significance", "f4", "mass"),
        *_cov(4, "sigMatrix"),
        ("mEtSig", "f4", "mass"),
        ("elongitudinal", "f4", "disp"),
    ],
    "AodConversion": [
        *_VTX,
        ("px", "f4", "disp"),
        ("py", "f4", "disp"),
        ("pz", "f4", "disp"),
        ("chi2", "f4", "full"),
        ("ndof", "f4", "gauss"),
        ("distOfMinApproach", "f4", "disp"),
        ("dPhiTracksAtVtx", "f4", "disp"),
        ("algo", "u1", 4),
        ("quality", "u2", 256),
        ("trackKeys", "vec", "u4", 600, 2.0),
    ],
    "AodL1Object": [
        ("bx", "i4", 5),
        ("pt", "f4", "pt"),
        ("eta", "f4", "eta"),
        ("phi", "f4", "phi"),
        ("hwPt", "i4", 512),
        ("hwEta", "i4", 256),
        ("hwPhi", "i4", 256),
        ("hwQual", "i4", 16),
        ("hwIso", "i4", 4),
    ],
    "AodDeDx": [("value", "f4", "gauss"), ("error", "f4", "iso"), ("numberOfMeasurements", "u4", 30)],
    "AodBeamSpot": [
        ("x", "f8", "pos"),
        ("y", "f8", "pos"),
        ("z", "f8", "posz"),
        ("sigmaZ", "f8", "pos"),
        ("dxdz", "f8", "pos"),
        ("dydz", "f8", "pos"),
        ("beamWidthX", "f8", "pos"),
        ("beamWidthY", "f8", "pos"),
        *_cov(7),
        ("type", "i4", 3),
    ],
    "AodTriggerResults": [("parameterSetId", "u8", 1 << 60), ("pathStatus", "fixed", "u2", 4, 650)],
    "AodTriggerEvent": [
        ("usedProcessName", "u4", 4),
        ("objectPt", "vec", "f4", "pt", 100.0),
        ("objectEta", "vec", "f4", "eta", 100.0),
        ("objectPhi", "vec", "f4", "phi", 100.0),
        ("objectMass", "vec", "f4", "mass", 100.0),
        ("objectId", "vec", "i4", 100, 100.0),
        ("filterKeys", "vec", "u2", 100, 300.0),
        ("filterIds", "vec", "i4", 100, 300.0),
    ],
    "AodValueMapFloat": [("values", "parent", "f4", "unit"), ("ids", "vec", "u4", 1 << 20, 1.0)],
    "AodTauDiscriminator": [("key", "u4", 5), ("value", "f4", "unit")],
}

# rich products: (name, class, mean multiplicity; None: one object, a top-level record)
RICH = [
    ("generalTracks", "AodTrack", 500.0),
    ("electronGsfTracks", "AodTrack", 6.0),
    ("standAloneMuons", "AodTrack", 4.0),
    ("globalMuons", "AodTrack", 3.0),
    ("conversionStepTracks", "AodTrack", 20.0),
    ("displacedTracks", "AodTrack", 10.0),
    ("particleFlow", "AodPFCandidate", 1000.0),
    ("offlinePrimaryVertices", "AodVertex", 40.0),
    ("offlinePrimaryVerticesWithBS", "AodVertex", 40.0),
    ("inclusiveSecondaryVertices", "AodVertex", 3.0),
    ("ak4PFJets", "AodPFJet", 25.0),
    ("ak4PFJetsCHS", "AodPFJet", 20.0),
    ("ak8PFJetsPuppi", "AodPFJet", 4.0),
    ("ak4CaloJets", "AodCaloJet", 30.0),
    ("muons", "AodMuon", 5.0),
    ("displacedMuons", "AodMuon", 1.0),
    ("gedGsfElectrons", "AodElectron", 4.0),
    ("gedPhotons", "AodPhoton", 5.0),
    ("ootPhotons", "AodPhoton", 1.0),
    ("hpsPFTauProducer", "AodPFTau", 3.0),
    ("particleFlowSuperClusterECALBarrel", "AodSuperCluster", 20.0),
    ("particleFlowSuperClusterECALEndcap", "AodSuperCluster", 15.0),
    ("hybridSuperClusters", "AodCaloCluster", 60.0),
    ("multi5x5SuperClusters", "AodCaloCluster", 40.0),
    ("particleFlowEGamma", "AodCaloCluster", 30.0),
    ("particleFlowClusterECAL", "AodPFCluster", 150.0),
    ("particleFlowClusterHCAL", "AodPFCluster", 80.0),
    ("particleFlowClusterHF", "AodPFCluster", 30.0),
    ("particleFlowClusterHO", "AodPFCluster", 10.0),
    ("reducedEcalRecHitsEB", "AodEcalRecHit", 1200.0),
    ("reducedEcalRecHitsEE", "AodEcalRecHit", 600.0),
    ("reducedEcalRecHitsES", "AodEcalRecHit", 300.0),
    ("reducedHcalRecHitsHBHE", "AodHcalRecHit", 400.0),
    ("reducedHcalRecHitsHO", "AodHcalRecHit", 100.0),
    ("reducedHcalRecHitsHF", "AodHcalRecHit", 150.0),
    ("dt4DSegments", "AodMuonSegment", 20.0),
    ("cscSegments", "AodMuonSegment", 15.0),
    ("rpcRecHits", "AodRPCRecHit", 30.0),
    ("genParticles", "AodGenParticle", 300.0),
    ("ak4GenJets", "AodGenJet", 20.0),
    ("ak8GenJets", "AodGenJet", 4.0),
    ("allConversions", "AodConversion", 5.0),
    ("dedxHarmonic2", "AodDeDx", 500.0),
    ("l1Muons", "AodL1Object", 8.0),
    ("l1EGammas", "AodL1Object", 12.0),
    ("l1Jets", "AodL1Object", 12.0),
    ("offlineBeamSpot", "AodBeamSpot", None),
    ("TriggerResults", "AodTriggerResults", None),
]
# the MET products: collections of exactly one object, as in CMS
MET_PRODUCTS = ["pfMet", "caloMet", "pfMetPuppi", "genMetTrue", "caloMetBE", "tcMet"]
# mean sizes of the collections a value map refers to (electrons, photons, muons, jets, taus, ...; PF
# candidates and tracks for 2 in 22)
VALUE_MAP_PARENTS = [4.0, 5.0, 5.0, 25.0, 3.0, 20.0, 4.0, 5.0, 40.0, 12.0] * 2 + [1000.0, 500.0]
N_VALUE_MAPS, N_ASSOCIATIONS, N_TAU_DISCRIMINATORS = 100, 60, 90
_SCALAR_CYCLE = ["f8", "b", "i4", "b", "f8", "u4", "b", "f4", "i4", "b"]


def _values(rng: np.random.Generator, dtype: str, dist, n: int, float_kind) -> np.ndarray:
    if dtype == "b":
        return rng.random(n) < dist
    if dtype == "f4":
        return float_kind(rng, dist, n)
    if dtype == "f8":
        scale = {"pos": 0.01, "posz": 4.0}.get(dist, 1.0)
        return rng.normal(0.0, scale, n)
    if dist == "charge":
        return np.where(rng.random(n) < 0.5, -1, 1)
    if dist == "pdg":
        return rng.choice(np.array([11, -11, 13, -13, 22, 130, 211, -211, 1, 2]), n)
    return rng.integers(0, dist, n, dtype=np.uint64 if dtype == "u8" else np.int64)


def _record(w, rng: np.random.Generator, cls: str, n: int, float_kind) -> dict:
    members = []
    for spec in CLASSES[cls]:
        name, dtype = spec[0], spec[1]
        if dtype in ("vec", "fixed", "parent"):
            item_dtype, dist = spec[2], spec[3]
            if dtype == "vec":
                counts = rng.poisson(spec[4], n)
            elif dtype == "fixed":  # a vector of constant length
                counts = np.full(n, spec[4], dtype=np.int64)
            else:  # one value per object of a parent collection
                counts = rng.poisson(VALUE_MAP_PARENTS[int(rng.integers(0, len(VALUE_MAP_PARENTS)))], n)
            values = _values(rng, item_dtype, dist, int(counts.sum()), float_kind)
            members.append((name, w.vector(counts, w.scalar(item_dtype, values))))
        else:
            members.append((name, w.scalar(dtype, _values(rng, dtype, spec[2], n, float_kind))))
    return w.record(cls, members)


def _collection(w, rng: np.random.Generator, cls: str, counts: np.ndarray, float_kind) -> dict:
    return w.vector(counts, _record(w, rng, cls, int(counts.sum()), float_kind))


def generate(w, rng: np.random.Generator, float_kind) -> list[dict]:
    """The fields of the workload, their arrays written through ``w`` (``workloads._Writer``)."""
    n = w.entries
    fields: list[dict] = []

    def add(name: str, t: dict) -> None:
        fields.append({"name": name, "type": t})

    add("run", w.scalar("u4", 1 + np.arange(n) // 100_000))
    add("luminosityBlock", w.scalar("u4", 1 + np.arange(n) // 300))
    add("event", w.scalar("u8", 5_000_000 + np.cumsum(rng.integers(1, 50, n))))
    for name, cls, mean in RICH:
        if mean is None:
            add(name, _record(w, rng, cls, n, float_kind))
        else:
            add(name, _collection(w, rng, cls, rng.poisson(mean, n), float_kind))
    for name in MET_PRODUCTS:
        add(name, _collection(w, rng, "AodMET", np.ones(n, dtype=np.int64), float_kind))
    add("hltTriggerSummaryAOD", _record(w, rng, "AodTriggerEvent", n, float_kind))
    for i in range(N_VALUE_MAPS):
        add(f"valueMap{i:03d}", _record(w, rng, "AodValueMapFloat", n, float_kind))
    for i in range(N_ASSOCIATIONS):
        counts = rng.poisson([2.0, 5.0, 20.0, 50.0][i % 4], n)
        add(f"refVector{i:02d}", w.vector(counts, w.scalar("u4", rng.integers(0, 1000, int(counts.sum())))))
    for i in range(N_TAU_DISCRIMINATORS):
        add(
            f"hpsPFTauDiscrimination{i:02d}",
            _collection(w, rng, "AodTauDiscriminator", rng.poisson(3.0, n), float_kind),
        )
    i = 0
    while len(fields) < N_TOP_LEVEL:
        dtype = _SCALAR_CYCLE[i % len(_SCALAR_CYCLE)]
        if dtype == "b":
            values = rng.random(n) > 0.002 * (1 + i % 7)  # filters mostly pass
        elif dtype == "f8":
            values = rng.normal(20.0, 6.0, n) if i % 3 else rng.exponential(1.0, n)  # rho, weights
        elif dtype == "f4":
            values = float_kind(rng, "gauss", n)
        else:
            values = rng.poisson(3 + i % 40, n)
        add(f"scalar{i:03d}", w.scalar(dtype, values))
        i += 1
    if len(fields) != N_TOP_LEVEL:
        raise AssertionError(f"cmsaod: {len(fields)} top-level fields, not {N_TOP_LEVEL}")
    return fields
