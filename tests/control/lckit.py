"""Helpers of the control tests: a paced UDP stream with every datagram's
times (owdprobe), and the classifier that says which delay each frame
got across live changes. The bed, the CLI and the timing decision are the
kit's (tests/kit)."""

from __future__ import annotations

import bisect
import contextlib
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from linkemu.bed.cpus import tool_cpus
from linkemu.instruments.owd import IP_UDP_HEADERS, OwdRun, ProbeSpec, read_samples
from linkemu.instruments.stats import percentile
from linkemu.lab.analysis import poisson_excess_allowed

HERE = Path(__file__).resolve().parent


class Stream:
    """A paced UDP stream src -> dst (or dst -> src) through owdprobe whose
    every datagram's send and receive times are kept: start(), then
    finish() -> frames [(seq, send_ns, recv_ns)] in arrival order, times in
    CLOCK_MONOTONIC (the clock the tests time their `set`s with)."""

    def __init__(self, bed, count: int, rate: float, port: int = 9300, reverse: bool = False,
                 out: str | None = None, idle_s: float = 3.0, size: int = 64):
        self.bed, self.count, self.rate, self.port = bed, count, rate, port
        self.out = Path(out or f"/tmp/lc-owd-{os.getpid()}-{port}.bin")
        self.idle_s = idle_s
        spec = ProbeSpec(ip_len=size + IP_UDP_HEADERS, pps=rate, count=count,
                         run_id=(os.getpid() + port) % 65536, port=port, spin_us=50,
                         samples=self.out, idle_s=idle_s, reverse=reverse)
        self.run = OwdRun(bed, spec)
        self.sender_report: dict | None = None
        self.receiver_report: dict | None = None

    def start(self) -> "Stream":
        self.run.start()
        return self

    def finish(self) -> list[tuple[int, int, int]]:
        """Wait for both ends; [(seq, send_ns, recv_ns)] in arrival order."""
        try:
            out = self.run.finish()
            self.sender_report, self.receiver_report = out["sender"], out["receiver"]
            a = read_samples(self.out, duplicates=True)
        finally:
            self.out.unlink(missing_ok=True)
        # owdprobe compares REALTIME - MONOTONIC at its start and end: a
        # step is milliseconds or more; tens of ns are the two reads' skew.
        assert abs(self.receiver_report["clock_step_ns"]) < TOL_NS, \
            f"CLOCK_REALTIME was stepped during the stream: {self.receiver_report}"
        # owdprobe stamps CLOCK_REALTIME (the kernel's receive stamps are);
        # the tests' clock is CLOCK_MONOTONIC: shift by their difference.
        shift = realtime_offset()
        return [(int(q), int(s) - shift, int(r) - shift)
                for q, s, r in zip(a["seq"], a["send_ns"], a["rx_ns"])]

    def kill(self) -> None:
        self.run.kill()
        self.out.unlink(missing_ok=True)


def realtime_offset() -> int:
    """CLOCK_REALTIME - CLOCK_MONOTONIC, as owdprobe reads it: of a few
    (MONOTONIC, REALTIME, MONOTONIC) triples, the one whose MONOTONIC
    reads lie closest together, so that a preemption between two reads
    cannot skew it by the time the thread was off its CPU."""
    width, best = None, 0
    for _ in range(8):
        m1 = time.monotonic_ns()
        r = time.clock_gettime_ns(time.CLOCK_REALTIME)
        m2 = time.monotonic_ns()
        if width is None or m2 - m1 < width:
            width, best = m2 - m1, r - (m1 + (m2 - m1) // 2)
    return best


def owd_stats(frames) -> dict:
    owd = [r - s for _q, s, r in frames]
    return {"n": len(owd), "min": min(owd), "p50": percentile(owd, 50),
            "p99": percentile(owd, 99), "p999": percentile(owd, 99.9), "max": max(owd)}


def wait_for(pred, timeout: float, what: str, step: float = 0.02):
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(step)


# --- which delay did each frame get? -------------------------------------------------------

@dataclass
class Change:
    """The link switched to delay_ns at some moment in [lo_ns, hi_ns]
    (CLOCK_MONOTONIC): from when its `set` was sent to when the reply came.
    The link's configuration before any change has lo = hi = -inf."""

    delay_ns: int
    lo_ns: float
    hi_ns: float


@dataclass
class Noise:
    """The path's own latency, from a baseline stream through the same link
    with no delay (owd = path latency there).

    t_min: the fastest a frame crosses. bound: how much later than its
    delay a frame may arrive: the baseline's p99 + margin. Not p99.9: this
    VM stalls now and then for 3-8 ms as a whole (linkemud's lcore is not
    even preempted; the guest does not run), which puts a few tens of
    frames of a stream far out; those are told apart by the reference
    stream instead (classify). late_rate: the baseline's share of frames
    later than bound; late: those frames as hold-ups (episodes) over the
    baseline's sending time, for the report only: a window's hold-ups are
    compared with a control stretch under the test's own load (the
    baseline ran alone, with less beside its sender)."""

    t_min: int
    bound: int
    late_rate: float
    p50: float = 0.0
    p99: float = 0.0
    p999: float = 0.0
    max: int = 0
    late: "Exposure | None" = None

    @classmethod
    def from_baseline(cls, frames, margin_ns: int = 150_000) -> "Noise":
        owd = sorted(r - s for _q, s, r in frames)
        p99 = percentile(owd, 99)
        bound = int(p99 + margin_ns)
        late_sends = [s for _q, s, r in frames if r - s > bound]
        sends = [s for _q, s, _r in frames]
        late = Exposure(episodes(late_sends), max(sends) - min(sends))
        return cls(owd[0], bound, len(late_sends) / len(owd), percentile(owd, 50), p99,
                   percentile(owd, 99.9), owd[-1], late)


# --- how many late frames are too many? ---------------------------------------------------
#
# Late frames come in bursts: one hold-up of the path (the sender, or the
# softirq that hands its frames to linkemud, kept off CPU 0 for a while)
# makes every frame sent meanwhile late by about as much. A CI run that
# failed on a frame count had 23 late frames; the 20 it listed were 5
# hold-ups, 11 sent by one sendmmsg after the sender had waited 1.1 ms for
# its CPU. Frames are not independent; hold-ups are, to a first
# approximation: so the tests count hold-ups (late frames sent within
# EPISODE_GAP_NS of the previous late one are one) and compare their number
# in a window with a control stretch by the exact test of two Poisson
# rates, at level LATE_ALPHA.

EPISODE_GAP_NS = 1_000_000
LATE_ALPHA = 0.001


def episodes(send_ns, gap_ns: int = EPISODE_GAP_NS) -> int:
    """How many hold-ups the late frames sent at send_ns make."""
    t = sorted(send_ns)
    return sum(1 for i, s in enumerate(t) if i == 0 or s - t[i - 1] > gap_ns)


@dataclass
class Exposure:
    """Hold-ups (late episodes) seen in span_ns of sending time."""

    episodes: int
    span_ns: float

    def allows(self, span_ns: float) -> int:
        """The most hold-ups a window of span_ns may have before the exact
        conditional test rejects "the same rate as here" at LATE_ALPHA."""
        return poisson_excess_allowed(max(span_ns, 1.0), self.episodes, self.span_ns, LATE_ALPHA)


@dataclass
class Verdict:
    ok: int = 0                 # owd = a delay the link had when the frame could have arrived
    held: int = 0               # FIFO: left right behind the frame ahead (after a decrease)
    batched: int = 0            # sent in the sender's catch-up batch, right behind the frame ahead
    early: list = field(default_factory=list)   # faster than any possible delay: never allowed
    stalled: list = field(default_factory=list)  # late, while the reference was late or the sender behind
    late: list = field(default_factory=list)    # late, unexplained
    by_delay: dict = field(default_factory=dict)

    def summary(self) -> str:
        return (f"ok {self.ok} (by delay: {self.by_delay}), held behind the frame ahead "
                f"{self.held}, behind the frame ahead in a catch-up batch {self.batched}, "
                f"early {len(self.early)}, late in a stall {len(self.stalled)}, late {len(self.late)}")


TOL_NS = 5_000     # clock conversion (kernel CLOCK_REALTIME stamp -> MONOTONIC) and rounding
HELD_GAP_NS = 200_000
STALL_WINDOW_NS = 1_000_000


class Reference:
    """A stream through the other direction, with no delay, at the same
    time as the test: when were its frames late (a stall of the machine)?"""

    def __init__(self, frames, bound: int):
        late = sorted(r for _q, s, r in frames if r - s > bound)
        self.late_recv = late

    def stalled_near(self, recv_ns: int, window_ns: int = STALL_WINDOW_NS) -> bool:
        i = bisect.bisect_left(self.late_recv, recv_ns - window_ns)
        return i < len(self.late_recv) and self.late_recv[i] <= recv_ns + window_ns


class SenderLag:
    """When the stream's own sender was kept from its schedule.

    owdprobe sends frame i at t0 + i/rate (an absolute schedule), busy-
    waiting for the due time, and stamps it just before the system call: a
    stamp later than its due time by more than `bound` means the sender was
    off its CPU from the due time to the stamp. That CPU also carries the
    frame's way into linkemud (the softirq that hands it to linkemud's
    AF_XDP socket runs where it was sent), and the frames owed meanwhile go
    in one catch-up batch behind each other: frames stamped within
    window_ns of such a stretch may have reached linkemud later than their
    stamps say, by as much as the stretch. Seen: a slow spell of the VM
    (every softirq 5-10 times slower, on both CPUs) left CPU 0 saturated by
    the test's own tools for 20 ms and the sender 10 ms behind; its catch-
    up batch reached linkemud up to 1.7 ms after its stamp, and the set
    that followed found a batch stamped 0.85 ms before it half on each
    side."""

    def __init__(self, frames, rate: float, bound: int, window_ns: int):
        period = 1e9 / rate
        # No stamp is early, so the least (stamp - i/rate) is t0 plus the
        # cost of a stamp.
        t0 = min(s - q * period for q, s, _r in frames)
        spans: list[list[float]] = []
        for lo, hi in sorted((t0 + q * period, s) for q, s, _r in frames if s - (t0 + q * period) > bound):
            if spans and lo <= spans[-1][1]:
                spans[-1][1] = max(spans[-1][1], hi)
            else:
                spans.append([lo, hi])
        self.spans = spans               # disjoint, in order: [due, stamp] of the lagging frames
        self._starts = [lo for lo, _hi in spans]
        self.window_ns = window_ns

    def near(self, send_ns: float) -> bool:
        """Was the sender behind its schedule within window_ns of send_ns?"""
        i = bisect.bisect_right(self._starts, send_ns + self.window_ns) - 1
        return i >= 0 and self.spans[i][1] >= send_ns - self.window_ns


def classify(frames, changes: list[Change], noise: Noise, held_gap_ns: int = HELD_GAP_NS,
             reference: Reference | None = None, sender: SenderLag | None = None) -> Verdict:
    """For every frame (seq, send_ns, recv_ns): is its one-way delay one of
    the delays the link had while the frame could have reached linkemud?

    A frame sent at s arrives at linkemud at some a >= s + t_min, and a <=
    recv - D (a frame never leaves before its deadline a + D). Change k
    (delay D_k, switched in [lo_k, hi_k]) can have applied to it if that
    window meets [lo_k, hi_(k+1)). Its owd must then be in
    [D_k + t_min - TOL, D_k + bound].

    Early frames (below every possible D + t_min) are always wrong. A late
    one is 'stalled' when the reference stream had a late frame within
    STALL_WINDOW_NS of its arrival (the whole machine stalled), or, given
    `sender`, when the stream's sender was behind its schedule near its
    sending (its CPU, which carries the frame's way into linkemud, was
    taken: SenderLag); else 'late'.

    With held_gap_ns >= 0, a FIFO delay line is allowed for: after a
    decrease (3 ms -> 1 ms) a frame with the new, shorter deadline may wait
    for the frames held before it, leaving right behind the frame sent
    before it (within held_gap_ns): counted as 'held'. linkemud keeps a
    replaced model's frames apart, so its tests pass -1 (no such waiting).

    A sender that fell behind (owdprobe lost its CPU) sends the frames it
    owes in one batch, all with one send stamp; each then waits in the
    kernel behind the frames ahead of it in the batch (about a microsecond
    each), lateness its stamp does not show. A late frame with the same
    stamp as the frame before it, arriving within noise.bound after it, is
    counted 'batched': its timing is that frame's. The batch's first frame
    is judged as any other, so a link that held the batch late shows
    there."""
    v = Verdict()
    starts = [c.lo_ns for c in changes]
    ends = [c.hi_ns for c in changes[1:]] + [math.inf]     # config k may last until hi_(k+1)
    by_seq = {q: (s, r) for q, s, r in frames}
    for q, s, r in frames:
        owd = r - s
        a_lo = s + noise.t_min
        cands = []
        k = bisect.bisect_right(starts, r) - 1
        # The switches come one after another, so once a config had surely
        # ended before the frame could arrive, so had every earlier one.
        while k >= 0 and ends[k] > a_lo:
            if changes[k].lo_ns <= r - changes[k].delay_ns:
                cands.append(k)
            k -= 1
        ds = sorted({changes[k].delay_ns for k in cands})
        match = [d for d in ds if d + noise.t_min - TOL_NS <= owd <= d + noise.bound]
        if match:
            v.ok += 1
            v.by_delay[match[0]] = v.by_delay.get(match[0], 0) + 1
            continue
        if not ds or owd < ds[0] + noise.t_min - TOL_NS:
            v.early.append((q, s, r, owd, ds))
            continue
        prev_sent, prev = by_seq.get(q - 1, (None, None))
        if prev is not None and 0 <= r - prev <= held_gap_ns:
            v.held += 1
            continue
        if prev is not None and prev_sent == s and 0 <= r - prev <= noise.bound:
            v.batched += 1
            continue
        if (reference is not None and reference.stalled_near(r)) or (sender is not None and sender.near(s)):
            v.stalled.append((q, s, r, owd, ds))
            continue
        v.late.append((q, s, r, owd, ds))
    return v


MAX_STALLED = 0.02     # a machine stalling more than this is not one to time anything on
MAX_BATCHED = 0.10     # frames judged by the frame ahead: beyond this, too few on their own


@contextlib.contextmanager
def off_the_lcore():
    """Keep this test process (and the threads and processes it starts
    meanwhile) off linkemud's CPU: a test that wakes a thousand times to
    send `set`s would otherwise be scheduled onto the busy-polling lcore
    now and then, and its frames would wait for it."""
    cpus = tool_cpus()
    if not cpus:
        yield
        return
    old = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {int(c) for c in cpus.split(",")})
    try:
        yield
    finally:
        os.sched_setaffinity(0, old)
