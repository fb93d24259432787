"""The client's generation schedule: one unit every T, a flush every K units.

Unit i is due at t0 + i*T (absolute deadlines on CLOCK_MONOTONIC, so a late
wake-up never pushes the later units back: the schedule cannot drift). Flush
j carries units jK .. jK+K-1 and is due when the next unit would be
generated, t0 + (j+1)KT: the first unit of a flush waits K*T, the last one T
(the study's rule). At a tick that is both, the flush goes first.

The sender's own lateness is measured: for each unit, generation time minus
its deadline, and for each flush, send time minus its deadline. A unit's
recorded generation time is when it was really generated (CLOCK_REALTIME,
read right after the wake-up), so lateness never hides inside the latency.

Aligned schedules (`align_ns`): t0 is rounded up to a multiple of align_ns
on CLOCK_MONOTONIC, which every namespace of one host shares, so two
clients with the same alignment flush at the same instants whenever each
started (the lab's --quick runs a baseline stream in step with a delayed
one this way).

Waiting: sleep until `spin_ns` before the deadline, then busy-wait. The
thread's timer slack is set to 1 ns (prctl), so the kernel does not add its
default 50 us to each sleep.
"""

from __future__ import annotations

import ctypes
import time
from dataclasses import dataclass, field
from typing import Callable

from linkemu.instruments import units_wire as wire

PR_SET_TIMERSLACK = 29
LEAD_NS = 20_000_000     # first deadline this far after start: sockets are warm by then


def tight_timer_slack() -> bool:
    """Timer slack of 1 ns for the calling thread (False where prctl is missing)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def wait_until(deadline_ns: int, spin_ns: int) -> None:
    left = deadline_ns - time.monotonic_ns()
    if left > spin_ns:
        time.sleep((left - spin_ns) / 1e9)
    while time.monotonic_ns() < deadline_ns:
        pass


@dataclass
class Schedule:
    count: int
    interval_ns: int = 1_000_000
    flush: int = 10
    size: int = wire.MIN_SIZE
    spin_ns: int = 100_000
    align_ns: int = 0        # 0: start LEAD_NS from now; else on a multiple of this

    def validate(self) -> None:
        from linkemu.errors import UsageError
        wire.check_size(self.size)
        if not 1 <= self.count <= wire.MAX_COUNT:
            raise UsageError(f"--count {self.count}: must be 1 .. {wire.MAX_COUNT}")
        if not 1_000 <= self.interval_ns <= 10_000_000_000:
            raise UsageError("--interval must be 1us .. 10s")
        if self.interval_ns % 1000:
            # the hello (units_wire) tells the server T in microseconds
            raise UsageError(f"--interval {self.interval_ns}ns: must be a whole number of "
                             f"microseconds (the server learns it in us)")
        if not 1 <= self.flush <= 65_535 or self.flush * self.size > 65_000:
            raise UsageError(f"--flush {self.flush}: must be 1 .. 65535 and a flush "
                             f"({self.flush} x {self.size} B) at most 65,000 B")
        if not 0 <= self.spin_ns <= 10_000_000:
            raise UsageError("--spin must be 0 .. 10ms")
        if not 0 <= self.align_ns <= 10_000_000_000:
            raise UsageError("--align must be 0 .. 10s")

    def flushes(self) -> int:
        return -(-self.count // self.flush)


@dataclass
class Timing:
    """What the sender did, against its schedule (ns)."""
    unit_late_ns: list[int] = field(default_factory=list)
    flush_late_ns: list[int] = field(default_factory=list)
    send_ns: list[int] = field(default_factory=list)   # per flush: time the send call took
    # per flush: CLOCK_REALTIME just before its send call (the clock of the
    # units' generation times), so a flush's wait can be told from transit
    sent_rt_ns: list[int] = field(default_factory=list)
    timer_slack_1ns: bool = False


def start_ns(now_ns: int, align_ns: int) -> int:
    """The schedule's t0: LEAD_NS after now, rounded up to a multiple of
    align_ns when that is not 0."""
    t0 = now_ns + LEAD_NS
    return -(-t0 // align_ns) * align_ns if align_ns else t0


def generate(s: Schedule, send: Callable[[bytes], None]) -> Timing:
    """Runs the schedule in the calling thread, calling send(flush_bytes)
    at each flush's deadline. Returns the sender's lateness."""
    t = Timing(timer_slack_1ns=tight_timer_slack())
    t0 = start_ns(time.monotonic_ns(), s.align_ns)
    pending: list[bytes] = []
    for i in range(s.flushes() * s.flush + 1):
        deadline = t0 + i * s.interval_ns
        wait_until(deadline, s.spin_ns)
        if i > 0 and i % s.flush == 0 and pending:
            now = time.monotonic_ns()
            t.flush_late_ns.append(now - deadline)
            t.sent_rt_ns.append(time.time_ns())
            send(b"".join(pending))
            t.send_ns.append(time.monotonic_ns() - now)
            pending = []
        if i < s.count:
            gen = time.time_ns()
            t.unit_late_ns.append(time.monotonic_ns() - deadline)
            pending.append(wire.pack_unit(i, gen, s.size))
    return t
