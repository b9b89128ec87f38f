"""DUNE-like data products, generated deterministically from a seed.

``recob::Hit`` (one per reconstructed hit: channel, ticks, peak time and
amplitude with their uncertainties, RMS, summed ADC, integral, multiplicity,
goodness of fit, view, wire id) and ``recob::Wire`` (one per channel with
signal: channel, view and its regions of interest, each an offset and a
vector of floats), with an event header (run, subrun, event, spill). The
sizes follow the DUNE layout study: about 100 hits and 100 wires per event,
10 ROIs per wire, events grouped into 10 spills.

Everything is kept as flat numpy arrays with counts (hits per event, wires
per event, ROIs per wire, samples per ROI); ``_shapes`` builds the rows of
each layout from them, so every layout holds the same values.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._errors import InvalidArgumentError

__all__ = ["HIT_FIELDS", "Products", "generate"]

# recob::Hit members (the ones that carry data) and their types.
HIT_FIELDS: dict[str, type] = {
    "channel": np.uint32,
    "start_tick": np.int32,
    "end_tick": np.int32,
    "peak_time": np.float32,
    "sigma_peak_time": np.float32,
    "rms": np.float32,
    "peak_amplitude": np.float32,
    "sigma_peak_amplitude": np.float32,
    "summed_adc": np.float32,
    "integral": np.float32,
    "sigma_integral": np.float32,
    "multiplicity": np.int16,
    "local_index": np.int16,
    "goodness_of_fit": np.float32,
    "dof": np.int32,
    "view": np.uint8,
    "signal_type": np.uint8,
    "wire": np.uint32,
}
CHANNELS = 15360  # one ProtoDUNE-sized detector
TICKS = 6000


@dataclass
class Products:
    """The generated data: flat arrays and the counts that nest them."""

    events: int
    spills: int
    spill_of_event: np.ndarray  # uint32 per event
    hits_per_event: np.ndarray  # int64 per event
    hits: dict[str, np.ndarray] = field(default_factory=dict)
    wires_per_event: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    wire_channel: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint32))
    wire_view: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint8))
    rois_per_wire: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    roi_offset: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint32))
    samples_per_roi: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    samples: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))

    @property
    def event_id(self) -> np.ndarray:
        return np.arange(self.events, dtype=np.uint32)

    def checksums(self) -> dict[str, float]:
        """Layout-independent figures of the values (counts and sums) a reader must reproduce."""
        return {
            "hits": int(self.hits_per_event.sum()),
            "wires": int(self.wires_per_event.sum()),
            "rois": int(self.rois_per_wire.sum()),
            "samples": int(self.samples_per_roi.sum()),
            "sum_peak_amplitude": float(self.hits["peak_amplitude"].astype(np.float64).sum()),
            "sum_channel": int(self.wire_channel.astype(np.int64).sum()),
            "sum_samples": float(self.samples.astype(np.float64).sum()),
        }


def generate(
    events: int, seed: int = 1, spills: int = 10, hits: float = 100, wires: float = 100, rois: float = 10
) -> Products:
    """``events`` events in ``min(spills, events)`` spills; ``hits``, ``wires`` and ``rois`` are the means
    per event, per event and per wire. The same arguments always give the same values."""
    if events < 1:
        raise InvalidArgumentError(f"events must be at least 1, not {events}")
    rng = np.random.default_rng(seed)
    spills = max(1, min(spills, events))
    spill_of_event = (np.arange(events) * spills // events).astype(np.uint32)
    hits_per_event = rng.poisson(hits, events).astype(np.int64)
    n = int(hits_per_event.sum())
    channel = rng.integers(0, CHANNELS, n, dtype=np.uint32)
    peak = rng.uniform(0, TICKS, n).astype(np.float32)
    width = rng.gamma(4.0, 1.5, n).astype(np.float32)
    amplitude = rng.exponential(25.0, n).astype(np.float32) + np.float32(5)
    integral = (amplitude * width * np.float32(2.5066)).astype(np.float32)
    h = {
        "channel": channel,
        "start_tick": (peak - 3 * width).astype(np.int32),
        "end_tick": (peak + 3 * width).astype(np.int32),
        "peak_time": peak,
        "sigma_peak_time": (width * np.float32(0.1)).astype(np.float32),
        "rms": width,
        "peak_amplitude": amplitude,
        "sigma_peak_amplitude": (np.sqrt(amplitude) * np.float32(0.3)).astype(np.float32),
        "summed_adc": (integral * rng.normal(1.0, 0.05, n)).astype(np.float32),
        "integral": integral,
        "sigma_integral": (np.sqrt(integral) * np.float32(0.5)).astype(np.float32),
        "multiplicity": rng.integers(1, 4, n).astype(np.int16),
        "local_index": rng.integers(0, 3, n).astype(np.int16),
        "goodness_of_fit": rng.chisquare(5, n).astype(np.float32),
        "dof": np.full(n, 5, np.int32),
        "view": (channel // (CHANNELS // 3)).astype(np.uint8),
        "signal_type": (channel // (CHANNELS // 3) == 2).astype(np.uint8),
        "wire": (channel % 480).astype(np.uint32),
    }
    wires_per_event = rng.poisson(wires, events).astype(np.int64)
    w = int(wires_per_event.sum())
    wire_channel = np.sort(rng.integers(0, CHANNELS, w, dtype=np.uint32))
    rois_per_wire = rng.poisson(rois, w).astype(np.int64)
    r = int(rois_per_wire.sum())
    samples_per_roi = (8 + rng.poisson(12, r)).astype(np.int64)
    # ROI offsets increase along a wire: a gap then the ROI, repeated.
    gaps = rng.integers(20, 400, r).astype(np.int64)
    steps = gaps + samples_per_roi
    ends = np.cumsum(steps)
    starts_of_wire = np.repeat(np.concatenate([[0], np.cumsum(rois_per_wire)[:-1]]), rois_per_wire)
    base = np.concatenate([[0], ends[:-1]])[starts_of_wire] if r else np.zeros(0, np.int64)
    roi_offset = ((ends - samples_per_roi) - base).astype(np.uint32)
    s = int(samples_per_roi.sum())
    # A pulse in each ROI over noise, in ADC-like units with the resolution of a 12-bit digitizer.
    first = np.repeat(np.cumsum(samples_per_roi) - samples_per_roi, samples_per_roi)
    twice_from_centre = 2 * (np.arange(s) - first) - np.repeat(samples_per_roi, samples_per_roi)
    shape = np.exp(-0.5 * (np.arange(-200, 201, dtype=np.float32) / 6.0) ** 2).astype(np.float32)
    pulse = np.repeat(rng.exponential(20.0, r).astype(np.float32), samples_per_roi) * shape[twice_from_centre + 200]
    noise = rng.standard_normal(s, dtype=np.float32) * np.float32(1.2)
    samples = (np.round((pulse + noise) * 8) / 8).astype(np.float32)
    return Products(
        events=events,
        spills=spills,
        spill_of_event=spill_of_event,
        hits_per_event=hits_per_event,
        hits=h,
        wires_per_event=wires_per_event,
        wire_channel=wire_channel,
        wire_view=(wire_channel // (CHANNELS // 3)).astype(np.uint8),
        rois_per_wire=rois_per_wire,
        roi_offset=roi_offset,
        samples_per_roi=samples_per_roi,
        samples=samples,
    )
