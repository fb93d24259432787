"""Helpers of the link-model tests: the per-datagram probe (owdprobe),
traffic of other kinds, and the statistics the bounds use (the bed, the
CLI, runs of linkemud and their books are the kit's: tests/kit)."""

from __future__ import annotations

import json
import math
import os
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from kit import REPO, linkemu
from linkemu.bed import netns
from linkemu.bed.cpus import tool_cpus
from linkemu.bed.testbed import Bed
from linkemu.instruments.iperf3 import iperf3_run
from linkemu.instruments.owd import IP_UDP_HEADERS, ProbeSpec, read_samples
from linkemu.instruments.owd import probe as owd_probe

HERE = Path(__file__).resolve().parent
PROFILE_DIR = REPO / "profiles"
DIST_DIR = PROFILE_DIR / "dist"
NETEM_DIST_SCALE = 8192


def traces_dir() -> Path:
    """The real traces, shipped in the repository (traces/README.md)."""
    return REPO / "traces"


def cls(direction: dict, name: str) -> dict:
    """The class `name` of a direction's final counters."""
    for c in direction["classes"]:
        if c["name"] == name:
            return c
    raise KeyError(f"no class {name} in {[c['name'] for c in direction['classes']]}")


# --- the probe ----------------------------------------------------------------------------

@dataclass
class ProbeRun:
    count: int
    records: list[list[int]]          # [seq, send_ns, recv_ns, tos] in arrival order
    sender: dict
    foreign: int
    first: dict[int, list[int]] = field(init=False)

    def __post_init__(self) -> None:
        self.first = {}
        for r in self.records:
            self.first.setdefault(r[0], r)

    @property
    def received(self) -> int:
        return len(self.first)

    @property
    def lost_seqs(self) -> list[int]:
        return [s for s in range(self.count) if s not in self.first]

    @property
    def lost(self) -> int:
        return self.count - self.received

    @property
    def duplicates(self) -> int:
        return len(self.records) - len(self.first)

    @property
    def reordered(self) -> int:
        """As owdprobe counts it: datagrams that arrived after one sent
        later than them (first copies only)."""
        top, n = -1, 0
        seen = set()
        for r in self.records:
            if r[0] in seen:
                continue
            seen.add(r[0])
            if r[0] < top:
                n += 1
            else:
                top = r[0]
        return n

    def owd_ms(self) -> list[float]:
        """One-way delays of the first copies, in sequence order."""
        return [(self.first[s][2] - self.first[s][1]) / 1e6 for s in sorted(self.first)]

    def arrivals_ns(self) -> list[int]:
        """Kernel receive times of all datagrams, sorted."""
        return sorted(r[2] for r in self.records)

    @property
    def first_send_ns(self) -> int:
        """When the first datagram that arrived was sent (CLOCK_REALTIME)."""
        return min(r[1] for r in self.records)

    def tos_counts(self) -> Counter:
        return Counter(r[3] for r in self.records)


def probe(bed: Bed, count: int, rate: float, size: int = 64, port: int = 9000, tos: int = 0,
          sport: int = 0, reverse: bool = False, idle_s: float = 0.5,
          start_timeout_s: float = 10.0, send_errors_ok: bool = False) -> ProbeRun:
    """owdprobe from src to dst (dst to src with reverse), `count` datagrams
    of `size` bytes of UDP payload at `rate` per second (0: back to back),
    every arrival kept (seq, send and kernel receive time, TOS byte). A
    datagram the sender could not send never reaches the link and would
    look like link loss: that fails the run unless send_errors_ok (then
    their number is .sender["errors"])."""
    samples = Path(tempfile.mkstemp(prefix="lm-owd-", suffix=".bin")[1])
    spec = ProbeSpec(ip_len=size + IP_UDP_HEADERS, pps=rate or None, count=count,
                     run_id=int.from_bytes(os.urandom(2), "big"), port=port, spin_us=50,
                     samples=samples, idle_s=idle_s, start_timeout_s=start_timeout_s,
                     reverse=reverse, tos=tos, sport=sport)
    try:
        out = owd_probe(bed, spec)
        a = read_samples(samples, duplicates=True)
    finally:
        samples.unlink(missing_ok=True)
    sender = dict(out["sender"], errors=count - out["sender"]["sent"])
    assert send_errors_ok or sender["errors"] == 0, (
        f"the sender could not send every datagram (they never reached the link): {sender}")
    records = [[int(q), int(s), int(r), int(t)]
               for q, s, r, t in zip(a["seq"], a["send_ns"], a["rx_ns"], a["tos"])]
    return ProbeRun(count, records, sender, out["receiver"]["foreign"])


def probe_with_path(bed: Bed, count: int, rate: float, port: int, path_port: int) -> tuple[ProbeRun, ProbeRun]:
    """probe() src -> dst, and at the same time a reference stream dst ->
    src at the same rate through the other direction, which must be
    unimpaired: its one-way delays are the path's own (kernel, veths,
    linkemud with no delay, the tools) in the same seconds, what a bound
    on the probe's delays adds to the model's."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        path = pool.submit(probe, bed, count=count, rate=rate, port=path_port, reverse=True)
        run = probe(bed, count=count, rate=rate, port=port)
        return run, path.result()


def frame_len(udp_payload: int) -> int:
    """Ethernet frame length (no FCS) of a UDP/IPv4 datagram, as linkemud
    counts it: 14 + 20 + 8 + payload, padded to 60."""
    return max(60, 14 + 20 + 8 + udp_payload)


# --- statistics ---------------------------------------------------------------------------

def mean(xs) -> float:
    return float(np.mean(xs))


def sd(xs) -> float:
    """Sample standard deviation (n - 1)."""
    return float(np.std(xs, ddof=1))


def pearson(xs, ys) -> float:
    return float(np.corrcoef(xs, ys)[0, 1])


def lag1(xs) -> float:
    """Lag-1 autocorrelation (deviations from the whole sample's mean)."""
    x = np.asarray(xs, dtype=np.float64) - np.mean(xs)
    return float((x[:-1] @ x[1:]) / (x @ x))


def dist_table(path: Path) -> list[int]:
    """An iproute2 .dist file's entries (text, # comments, integers)."""
    vals = []
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0]
        vals += [int(w) for w in line.split()]
    return vals


def table_moments(table: list[int]) -> tuple[float, float, float]:
    """Mean, standard deviation and kurtosis of table / 8192: a delay
    drawn as TIME + JITTER x entry / 8192 (entry uniform over the table)
    has mean TIME + JITTER x mean and sd JITTER x sd."""
    xs = [t / NETEM_DIST_SCALE for t in table]
    m = sum(xs) / len(xs)
    var = sum((x - m) ** 2 for x in xs) / len(xs)
    m4 = sum((x - m) ** 4 for x in xs) / len(xs)
    return m, math.sqrt(var), m4 / var ** 2


def markov_loss(trans: list[list[float]], emit: list[float], n: int,
                start: list[float]) -> tuple[float, float, float]:
    """For a loss process driven by a Markov chain: the frame meeting state
    s is lost with probability emit[s] (independently, given s), and the
    chain then moves by trans (which does not depend on the loss draw);
    frame 0 meets the distribution start. Returns (mu, expected, var):
    the long-run loss rate, the exact expected number lost among the first
    n frames, sum_i (start T^i) . emit, and the variance of that number in
    the stationary chain:

        Var = n mu (1 - mu) + 2 sum_{k=1}^{n-1} (n - k) Cov(L_0, L_k),
        Cov(L_0, L_k) = sum_s pi_s emit_s (T^k emit)_s - mu^2

    (starting elsewhere changes it by terms of the order of the mixing
    time, a few frames here, against thousands)."""
    m = len(emit)

    def step(dist):
        return [sum(dist[i] * trans[i][j] for i in range(m)) for j in range(m)]

    pi = [1.0 / m] * m
    for _ in range(1_000_000):     # power iteration to the stationary distribution
        nxt = step(pi)
        done = max(abs(a - b) for a, b in zip(nxt, pi)) < 1e-16
        pi = nxt
        if done:
            break
    mu = sum(p * e for p, e in zip(pi, emit))
    expected, dist = 0.0, list(start)
    for _ in range(n):
        expected += sum(d * e for d, e in zip(dist, emit))
        dist = step(dist)
    var = n * mu * (1 - mu)
    v = list(emit)                  # T^k emit
    for k in range(1, n):
        v = [sum(trans[i][j] * v[j] for j in range(m)) for i in range(m)]
        cov = sum(pi[s] * emit[s] * v[s] for s in range(m)) - mu * mu
        var += 2 * (n - k) * cov
        if max(abs(x - mu) for x in v) < 1e-13:
            break                   # T^k emit = mu everywhere: no covariance from here on
    return mu, expected, var


def correlated_chance(p: float, rho: float, n: int) -> tuple[float, float, float]:
    """netem's correlated chance (loss, duplicate, corrupt, reorder):
    X' = (1 - rho) U + rho X, the event happens when X < p. Simulated
    (4e6 frames, fixed seed): the long-run rate, the variance of the
    number of events among n frames (from the indicator's autocovariance,
    summed over lags until it vanishes), and P(event | event before)."""
    import numpy as np

    rng = np.random.default_rng(7)
    u = rng.random(4_000_000)
    taps = (1 - rho) * rho ** np.arange(80)          # rho^80 < 1e-24: the rest is nothing
    x = np.convolve(u, taps, mode="valid")
    lost = (x < p).astype(np.float64)
    mu = lost.mean()
    c = lost - mu
    var = n * (c @ c) / len(c)
    for k in range(1, 200):
        var += 2 * (n - k) * (c[:-k] @ c[k:]) / (len(c) - k)
    after = (lost[:-1] * lost[1:]).sum() / lost[:-1].sum()
    return mu, var, after


def iperf3(bed: Bed, seconds: int, port: int, *client_args: str) -> dict:
    """iperf3 client in src (extra client_args, e.g. -w 4M), one-off server
    in dst, both on the tool CPUs; returns the client's -J output."""
    return iperf3_run(bed, ["-t", str(seconds), *client_args], seconds, port,
                      tool_cpus(), tool_cpus())


def raw_frames(bed: Bed, count: int, port: int, tags: list[tuple[int, int]]) -> None:
    """count VLAN-tagged IPv4/UDP frames src -> dst, written to the src
    namespace's veth with AF_PACKET (rawframes.py)."""
    dst_mac = netns.link_mac(bed.ns_dev, bed.ns_dst)
    spec = ",".join(f"{tpid:#x}:{vid}" for tpid, vid in tags)
    netns.ns_run(bed.ns_src, cpus=tool_cpus(), cmd=[
        sys.executable, str(HERE / "rawframes.py"), "--dev", bed.ns_dev, "--dst-mac", dst_mac,
        "--src", bed.addr_src, "--dst", bed.addr_dst, "--port", str(port), "--count", str(count),
        "--tags", spec])


def live_stats(bed: Bed) -> dict:
    """The running daemon's counters, through its control socket."""
    cp = linkemu("ctl", "--bed", bed.name, "stats", "--json")
    assert cp.returncode == 0, f"ctl stats failed: {cp.stderr}"
    return json.loads(cp.stdout)
