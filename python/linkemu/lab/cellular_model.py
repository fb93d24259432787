"""What a cellular profile should give ping, from the link model alone.

RTT = both directions' base delays + their normal jitters + the wait for
the uplink trace's next delivery opportunity (a small frame waits for the
next millisecond with an opportunity; the trace's time 0 falls at a random
phase for a ping). This is how the cell-* profiles were fitted to the
published percentiles; the lab shows it beside the measurement, and the
tests check the profiles against it.
"""

from __future__ import annotations

import re
from pathlib import Path

_TRACE_RE = re.compile(r"\btrace\s+(\S+)")
DRAWS = 200_000
IPERF_UDP_PAYLOAD = 1448          # iperf3's UDP datagram on a 1500-byte MTU
IPERF_UDP_FRAME = 1448 + 8 + 20 + 14


def delay_jitter_ns(grammar: str) -> tuple[int, int]:
    """A link's `delay TIME [JITTER]` (0, 0 without one)."""
    from linkemu.daemon.scenario import parse_time
    words = grammar.split()
    if "delay" not in words:
        return 0, 0
    i = words.index("delay")
    vals = []
    for w in words[i + 1:i + 3]:
        try:
            vals.append(parse_time(w))
        except ValueError:
            break
    vals += [0, 0]
    return vals[0], vals[1]


def delay_jitter_ms(grammar: str) -> tuple[float, float]:
    d, j = delay_jitter_ns(grammar)
    return d / 1e6, j / 1e6


def trace_times_ms(grammar: str):
    import numpy as np
    m = _TRACE_RE.search(grammar)
    if not m:
        return None
    return np.loadtxt(Path(m.group(1)), dtype=np.int64)


def opportunity_waits_ms(times_ms, n: int, rng):
    """Waits, from n arrivals at uniform random times, to the next
    millisecond that carries an opportunity (the trace loops)."""
    import numpy as np
    t = np.unique(times_ms).astype(float)
    period = float(times_ms[-1])
    a = rng.uniform(0.0, period, n)
    i = np.searchsorted(t, a, side="left")
    nxt = np.where(i < t.size, t[np.minimum(i, t.size - 1)], t[0] + period)
    return nxt - a


def ping_rtts_ms(a2b: str, b2a: str, n: int = DRAWS, seed: int = 1):
    import numpy as np
    rng = np.random.default_rng(seed)
    du, ju = delay_jitter_ms(a2b)
    dd, jd = delay_jitter_ms(b2a)
    rtt = du + dd + ju * rng.standard_normal(n) + jd * rng.standard_normal(n)
    times = trace_times_ms(a2b)
    if times is not None:
        rtt = rtt + opportunity_waits_ms(times, n, rng)
    return rtt


def ping_prediction(a2b: str, b2a: str, seed: int = 1) -> dict:
    import numpy as np
    r = ping_rtts_ms(a2b, b2a, seed=seed)
    p10, p50, p90 = np.percentile(r, [10, 50, 90])
    return {"mean": float(r.mean()), "p10": float(p10), "p50": float(p50), "p90": float(p90)}


def udp_goodput_mbit(a2b: str) -> float | None:
    """iperf3's UDP goodput through the uplink trace at saturation."""
    times = trace_times_ms(a2b)
    if times is None:
        return None
    link = times.size * 1500 * 8 / (float(times[-1]) / 1e3) / 1e6
    return link * IPERF_UDP_PAYLOAD / IPERF_UDP_FRAME
