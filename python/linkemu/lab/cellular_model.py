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
from collections import deque
from pathlib import Path

_TRACE_RE = re.compile(r"\btrace\s+(\S+)")
_LIMIT_QUEUE_RE = re.compile(r"\blimit-queue\s+(\d+)")
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


def trace_rate_mbit(times_ms) -> float:
    """A trace's mean capacity (1500-byte opportunities), from its times."""
    return times_ms.size * 1500 * 8 / (float(times_ms[-1]) / 1e3) / 1e6


def limit_queue_frames(grammar: str) -> int | None:
    """The link's `limit-queue PACKETS` (None without one)."""
    m = _LIMIT_QUEUE_RE.search(grammar)
    return int(m.group(1)) if m else None


def udp_goodput_mbit(a2b: str, offered_mbit: float | None = None) -> float | None:
    """iperf3's UDP goodput through the uplink trace at saturation.

    Without `offered_mbit` (or without a `limit-queue`): the trace's whole
    capacity, rate x 1448/1490. With them: iperf3's datagrams arrive evenly
    at `offered_mbit` (of payload) into a drop-tail queue of `limit-queue`
    frames, served by the trace's opportunities with Mahimahi's byte
    accounting; during a gap of the trace the queue fills and drops, and a
    burst of opportunities can empty it, so opportunities go unused. The
    figure is the long-run mean over one period of the trace (after one
    period of warm-up). On the bed a 20 s run's figure varies with the
    trace's phase (about +-3 % with a shallow queue) and iperf3's own send
    bursts; the bed measured within 2 % of this mean (docs/lab.md)."""
    times = trace_times_ms(a2b)
    if times is None:
        return None
    cap = trace_rate_mbit(times) * IPERF_UDP_PAYLOAD / IPERF_UDP_FRAME
    q_max = limit_queue_frames(a2b)
    if offered_mbit is None or q_max is None:
        return cap if offered_mbit is None else min(cap, offered_mbit)
    import numpy as np
    period = int(times[-1])
    per_ms = np.bincount(times, minlength=period + 1)[1:period + 1].tolist()
    fps = offered_mbit * 1e6 / (IPERF_UDP_PAYLOAD * 8)
    queue: deque[int] = deque()           # bytes still to send, per waiting frame
    acc = 0.0
    delivered = 0
    for ms in range(2 * period):
        if ms == period:
            delivered = 0                 # the first lap is warm-up
        budget = per_ms[ms % period] * 1500
        while queue and budget > 0:
            take = min(budget, queue[0])
            queue[0] -= take
            budget -= take
            if queue[0] == 0:
                queue.popleft()
                delivered += 1
        acc += fps / 1000.0
        while acc >= 1.0:
            acc -= 1.0
            if len(queue) < q_max:
                queue.append(IPERF_UDP_FRAME)
    return delivered * IPERF_UDP_PAYLOAD * 8 / (period / 1e3) / 1e6


def offered_mbit(text: str) -> float:
    """iperf3's `-b` value as the lab gives it ("25M") in Mbit/s."""
    units = {"K": 1e-3, "M": 1.0, "G": 1e3}
    t = text.strip().upper()
    return float(t[:-1]) * units[t[-1]] if t[-1] in units else float(t) / 1e6
