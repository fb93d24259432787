"""A lab session: one bed, one daemon at a time, progress, and cleanup.

    with LabSession("lab") as s:
        with s.link("delay 1ms limit 20000") as link:
            ... traffic ...
        link.final        # linkemud's final JSON, read after it stopped

Whatever happens inside (an error, Ctrl-C, SIGTERM), the daemon is stopped
and the bed removed on the way out. A bed that already carries a running
daemon is refused: it is someone's link, not ours to take down.
"""

from __future__ import annotations

import contextlib
import math
import sys
import time

from linkemu import api
from linkemu.bed import hugepages, procs, testbed
from linkemu.bed.interrupts import interruptible, shielded
from linkemu.daemon import daemon
from linkemu.errors import LinkemuError

# One mbuf of linkemud's pool: 2,176 B of buffer + struct rte_mbuf (128 B)
# + mempool header and alignment: ~2.4 KB of hugepage memory per frame held.
MBUF_BYTES = 2_432
HUGEPAGE_BYTES = 2 << 20
# Share of the free hugepages the lab lets one run's limits use (the rest is
# EAL's own memory, descriptor rings, caches).
HUGEPAGE_SHARE = 0.8


def mbuf_budget() -> int:
    """Frames the free hugepages can hold for one run's `limit`s."""
    st = hugepages.read_state()
    return int(st.free * HUGEPAGE_BYTES * HUGEPAGE_SHARE / MBUF_BYTES)


STALL_ALLOWANCE_S = 0.02


def limit_for(delay_ns: int, pps: float, floor: int = 1000) -> int:
    """A `limit` that holds delay x rate frames with room for bursts: the
    sender's batches and the daemon's TX stalls both queue frames beyond the
    mean (25 % more, plus 20 ms of traffic for a scheduling stall of the
    daemon's CPU, plus 1,024 spare)."""
    need = math.ceil(pps * (delay_ns / 1e9 * 1.25 + STALL_ALLOWANCE_S)) + 1024
    return max(floor, need)


class Progress:
    """Step counter with elapsed time and an estimate of what is left.

    Each step is announced with its planned duration; the estimate scales
    the planned time still ahead by how long the steps so far really took
    against their plan."""

    def __init__(self, planned: list[float], quiet: bool = False, out=None):
        self.planned = list(planned)
        self.total = len(planned)
        self.i = 0
        self.t0 = time.monotonic()
        self.done_planned = 0.0
        self.quiet = quiet
        self._out = out     # None: sys.stderr as it is when printing, not at import
        self.current: str | None = None     # the step under way, for errors

    def step(self, what: str) -> None:
        now = time.monotonic() - self.t0
        if self.i > 0:
            self.done_planned += self.planned[self.i - 1]
        ahead = sum(self.planned[self.i:])
        ratio = now / self.done_planned if self.done_planned > 0 else 1.0
        left = ahead * max(ratio, 0.5)
        self.i += 1
        self.current = what
        if not self.quiet:
            print(f"[{self.i}/{self.total}] {what}  (elapsed {_fmt_s(now)}, ~{_fmt_s(left)} left)",
                  file=self.out, flush=True)

    def note(self, msg: str) -> None:
        if not self.quiet:
            print(f"      {msg}", file=self.out, flush=True)

    @property
    def out(self):
        return self._out or sys.stderr

    def elapsed(self) -> float:
        return time.monotonic() - self.t0

    @contextlib.contextmanager
    def naming_failures(self, study: str):
        """Within: a failed step's error says which step of which study it
        was ("lfp: step 4/12 (cubic, window 48 KB, run 1/3): ttcp ..."), as
        a tool's own message does not (ttcp, iperf3 and ping know nothing
        of the run); an interruption says where it came and that no results
        file was written. Errors before the first step pass unchanged."""
        try:
            yield
        except LinkemuError as e:
            if self.current is not None:
                e.args = (f"{study}: step {self.i}/{self.total} ({self.current}): {e}",)
            raise
        except KeyboardInterrupt:
            if self.current is not None:
                print(f"{study}: interrupted in step {self.i}/{self.total} ({self.current}) "
                      f"after {_fmt_s(self.elapsed())}; no results file written",
                      file=self.out, flush=True)
            raise


def _fmt_s(s: float) -> str:
    s = int(round(s))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


class Link:
    """A started daemon (an api.Link); .final is its final JSON once stopped."""

    def __init__(self, link: api.Link):
        self.link = link
        self.final: dict | None = None
        self.problems: list[str] = []
        self.contention: list[str] = []   # other busy pollers seen during the run

    @property
    def a2b(self) -> dict:
        return (self.final or {}).get("directions", {}).get("a2b", {})


def other_pollers(own_prefix: str) -> list[str]:
    """Every linkemud that is not this bed's, with the CPU it last ran on.

    Another bed's daemon busy-polls a CPU too; if it is ours, the two take
    turns in scheduler slices of milliseconds and every figure of the run
    shows it. The lab cannot stop someone else's daemon, so it says so."""
    out = []
    for pid in procs.any_linkemud():
        argv = procs.cmdline(pid)
        if any(a == own_prefix or a == f"--file-prefix={own_prefix}" for a in argv):
            continue
        prefix = next((argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--file-prefix"),
                      "?")
        try:
            cpu = open(f"/proc/{pid}/stat").read().rpartition(")")[2].split()[36]
        except (OSError, IndexError):
            cpu = "?"
        out.append(f"linkemud pid {pid} (file prefix {prefix}) last on CPU {cpu}")
    return out


class LabSession:
    def __init__(self, bed_name: str = "lab", pmd: str | None = None, seed: int | None = None):
        self.api_bed = api.Bed(bed_name)
        self.bed = self.api_bed.layout      # what the instruments take
        self.pmd = pmd or "af_xdp"
        self.fallback = pmd is None         # af_xdp, else af_packet: decided at the first run
        self.seed = seed
        self._live: Link | None = None
        self._cm = None

    def __enter__(self) -> "LabSession":
        daemon.require_binary()
        if (running := testbed.daemon_pid(self.bed)) is not None:
            raise LinkemuError(f"a {procs.daemon_word(running)} is already running "
                               f"on bed '{self.bed.name}'; stop it "
                               f"(linkemu stop --bed {self.bed.name}) or use another --bed")
        self._cm = interruptible()
        self._cm.__enter__()
        try:
            self.api_bed.up()
        except BaseException:
            self.__exit__(*sys.exc_info())
            raise
        return self

    def __exit__(self, *exc) -> None:
        with shielded():
            try:
                if self._live is not None and self._live.final is None:
                    try:
                        self._live.link.stop()
                    except LinkemuError:
                        pass
                    self._live = None
            finally:
                self.api_bed.down()
                if self._cm is not None:
                    cm, self._cm = self._cm, None
                    cm.__exit__(None, None, None)

    @contextlib.contextmanager
    def link(self, a2b: str, b2a: str = "", seed: int | None = None, io: str = "dpdk",
             layout: str | None = None):
        """Start the data plane (io: linkemud "dpdk" or linkemuk "kernel")
        with these links; stop it on leaving the block and put its final
        JSON in link.final (conservation re-checked)."""
        kernel = io == "kernel"
        started = self.api_bed.run(a2b, b2a, io=io, layout=layout,
                                   pmd=None if (self.fallback or kernel) else self.pmd,
                                   seed=self.seed if seed is None else seed)
        if not kernel:
            self.pmd, self.fallback = started.pmd, False    # keep what worked
        link = Link(started)
        link.contention = other_pollers(self.bed.file_prefix)
        self._live = link
        try:
            yield link
        except BaseException:
            with shielded():
                try:
                    started.stop()
                except LinkemuError:
                    pass
                self._live = None
            raise
        for c in other_pollers(self.bed.file_prefix):
            if c not in link.contention:
                link.contention.append(c)
        with shielded():
            report = started.stop()
            self._live = None
        link.final = report.raw
        link.problems = list(report.problems)
        if link.contention:
            link.problems.append("another daemon was polling during this run (the figures "
                                 "include its CPU sharing): " + "; ".join(link.contention))
