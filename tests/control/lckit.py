"""Helpers of the control tests (imported by name, never as `conftest`, so
this directory and tests/integration can be collected in one session)."""

from __future__ import annotations

import bisect
import contextlib
import json
import math
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
if str(REPO / "python") not in sys.path:
    sys.path.insert(0, str(REPO / "python"))

from linkemu import netns  # noqa: E402
from linkemu.cpus import tool_cpus  # noqa: E402
from linkemu.stats import percentile  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402

import owdprobe  # noqa: E402

BED = "lc"


def cli_env(extra: dict | None = None) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO / "python") + (os.pathsep + env["PYTHONPATH"]
                                                 if env.get("PYTHONPATH") else "")
    env.update(extra or {})
    return env


def linkemu(*args: str, timeout: float = 120, env: dict | None = None,
            ) -> subprocess.CompletedProcess[str]:
    """`linkemu ARGS` as a user runs it; never raises on the exit code."""
    return subprocess.run([sys.executable, "-m", "linkemu", *args], capture_output=True,
                          text=True, timeout=timeout, env=cli_env(env))


class Stream:
    """A paced UDP stream src -> dst (or dst -> src) whose every datagram's
    send and receive times are kept: start(), then finish() -> frames."""

    def __init__(self, bed, count: int, rate: float, port: int = 9300, reverse: bool = False,
                 out: str | None = None, idle_s: float = 3.0):
        self.bed, self.count, self.rate, self.port = bed, count, rate, port
        self.tx_ns, self.rx_ns = (bed.ns_dst, bed.ns_src) if reverse else (bed.ns_src, bed.ns_dst)
        self.rx_addr = bed.addr_src if reverse else bed.addr_dst
        self.out = out or f"/tmp/lc-owd-{os.getpid()}-{port}.bin"
        self.idle_s = idle_s
        self.recv: subprocess.Popen | None = None
        self.send: subprocess.Popen | None = None
        self.sender_report: dict | None = None
        self.receiver_report: dict | None = None

    def _argv(self, ns: str, args: list[str]) -> list[str]:
        return netns.ns_exec_argv(ns, [sys.executable, str(HERE / "owdprobe.py"), *args],
                                  cpus=tool_cpus())

    def start(self) -> "Stream":
        self.recv = subprocess.Popen(
            self._argv(self.rx_ns, ["recv", "--bind", self.rx_addr, "--port", str(self.port),
                                    "--count", str(self.count), "--out", self.out,
                                    "--idle", str(self.idle_s)]),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env())
        line = self.recv.stdout.readline()
        if not line.startswith("ready"):
            self.recv.wait(5)
            raise RuntimeError(f"receiver did not start: {self.recv.stderr.read()}")
        self.send = subprocess.Popen(
            self._argv(self.tx_ns, ["send", "--dst", self.rx_addr, "--port", str(self.port),
                                    "--count", str(self.count), "--rate", str(self.rate)]),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli_env())
        return self

    def finish(self, timeout: float | None = None) -> list[tuple[int, int, int]]:
        """Wait for both ends; [(seq, send_ns, recv_ns)] in arrival order."""
        timeout = timeout or self.count / self.rate + 60
        out, err = self.send.communicate(timeout=timeout)
        if self.send.returncode != 0:
            raise RuntimeError(f"sender failed: {err}")
        self.sender_report = json.loads(out.strip().splitlines()[-1])
        out, err = self.recv.communicate(timeout=self.idle_s + 60)
        if self.recv.returncode != 0:
            raise RuntimeError(f"receiver failed: {err}")
        self.receiver_report = json.loads(out.strip().splitlines()[-1])
        frames = owdprobe.load(self.out)
        os.unlink(self.out)
        return frames

    def kill(self) -> None:
        for p in (self.send, self.recv):
            if p is not None and p.poll() is None:
                p.kill()
                p.wait()
        if os.path.exists(self.out):
            os.unlink(self.out)


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
    later than bound."""

    t_min: int
    bound: int
    late_rate: float
    p50: float = 0.0
    p99: float = 0.0
    p999: float = 0.0
    max: int = 0

    @classmethod
    def from_baseline(cls, frames, margin_ns: int = 150_000) -> "Noise":
        owd = sorted(r - s for _q, s, r in frames)
        p99 = percentile(owd, 99)
        bound = int(p99 + margin_ns)
        late = sum(1 for x in owd if x > bound) / len(owd)
        return cls(owd[0], bound, late, percentile(owd, 50), p99, percentile(owd, 99.9),
                   owd[-1])


@dataclass
class Verdict:
    ok: int = 0                 # owd = a delay the link had when the frame could have arrived
    held: int = 0               # FIFO: left right behind the frame ahead (after a decrease)
    early: list = field(default_factory=list)   # faster than any possible delay: never allowed
    stalled: list = field(default_factory=list)  # late, while the reference was late too
    late: list = field(default_factory=list)    # late, unexplained
    by_delay: dict = field(default_factory=dict)

    def summary(self) -> str:
        return (f"ok {self.ok} (by delay: {self.by_delay}), held behind the frame ahead "
                f"{self.held}, early {len(self.early)}, late in a stall {len(self.stalled)}, "
                f"late {len(self.late)}")


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


def classify(frames, changes: list[Change], noise: Noise, held_gap_ns: int = HELD_GAP_NS,
             reference: Reference | None = None) -> Verdict:
    """For every frame (seq, send_ns, recv_ns): is its one-way delay one of
    the delays the link had while the frame could have reached linkemud?

    A frame sent at s arrives at linkemud at some a >= s + t_min, and a <=
    recv - D (a frame never leaves before its deadline a + D). Change k
    (delay D_k, switched in [lo_k, hi_k]) can have applied to it if that
    window meets [lo_k, hi_(k+1)). Its owd must then be in
    [D_k + t_min - TOL, D_k + bound].

    Early frames (below every possible D + t_min) are always wrong. A late
    one is 'stalled' when the reference stream had a late frame within
    STALL_WINDOW_NS of its arrival (the whole machine stalled), else 'late'.

    With held_gap_ns >= 0, a FIFO delay line is allowed for: after a
    decrease (3 ms -> 1 ms) a frame with the new, shorter deadline may wait
    for the frames held before it, leaving right behind the frame sent
    before it (within held_gap_ns): counted as 'held'. linkemud keeps a
    replaced model's frames apart, so its tests pass -1 (no such waiting)."""
    v = Verdict()
    starts = [c.lo_ns for c in changes]
    ends = [c.hi_ns for c in changes[1:]] + [math.inf]     # config k may last until hi_(k+1)
    recv_by_seq = {q: r for q, _s, r in frames}
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
        prev = recv_by_seq.get(q - 1)
        if prev is not None and 0 <= r - prev <= held_gap_ns:
            v.held += 1
            continue
        if reference is not None and reference.stalled_near(r):
            v.stalled.append((q, s, r, owd, ds))
            continue
        v.late.append((q, s, r, owd, ds))
    return v


def late_allowance(noise: Noise, n: int) -> int:
    """How many frames may be late with no stall to explain them: three
    times the baseline's own rate beyond the bound, plus 5."""
    return int(3 * noise.late_rate * n) + 5


MAX_STALLED = 0.02     # a machine stalling more than this is not one to time anything on


def other_daemons(bed_name: str = BED) -> list[str]:
    """linkemud processes that are not this bed's: another bed's daemon
    busy-polls the same CPUs and stalls ours by milliseconds at a time."""
    from linkemu import procs, testbed
    ours = set(procs.find_linkemud(testbed.bed_for(bed_name).file_prefix))
    out = []
    for pid in procs.any_linkemud():
        if pid not in ours:
            argv = procs.cmdline(pid)
            prefix = next((argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--file-prefix"),
                          "?")
            out.append(f"pid {pid} ({prefix})")
    return out


class CpuWatch:
    """How long linkemud's threads waited for a CPU while runnable
    (schedstat), and the VM's steal time, over a test: a busy-polling lcore
    that waits is sharing its CPU, and its frames wait with it."""

    def __init__(self, bed):
        from linkemu.testbed import daemon_pid
        self.bed = bed
        self.pid = daemon_pid(bed)
        self.t0 = self.wait0 = self.steal0 = 0
        self.elapsed_s = self.wait_ms = self.steal_ms = 0.0
        self.others: set[str] = set()      # other linkemuds seen while watching
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._look, daemon=True)

    def _look(self) -> None:
        while True:
            self.others.update(other_daemons(self.bed.name))
            if self._stop.wait(0.25):
                return

    def _wait_ns(self) -> int:
        """Run-queue wait of the polling threads: the main lcore (the main
        thread) and EAL's lcore-worker-N; not the control or telemetry
        threads, which sleep in poll() and wake on demand."""
        total = 0
        try:
            for t in os.listdir(f"/proc/{self.pid}/task"):
                with open(f"/proc/{self.pid}/task/{t}/comm") as f:
                    comm = f.read().strip()
                if int(t) != self.pid and not comm.startswith("lcore-worker"):
                    continue
                with open(f"/proc/{self.pid}/task/{t}/schedstat") as f:
                    total += int(f.read().split()[1])
        except (OSError, ValueError, IndexError):
            pass
        return total

    @staticmethod
    def _steal_ticks() -> int:
        with open("/proc/stat") as f:
            fields = f.readline().split()
        return int(fields[8]) if len(fields) > 8 else 0

    def start(self) -> "CpuWatch":
        self.t0, self.wait0, self.steal0 = time.monotonic(), self._wait_ns(), self._steal_ticks()
        self._thread.start()
        return self

    def stop(self) -> "CpuWatch":
        self._stop.set()
        self._thread.join()
        self.elapsed_s = time.monotonic() - self.t0
        self.wait_ms = (self._wait_ns() - self.wait0) / 1e6
        self.steal_ms = (self._steal_ticks() - self.steal0) * 1000 / os.sysconf("SC_CLK_TCK")
        return self

    @property
    def shared(self) -> bool:
        """Waited more than 2 ms + 1 ms per second: alone on its CPU,
        linkemud waits ~0.2 ms per second (kernel threads); one stall of a
        few ms, which frames would show, is already more than that."""
        return self.wait_ms > 2 + self.elapsed_s

    def __str__(self) -> str:
        return (f"linkemud waited {self.wait_ms:.1f} ms for its CPU and the VM lost "
                f"{self.steal_ms:.0f} ms to steal in {self.elapsed_s:.1f} s")


def require_quiet(noise: "Noise | None", needed_ns: int, what: str,
                  cpu: CpuWatch | None = None) -> None:
    """Skip the timing checks of a test (its other checks have run) when
    the machine cannot resolve what it measures: another linkemud polling
    the same CPUs, linkemud's own CPU shared, or a path noisier than the
    differences to tell apart."""
    import pytest
    others = sorted(set(other_daemons()) | (cpu.others if cpu is not None else set()))
    if others:
        pytest.skip(f"{what}: timing not checked, another linkemud shares the CPUs "
                    f"({', '.join(others)}); the rest passed")
    if cpu is not None and cpu.shared:
        pytest.skip(f"{what}: timing not checked, linkemud shared its CPU ({cpu}); "
                    f"the rest passed")
    if noise is not None and noise.bound >= needed_ns:
        pytest.skip(f"{what}: timing not checked, the path is too noisy right now (p99 "
                    f"{noise.p99 / 1e3:.0f} us, max {noise.max / 1e3:.0f} us; needs a bound "
                    f"under {needed_ns / 1e3:.0f} us); the rest passed")


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
