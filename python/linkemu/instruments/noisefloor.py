"""noisefloor (src/tools/noisefloor.c): the machine's own scheduling noise.

A busy loop pinned to the CPU it is asked to measure records the gaps in
its own execution; the histogram is the floor under any timing figure
measured on that CPU.
"""

from __future__ import annotations

import json
import subprocess

from linkemu.errors import LinkemuError
from linkemu.instruments.tools import require_tool


def noise_floor(cpu: int, seconds: float) -> dict:
    """The gap histogram of a busy loop pinned to `cpu` (see noisefloor.c)."""
    binary = require_tool("noisefloor")
    try:
        cp = subprocess.run([str(binary), "--cpu", str(cpu), "--seconds", f"{seconds:g}"],
                            capture_output=True, text=True, timeout=seconds + 30)
    except subprocess.TimeoutExpired:     # run() has killed it
        raise LinkemuError(f"noisefloor on CPU {cpu} did not end within {seconds + 30:g} s "
                           f"(asked for {seconds:g} s)") from None
    if cp.returncode != 0:
        raise LinkemuError(f"noisefloor on CPU {cpu} failed ({cp.returncode}): "
                           f"{cp.stderr.strip()}")
    try:
        return json.loads(cp.stdout)
    except json.JSONDecodeError as e:
        raise LinkemuError(f"noisefloor on CPU {cpu} printed no JSON ({e}): "
                           f"{cp.stdout[-200:]!r}") from None


# Gaps shorter than this are a loop idling, not a stall: the daemon's own
# poll gaps use the same threshold (src/plane/poll_gaps.h, DP_POLL_GAP_MIN_NS).
GAP_MIN_NS = 1000


def lateness_quantile(gaps: list[tuple[float, int]], observed_ns: float, q: float) -> float:
    """The q-quantile of the lateness a deadline at a uniformly random
    moment gets from gaps [(length_ns, count)] in observed_ns: the x with
    sum(count x (g - x)+) = (1 - q) x observed_ns, gaps under GAP_MIN_NS
    counted as none. The definition of src/plane/poll_gaps.c, so that the
    machine's figure reads like linkemud's `poll_gaps.lateness_ns`."""
    gaps = [(g, c) for g, c in gaps if g >= GAP_MIN_NS]

    def excess(x: float) -> float:
        return sum(c * (g - x) for g, c in gaps if g > x)

    want = (1 - q) * observed_ns
    if not gaps or excess(0) <= want:
        return 0.0
    lo, hi = 0.0, float(max(g for g, _ in gaps))
    while hi - lo > 1:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if excess(mid) > want else (lo, mid)
    return hi


def lateness(nf: dict, q: float) -> float:
    """lateness_quantile of a noise_floor() result (each histogram bucket
    at its middle)."""
    gaps = [((lo + hi) / 2, n) for lo, hi, n in nf["histogram"]]
    return lateness_quantile(gaps, nf["seconds"] * 1e9, q)
