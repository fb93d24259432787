"""What a unit-latency run shows, computed from the server's record.

- latency = receive time - generation time, per unit; and the same with
  the kernel's receive stamp (latency_kernel: the receiver's scheduling
  taken out, units_sink), with receiver_wait = read time - kernel stamp;
- the flush rule's wait w = (K - seq mod K) x T: the part of the latency
  the batching itself causes (K*T for a flush's first unit, T for its
  last); latency - w is the unit's transit (network + both ends);
- the ideal band for a path of one-way delay D: [D + T, D + K*T];
- losses (units announced but never received), duplicates, reordering
  (arrivals whose sequence number is below one already received);
- arrival groups: units delivered to the server within `together_ns` of
  the previous one form a group; a flush arrives as one group of K, so
  groups of more than K mean flushes were held back and released together
  (the study's "more than 10 units arrive together").
"""

from __future__ import annotations

from typing import Sequence

from linkemu.lab.analysis import sample_sd

QS = (1, 10, 50, 90, 99)
HIST_BIN_NS = 500_000
TOGETHER_NS = 1_000_000


def quantiles(values: Sequence[int] | object) -> dict:
    """count, min, mean, sd, max and the QS percentiles of a sample; sd is
    the sample sd (lab.analysis.sample_sd: 0 for a single value)."""
    import numpy as np
    a = np.asarray(values, dtype=np.float64)
    if a.size == 0:
        return {"count": 0}
    out = {"count": int(a.size), "min": float(a.min()), "mean": float(a.mean()),
           "sd": sample_sd(a), "max": float(a.max())}
    for q, v in zip(QS, np.percentile(a, QS)):
        out[f"p{q}"] = float(v)
    return out


def arrays(seq, gen_ns, rx_ns):
    import numpy as np
    return (np.asarray(seq, dtype=np.int64), np.asarray(gen_ns, dtype=np.int64),
            np.asarray(rx_ns, dtype=np.int64))


def flush_wait_ns(seq, flush: int, interval_ns: int):
    return (flush - seq % flush) * interval_ns


def histogram(lat_ns, bin_ns: int = HIST_BIN_NS) -> dict:
    import numpy as np
    if len(lat_ns) == 0:
        return {"lo_ns": 0, "width_ns": bin_ns, "counts": [0]}
    lo = int(np.floor(lat_ns.min() / bin_ns) * bin_ns)
    idx = (lat_ns - lo) // bin_ns
    counts = np.bincount(idx.astype(np.int64))
    return {"lo_ns": lo, "width_ns": bin_ns, "counts": counts.tolist()}


def arrival_groups(rx_ns, together_ns: int = TOGETHER_NS) -> list[int]:
    """Sizes of the groups, in arrival order."""
    import numpy as np
    if len(rx_ns) == 0:
        return []
    breaks = np.flatnonzero(np.diff(rx_ns) > together_ns) + 1
    edges = np.concatenate(([0], breaks, [len(rx_ns)]))
    return np.diff(edges).tolist()


def analyse(seq, gen_ns, rx_ns, *, flush: int, interval_ns: int, expected: int | None,
            delay_ns: int | None = None, together_ns: int = TOGETHER_NS,
            krx_ns=None) -> dict:
    """Everything above, JSON-ready (times in ns). Without krx_ns the kernel
    stamps are the read times."""
    import numpy as np
    seq, gen_ns, rx_ns = arrays(seq, gen_ns, rx_ns)
    krx = rx_ns if krx_ns is None else np.asarray(krx_ns, dtype=np.int64)
    lat = rx_ns - gen_ns
    uniq = np.unique(seq)
    running_max = np.maximum.accumulate(seq) if seq.size else seq
    reordered = int(np.sum(seq[1:] < running_max[:-1])) if seq.size > 1 else 0
    wait = flush_wait_ns(seq, flush, interval_ns)
    groups = arrival_groups(rx_ns, together_ns)
    sizes, ng = (np.unique(groups, return_counts=True) if groups else ([], []))
    over = int(sum(g for g in groups if g > flush))
    out = {
        "received": int(seq.size), "unique": int(uniq.size), "expected": expected,
        "lost": (expected - int(uniq.size)) if expected is not None else None,
        "duplicates": int(seq.size - uniq.size), "reordered": reordered,
        "in_order": reordered == 0 and seq.size == uniq.size,
        "latency_ns": quantiles(lat),
        "transit_ns": quantiles(lat - wait),
        "latency_kernel_ns": quantiles(krx - gen_ns),
        "transit_kernel_ns": quantiles(krx - gen_ns - wait),
        "receiver_wait_ns": quantiles(rx_ns - krx),
        "histogram": histogram(lat),
        "groups": {"together_ns": together_ns, "count": len(groups),
                   "sizes": [[int(s), int(n)] for s, n in zip(sizes, ng)],
                   "max": int(max(groups)) if groups else 0,
                   "units_in_groups_over_flush": over,
                   "share_in_groups_over_flush": over / seq.size if seq.size else 0.0},
    }
    if delay_ns is not None:
        lo, hi = delay_ns + interval_ns, delay_ns + flush * interval_ns
        below, above = int(np.sum(lat < lo)), int(np.sum(lat > hi))
        out["band"] = {"delay_ns": delay_ns, "lo_ns": lo, "hi_ns": hi, "below": below,
                       "above": above,
                       "share_outside": (below + above) / seq.size if seq.size else 0.0}
    return out


def series_us(seq, gen_ns, rx_ns) -> tuple[list[int], list[int]]:
    """(sequence numbers, latency in us), in sequence order: the study's
    time series over the units."""
    import numpy as np
    seq, gen_ns, rx_ns = arrays(seq, gen_ns, rx_ns)
    order = np.argsort(seq, kind="stable")
    return seq[order].tolist(), ((rx_ns - gen_ns)[order] // 1000).tolist()


SAMPLE_DTYPE = [("seq", "<u4"), ("gen_ns", "<i8"), ("rx_ns", "<i8"), ("krx_ns", "<i8")]


def write_samples(path, seq, gen_ns, rx_ns, krx_ns=None) -> None:
    """Raw samples, in arrival order, as a NumPy .npy structured array
    (krx_ns: the kernel's receive stamps; the read times without them)."""
    import numpy as np
    a = np.empty(len(seq), dtype=SAMPLE_DTYPE)
    a["seq"], a["gen_ns"], a["rx_ns"] = seq, gen_ns, rx_ns
    a["krx_ns"] = rx_ns if krx_ns is None else krx_ns
    save_npy(path, a)


def save_npy(path, array) -> None:
    """np.save to PATH; a file that cannot be written (the CLI checks it
    before a run, but it can go away during one) is a LinkemuError naming
    it, not a traceback after the run."""
    import numpy as np

    from linkemu.errors import LinkemuError
    try:
        with open(path, "wb") as f:
            np.save(f, array)
    except OSError as e:
        raise LinkemuError(f"{path}: cannot write: {e.strerror or e}") from None


def read_samples(path):
    """A samples file; one written before kernel stamps were kept gets
    krx_ns = rx_ns."""
    import numpy as np
    from numpy.lib import recfunctions as rfn
    a = np.load(path)
    names = tuple(n for n, _t in SAMPLE_DTYPE)
    if a.dtype.names == names[:3]:
        a = rfn.append_fields(a, "krx_ns", a["rx_ns"], dtypes="<i8", usemask=False)
    if a.dtype.names != names:
        from linkemu.errors import LinkemuError
        raise LinkemuError(f"{path}: not a units samples file (fields {a.dtype.names})")
    return a
