"""lfp: the long-fat-pipe study (Amagai et al., NTT: published.LFP_SOURCE) on the test bed.

One TCP stream (ttcp, 4 KB writes) through the Tokyo-Kyoto profile
(profiles/lfp-tokyo-kyoto-ds3.toml: 6 ms each way, DS3 44.736 Mbit/s, a
router queue of 90 frames) for windows from 8 KB to 520 KB, with

- the 1992-era sender: Reno with SACK, D-SACK, RACK and tail-loss probes off
  (the sender namespace's own sysctls), as in the study;
- today's senders: CUBIC and BBR with the kernel's defaults (SACK, RACK);
- the study's own congestion avoidance as BPF (lfp_fixed: x = 2, y = 8;
  lfp_adapt: x, y steered by the stall share S), on the 1992 stack, so the
  comparison with reno-1992 isolates the algorithm.

ttcp runs with Nagle off on the sender and delayed ACKs off on the
receiver, so that the window alone limits a window-limited sender: with
Nagle, the part of a window that is not a whole segment waits for the ACK
of the rest, and a delayed ACK of an odd last segment adds up to an RTT
(the study's "below 16 KB worse than theory" has this shape).

The sender sends one segment at a time, like a 1994 host: its device in
the namespace gets gso_max_segs 1 (restored at the end). Otherwise Linux builds
GSO bursts and, when only part of one fits the window, holds the data back
for up to 1 ms (tcp_tso_should_defer) and then sends a burst that queues
at the 100 -> 45 Mbit/s step: measured on a quiet machine, 4-segment
bursts every 1.1 ms, a smoothed RTT of 12.7-12.8 ms instead of 12.46 and
4.4-5.6 % less throughput at 32-48 KB, an artefact of the host, not of the
link (docs/lab.md, "The theory line").

Per window several runs; the median and the spread. The theory line is
min(8W/RTT, payload rate), with each term what physics fixes for the
segments actually sent:
- W, the bytes in flight: the whole segments the window the receiver
  advertised holds, floor(snd_wnd / MSS) x MSS (a segment-at-a-time
  sender does not send a segment that does not fit; snd_wnd is the median
  of the run's TCP_INFO samples, W rounded down by the receiver);
- RTT, the path's for a full-size segment and its ACK, from the profile:
  every hop's delay both ways, plus each hop's serialization of a data
  frame (MSS + 66 B) forward and of a pure ACK (66 B) back; 12.41 ms for
  the Tokyo-Kyoto profile where the nominal RTT is 12 ms;
- the payload rate: the bottleneck's rate x MSS / (MSS + 66 B of
  Ethernet, IP and TCP headers).
The study's dashed line was 8W/RTT with the nominal 12 ms and W as set.
Knee: the smallest window whose median reaches 90 % of the payload rate.
Collapse: the smallest window above the knee whose median falls below 80 %
of it.

The syndrome's anatomy: the worst run of the 1992 sender (highest share of
theory lost) once more, with the sender's TCP_INFO every 2 ms and a capture
in its namespace (tcpdump, headers): highest sequence sent, retransmissions
and the cumulative ACK per packet, unacknowledged bytes, cwnd and RTT.

Table 2: a 4 KB window over 155 Mbit/s at RTT 9.6, 28.6 and 133 ms.

Checks (what physics fixes, also in --quick): in region 1 (8W/RTT <= 80 %
of the payload rate) the median is within 10 % of that theory; on the plateau
(8W/RTT >= 120 % of the payload rate and W below 90 % of what the
link holds, `limit` x MSS, so no loss is due) within 10 % of the payload rate; the BPF algorithms load
where the kernel allows and carry traffic.
"""

from __future__ import annotations

import json
import re
import statistics
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from linkemu import profiles
from linkemu.bed import bpfcc, netns
from linkemu.bed.interrupts import shielded
from linkemu.errors import LinkemuError, UsageError
from linkemu.instruments import ping, tcpcap, ttcp
from linkemu.lab import published, results
from linkemu.lab.session import LabSession, Progress

KB = 1024
PROFILE = "lfp-tokyo-kyoto-ds3"
FULL_WINDOWS_KB = (8, 12, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208,
                   224, 256, 320, 400, 520)
QUICK_WINDOWS_KB = (32, 48, 96)
HEADER_BYTES = 66          # Ethernet 14 + IPv4 20 + TCP 20 + timestamp option 12
ACK_FRAME_BYTES = HEADER_BYTES   # a pure ACK carries the headers only
SENDER_GSO_MAX_SEGS = 1    # one segment per skb on the sender: no GSO deferral
FRAME_BYTES = 1514         # a full-size frame as the rate and the queue count it
REGION1_SHARE = 0.8
PLATEAU_SHARE = 1.2
NO_LOSS_SHARE = 0.9
KNEE_SHARE = 0.9
COLLAPSE_SHARE = 0.8
TOLERANCE = 0.10
ANATOMY_SAMPLE_MS = 2.0
PING_COUNT = 20
PING_INTERVAL_S = 0.05
ANATOMY_MAX_POINTS = 4000

# namespace sysctls of the sender (net.ipv4.tcp_* are per network namespace)
STACKS = {
    "1992": {"net.ipv4.tcp_sack": "0", "net.ipv4.tcp_dsack": "0",
             "net.ipv4.tcp_recovery": "0", "net.ipv4.tcp_early_retrans": "0"},
    "today": {"net.ipv4.tcp_sack": "1", "net.ipv4.tcp_dsack": "1",
              "net.ipv4.tcp_recovery": "1", "net.ipv4.tcp_early_retrans": "3"},
}
SENDERS = {"reno-1992": ("reno", "1992"), "cubic": ("cubic", "today"),
           "bbr": ("bbr", "today"), "lfp_fixed": ("lfp_fixed", "1992"),
           "lfp_adapt": ("lfp_adapt", "1992")}
TABLE2_LINK = "delay {half}us rate 155mbit limit 2000"
# Table 2's 4 KB window in whole segments: TCP_MAXSEG 1036 less the 12-byte
# timestamp option carries 1024 B, so 4 segments fill 4096 B exactly. With
# the bed's MSS of 1448 the receiver rounds the window down to whole
# segments, 2,896 B (measured), and the table would show 71 % of the law.
# Measured on a quiet machine it still shows 74 % at all three RTTs with
# 4,096 B advertised (docs/lab.md: likely the receiver's 4 KB buffer, which
# holds ~3 of these segments' truesize, not yet shown).
TABLE2_MSS = 1036


@dataclass
class LfpOptions:
    quick: bool = False
    windows_kb: tuple = FULL_WINDOWS_KB
    senders: tuple = tuple(SENDERS)
    runs: int = 3
    seconds: float = 8.0
    table2: bool = True
    table2_seconds: float = 6.0
    profile: str = PROFILE
    bed: str = "lab"
    pmd: str | None = None
    seed: int = 1
    quiet: bool = False
    extra: dict = field(default_factory=dict)

    @classmethod
    def quick_defaults(cls, **kw) -> "LfpOptions":
        base = dict(quick=True, windows_kb=QUICK_WINDOWS_KB,
                    senders=("reno-1992", "lfp_fixed", "lfp_adapt"), runs=1, seconds=3.0,
                    table2_seconds=3.0)
        base.update(kw)
        return cls(**base)

    def validate(self) -> None:
        if not self.windows_kb or any(not 4 <= w <= 1024 * 1024 for w in self.windows_kb):
            raise UsageError("--windows: KB values 4 .. 1048576")
        bad = [s for s in self.senders if s not in SENDERS]
        if bad:
            raise UsageError(f"--senders: unknown {', '.join(bad)} (known: {', '.join(SENDERS)})")
        if not 1 <= self.runs <= 50:
            raise UsageError("--runs must be 1 .. 50")
        if not 0.5 <= self.seconds <= 600 or not 0.5 <= self.table2_seconds <= 600:
            raise UsageError("--seconds must be 0.5 .. 600")


# --- the link's physics ------------------------------------------------------

# Every RATE and TIME unit of docs/grammar.md ("Units"), any case: rates
# in bits (powers of 1000 or 1024) or bytes per second (x 8), no unit =
# bit/s; times with tc's spellings too, no unit = microseconds.
_RATE_RE = re.compile(r"\brate\s+([0-9.]+)([a-z]*)(?![\w.])", re.I)
_DELAY_RE = re.compile(r"\bdelay\s+([0-9.]+)([a-z]*)(?![\w.])", re.I)
_LIMIT_RE = re.compile(r"\blimit\s+([0-9]+)\b")
_RATE_MUL = {"": 1, "bit": 1,
             **{p + "bit": 1000.0 ** k for k, p in enumerate("kmgt", 1)},
             **{p + "ibit": 1024.0 ** k for k, p in enumerate("kmgt", 1)},
             "bps": 8,
             **{p + "bps": 8 * 1000.0 ** k for k, p in enumerate("kmgt", 1)},
             **{p + "ibps": 8 * 1024.0 ** k for k, p in enumerate("kmgt", 1)}}
_TIME_MUL = {"": 1e-6, "ns": 1e-9, "nsec": 1e-9, "nsecs": 1e-9, "us": 1e-6, "usec": 1e-6,
             "usecs": 1e-6, "ms": 1e-3, "msec": 1e-3, "msecs": 1e-3, "s": 1.0, "sec": 1.0,
             "secs": 1.0}


def _rate_bps(value: str, unit: str) -> float:
    mul = _RATE_MUL.get(unit.lower())
    if mul is None:
        raise LinkemuError(f"rate {value}{unit}: not a rate unit of the grammar")
    return float(value) * mul


def _delay_s(value: str, unit: str) -> float:
    mul = _TIME_MUL.get(unit.lower())
    if mul is None:
        raise LinkemuError(f"delay {value}{unit}: not a time unit of the grammar")
    return float(value) * mul


def link_physics(a2b: str, b2a: str) -> dict:
    """Bottleneck rate, base RTT and queue of a profile's links: the
    smallest rate of a2b (a chain's hops each have one), the sum of the
    delays of both directions (every hop's), the last limit of a2b (the
    bottleneck's buffer, written last)."""
    rates = _RATE_RE.findall(a2b)
    delays = [_DELAY_RE.findall(x) for x in (a2b, b2a)]
    limits = _LIMIT_RE.findall(a2b)
    if not rates or not all(delays):
        raise LinkemuError(f"the lfp profile needs a rate and a delay each way: {a2b!r} / {b2a!r}")
    rate = min(_rate_bps(v, u) for v, u in rates)
    rtt = sum(_delay_s(v, u) for d in delays for v, u in d)
    # `limit` counts every frame the link holds, in the delay line too
    return {"rate_bps": rate, "base_rtt_s": rtt,
            "limit_frames": int(limits[-1]) if limits else None}


def _hops(link: str) -> list[tuple[float | None, float]]:
    """(rate bit/s or None, delay s) of every hop of a link (LINK >> LINK)."""
    out = []
    for hop in link.split(">>"):
        r = _RATE_RE.search(hop)
        d = _DELAY_RE.search(hop)
        out.append((_rate_bps(r.group(1), r.group(2)) if r else None,
                    _delay_s(d.group(1), d.group(2)) if d else 0.0))
    return out


def path_rtt_s(a2b: str, b2a: str, mss: int) -> float:
    """The round trip of a full-size data segment and its ACK on the idle
    path: every hop's delay both ways, and every hop with a rate holds a
    frame for its size / rate (store and forward), a data frame of MSS +
    66 B forward and a pure ACK of 66 B back. Measured through the
    Tokyo-Kyoto profile on a quiet machine (captures on both ends): one way
    6.396 ms for a 1514-byte frame = 6 + 0.121 (100 Mbit/s) + 0.271
    (44.736 Mbit/s) + 0.004 of the bed itself; the ACK 6.021 ms."""
    data, ack = (mss + HEADER_BYTES) * 8, ACK_FRAME_BYTES * 8
    return (sum(d + (data / r if r else 0) for r, d in _hops(a2b))
            + sum(d + (ack / r if r else 0) for r, d in _hops(b2a)))


def window_in_flight(snd_wnd: int, mss: int) -> int:
    """The bytes a segment-at-a-time sender keeps in flight under a peer
    window: whole segments only (Linux's tcp_snd_wnd_test: a segment must
    fit the window entirely; measured: 32,104 B advertised, 31,856 = 22 x
    1448 in flight)."""
    return snd_wnd // mss * mss if mss > 0 else snd_wnd


def payload_bps(rate_bps: float, mss: int) -> float:
    return rate_bps * mss / (mss + HEADER_BYTES)


def theory_mbps(window: int, rtt_s: float, payload: float) -> float:
    return min(8 * window / rtt_s, payload) / 1e6


# --- analysis (pure) ---------------------------------------------------------

def summarize_sender(runs: list[dict], rtt_s: float, payload: float) -> dict:
    """Points (median, spread) per window, knee and collapse."""
    points = []
    for w in sorted({r["window"] for r in runs}):
        rs = [r for r in runs if r["window"] == w]
        m = [r["mbps"] for r in rs]
        wf = _in_flight(rs)
        points.append({"window": w, "n": len(rs), "mbps_median": statistics.median(m),
                       "mbps_min": min(m), "mbps_max": max(m),
                       "window_in_flight": wf,
                       "theory_mbps": theory_mbps(wf, rtt_s, payload),
                       "retrans_median": statistics.median(r["total_retrans"] for r in rs),
                       "snd_wnd_max": max(r["snd_wnd_max"] for r in rs)})
    pay = payload / 1e6
    knee = next((p["window"] for p in points if p["mbps_median"] >= KNEE_SHARE * pay), None)
    collapse = None
    if knee is not None:
        collapse = next((p["window"] for p in points
                         if p["window"] > knee and p["mbps_median"] < COLLAPSE_SHARE * pay), None)
    after = [p["mbps_median"] for p in points if collapse is not None and p["window"] >= collapse]
    out = {"points": points, "knee_window": knee, "collapse_window": collapse,
           "collapse_mbps": statistics.median(after) if after else None,
           "plateau_mbps": max((p["mbps_median"] for p in points), default=None)}
    out.update(relative_regions(points))
    return out


def _in_flight(runs: list[dict]) -> int:
    """The median of the runs' windows in flight (their window when a run
    has none: a synthetic or older results file)."""
    return int(statistics.median(r.get("window_in_flight", r["window"]) for r in runs))


def relative_regions(points: list[dict]) -> dict:
    """Knee and collapse against the sender's own best median instead of
    the payload rate: the same shares (90 %, 80 %), so that the curve's
    shape is described also when the bed's RTT is stretched and no sender
    reaches the payload rate (then knee_window above is None)."""
    if not points:
        return {"best_window": None, "knee_rel_window": None, "collapse_rel_window": None,
                "collapse_rel_mbps": None}
    best = max(points, key=lambda p: p["mbps_median"])
    top = best["mbps_median"]
    knee = next(p["window"] for p in points if p["mbps_median"] >= KNEE_SHARE * top)
    collapse = next((p["window"] for p in points if p["window"] > best["window"]
                     and p["mbps_median"] < COLLAPSE_SHARE * top), None)
    after = [p["mbps_median"] for p in points if collapse is not None and p["window"] >= collapse]
    return {"best_window": best["window"], "knee_rel_window": knee,
            "collapse_rel_window": collapse,
            "collapse_rel_mbps": statistics.median(after) if after else None}


def resolvable(path_rtt: dict, base_rtt_s: float) -> str | None:
    """None when the bed's round trip (ping before and after the sweep)
    stays within the tolerance of the link's own RTT, else why not: a
    throughput check at 10 % cannot be resolved on a path whose RTT the
    machine's load stretches by more than 10 % (a window-limited sender's
    throughput is W / RTT)."""
    p90 = [v["p90_ms"] for v in path_rtt.values() if v and v.get("p90_ms") is not None]
    if not p90:
        return "no ping replies to measure the path's RTT"
    worst = max(p90)
    if worst > base_rtt_s * 1e3 * (1 + TOLERANCE):
        return (f"the path's RTT (ping p90 {worst:.1f} ms) exceeds the link's "
                f"{base_rtt_s * 1e3:.1f} ms by more than {TOLERANCE:.0%}: the machine is too "
                f"busy to resolve a {TOLERANCE:.0%} throughput check")
    return None


def physics_checks(runs: list[dict], rtt_s: float, payload: float,
                   limit_frames: int | None, mss: int, unresolved: str | None = None
                   ) -> list[dict]:
    """Region-1 and plateau checks on every sender's medians. Without a
    `limit` nothing is dropped, so every window above the BDP is plateau."""
    out = []
    pipe = limit_frames * mss if limit_frames else float("inf")
    keys = sorted({(r["sender"], r["window"]) for r in runs})
    for sender, w in keys:
        rs = [r for r in runs if r["sender"] == sender and r["window"] == w]
        m = statistics.median(r["mbps"] for r in rs)
        wire = 8 * _in_flight(rs) / rtt_s
        if wire <= REGION1_SHARE * payload:
            expect, region = wire / 1e6, "region 1: 8W/RTT"
        elif wire >= PLATEAU_SHARE * payload and w <= NO_LOSS_SHARE * pipe:
            expect, region = payload / 1e6, "plateau: payload rate"
        else:
            continue
        err = m / expect - 1
        out.append({"sender": sender, "window": w, "region": region, "expected_mbps": expect,
                    "measured_mbps": m, "error": err,
                    "ok": None if unresolved else abs(err) <= TOLERANCE, "why": unresolved})
    return out


STALL_BIN_S = 0.05
STALL_SHARE = 0.10


def stalls(t_us: list[int], acked: list[int], payload: float) -> tuple[float, float | None, float]:
    """(longest stall s, when it began, share of time stalled). A 50 ms bin
    is stalled when the cumulative ACK advanced less than 10 % of what the
    bottleneck delivers in it: the study's "no packets sent" (Fig. 4) seen
    from the ACKs, which also counts the slow crawl of a recovery that
    repairs one segment per round trip."""
    if len(t_us) < 2:
        return 0.0, None, 0.0
    bins: dict[int, int] = {}
    for i in range(1, len(t_us)):
        b = int(t_us[i] / 1e6 / STALL_BIN_S)
        bins[b] = bins.get(b, 0) + acked[i] - acked[i - 1]
    last = int(t_us[-1] / 1e6 / STALL_BIN_S)
    need = STALL_SHARE * payload / 8 * STALL_BIN_S
    stalled = [bins.get(b, 0) < need for b in range(last)]   # the last bin is partial
    longest = run = 0
    start = best_start = None
    for b, s in enumerate(stalled):
        if s:
            if run == 0:
                start = b
            run += 1
            if run > longest:
                longest, best_start = run, start
        else:
            run = 0
    share = sum(stalled) / len(stalled) if stalled else 0.0
    return (longest * STALL_BIN_S, None if best_start is None else best_start * STALL_BIN_S,
            share)


def anatomy(cols: dict, run: dict, payload: float) -> dict:
    """The syndrome's anatomy from TCP_INFO samples (Fig. 4)."""
    n = len(cols["t_us"])
    step = max(1, n // ANATOMY_MAX_POINTS)
    idx = range(0, n, step)
    t = [cols["t_us"][i] / 1e6 for i in idx]
    seq = [cols["bytes_sent"][i] - cols["bytes_retrans"][i] for i in idx]
    ack = [cols["bytes_acked"][i] for i in idx]
    sent = [a - b for a, b in zip(cols["bytes_sent"], cols["bytes_retrans"])]
    longest, t_stall, share = stalls(cols["t_us"], cols["bytes_acked"], payload)
    peak = max(range(n), key=lambda i: cols["in_flight_bytes"][i]) if n else 0
    t_peak = cols["t_us"][peak] / 1e6 if n else 0
    slope = (lambda v: 8 * v[peak] / t_peak / 1e6 if t_peak > 0 else None)
    return {"sender": run["sender"], "window": run["window"], "run_id": run["id"],
            "mbps": run["mbps"], "t_s": t, "seq_bytes": seq, "ack_bytes": ack,
            "unacked_bytes": [max(cols["in_flight_bytes"][i], 0) for i in idx],
            "rtt_ms": [cols["rtt_us"][i] / 1e3 for i in idx],
            "cwnd_bytes": [cols["cwnd"][i] * cols["mss"][i] for i in idx],
            "longest_silence_s": longest, "silence_starts_s": t_stall,
            "stalled_share": share,
            "max_unacked_bytes": max(cols["in_flight_bytes"], default=0),
            "max_rtt_ms": max(cols["rtt_us"], default=0) / 1e3,
            "seq_slope_mbps": slope(sent), "ack_slope_mbps": slope(cols["bytes_acked"]),
            "t_peak_s": t_peak}


# --- the experiment ----------------------------------------------------------

def _set_stack(ns: str, stack: str) -> None:
    for k, v in STACKS[stack].items():
        netns.ns_sysctl(ns, k, v)


def _load_bpf(senders: tuple, prog: Progress, loaded_here: list) -> dict:
    """{name: {"loaded": bool, "why": str|None}} for our BPF senders; what
    this call registered is appended to loaded_here (to unload at the end)."""
    out = {}
    ours = [s for s in senders if s in bpfcc.ALGORITHMS]
    if not ours:
        return out
    why = bpfcc.unsupported()
    for s in ours:
        if why:
            out[s] = {"loaded": False, "why": why}
            continue
        try:
            loaded_here += bpfcc.load([s])
            out[s] = {"loaded": True, "why": None}
        except LinkemuError as e:
            out[s] = {"loaded": False, "why": str(e)}
    for s, v in out.items():
        if not v["loaded"]:
            prog.note(f"{s} not used: {v['why']}")
    return out


def _gso_max_segs(ns: str, dev: str) -> int | None:
    cp = netns.run(["ip", "-j", "-d", "-n", ns, "link", "show", "dev", dev], check=False)
    try:
        return int(json.loads(cp.stdout)[0]["gso_max_segs"])
    except (ValueError, KeyError, IndexError, TypeError):
        return None


def _set_gso_max_segs(ns: str, dev: str, segs: int) -> str | None:
    """None when the sender's device now builds skbs of at most `segs`
    segments, else why not (the sweep then runs with GSO and its theory
    counts the partial segment Linux sends to fill the window)."""
    cp = netns.run(["ip", "-n", ns, "link", "set", "dev", dev, "gso_max_segs", str(segs)],
                   check=False)
    if cp.returncode != 0:
        return f"ip link set {dev} gso_max_segs {segs}: {(cp.stderr or '').strip()}"
    return None


def _one(sess, sender: str, window: int, o: LfpOptions, rid: int, tmp: Path,
         whole_segments: bool = True) -> dict:
    cc_name, stack = SENDERS[sender]
    samples = tmp / f"{rid}.csv"
    before = bpfcc.stats(cc_name) if cc_name in bpfcc.ALGORITHMS else None
    out = ttcp.run(sess.bed, ttcp.TtcpSpec(window=window, cc=cc_name, seconds=o.seconds,
                                           samples=samples, sample_ms=ANATOMY_SAMPLE_MS,
                                           nodelay=True, quickack=True))
    s = out["sender"]
    run = {"id": rid, "sender": sender, "cc": s["cc"], "stack": stack, "window": window,
           "mbps": s["mbps"], "bytes": s["bytes"], "real_s": s["real_s"], "cpu_s": s["cpu_s"],
           "calls_per_s": s["calls_per_s"], "mss": s["mss"], "min_rtt_us": s["min_rtt_us"],
           "total_retrans": s["total_retrans"], "snd_wnd_max": s["snd_wnd_max"],
           "received_bytes": out["receiver"]["bytes"], "problems": []}
    if out["receiver"]["bytes"] != s["bytes"]:
        run["problems"].append(f"receiver read {out['receiver']['bytes']} B, sender wrote "
                               f"{s['bytes']} B")
    if before is not None:
        run["bpf"] = bpfcc.stats_delta(before, bpfcc.stats(cc_name))
    run.update(_window_seen(ttcp.read_samples(samples), s["snd_wnd_max"], s["mss"],
                            whole_segments))
    run["_samples"] = str(samples)
    return run


def _window_seen(cols: dict, snd_wnd_max: int, mss: int, whole_segments: bool) -> dict:
    """The peer window of a run (the median of its TCP_INFO samples: the
    window the receiver kept advertising, not the instant of the clamp's
    reset that snd_wnd_max records), the bytes in flight it allows, and the
    most the sender had in flight."""
    wnd = [v for v in cols["snd_wnd"] if v > 0]
    snd_wnd = int(statistics.median(wnd)) if wnd else snd_wnd_max
    return {"snd_wnd_median": snd_wnd,
            "window_in_flight": window_in_flight(snd_wnd, mss) if whole_segments else snd_wnd,
            "in_flight_max": max(cols["in_flight_bytes"], default=0)}


def _table2(sess, o: LfpOptions, prog: Progress) -> list[dict]:
    rows = []
    _set_stack(sess.bed.ns_src, "today")
    for km, rtt_ms, pub in published.LFP_TABLE2:
        prog.step(f"Table 2: 4 KB window, 155 Mbit/s, RTT {rtt_ms} ms")
        link = TABLE2_LINK.format(half=round(rtt_ms * 1000 / 2))
        with sess.link(link, link) as lk:
            out = ttcp.run(sess.bed, ttcp.TtcpSpec(window=published.LFP_TABLE2_WINDOW,
                                                   seconds=o.table2_seconds, mss=TABLE2_MSS,
                                                   nodelay=True, quickack=True))
        s = out["sender"]
        rate = published.LFP_TABLE2_RATE_BPS
        rows.append({"distance_km": km, "rtt_ms": rtt_ms, "published_mbps": pub,
                     "theory_mbps": 8 * published.LFP_TABLE2_WINDOW / (rtt_ms / 1e3) / 1e6,
                     "measured_mbps": s["mbps"], "min_rtt_us": s["min_rtt_us"],
                     "snd_wnd_max": s["snd_wnd_max"], "mss": s["mss"],
                     "fill_window_bytes": rate / 8 * rtt_ms / 1e3,
                     "problems": list(lk.problems)})
    return rows


def run(o: LfpOptions, path: Path) -> dict:
    o.validate()
    prof = profiles.find(o.profile)
    phys = link_physics(prof.a2b, prof.b2a)
    windows = [w * KB for w in o.windows_kb]
    config = {"profile": prof.name, "a2b": prof.a2b, "b2a": prof.b2a, "windows": windows,
              "senders": list(o.senders), "runs": o.runs, "seconds": o.seconds,
              "write_len": 4096, "window_mode": "clamp", "nodelay": True, "quickack": True,
              "table2": o.table2,
              "table2_seconds": o.table2_seconds, "stacks": STACKS,
              "tolerance": TOLERANCE, **phys}
    res = results.new("lfp", o.quick, o.seed, config)
    n = len(o.senders) * len(windows) * o.runs
    planned = ([o.seconds + 1.5] * n + [o.seconds + 3]
               + ([o.table2_seconds + 5] * 3 if o.table2 else []))
    prog = Progress(planned, quiet=o.quiet)
    runs: list[dict] = []
    loaded_here: list[str] = []
    try:
        with prog.naming_failures("lfp"):
            _sweep(o, prof, phys, res, prog, runs, loaded_here)
    finally:
        if loaded_here:    # leave the kernel as we found it
            # Shielded: LabSession has put the default handlers back by
            # now, so a second Ctrl-C or SIGTERM here would leave our
            # congestion controls registered in the kernel.
            with shielded():
                bpfcc.unload(loaded_here)
    for r in runs:
        r.pop("_samples", None)
    res["runs"] = runs
    res["notes"] += _notes(res)
    res["metadata"]["elapsed_s"] = prog.elapsed()
    results.write(res, path)
    return res


def _sweep(o: LfpOptions, prof, phys: dict, res: dict, prog: Progress, runs: list,
           loaded_here: list) -> None:
    windows = [w * KB for w in o.windows_kb]
    with tempfile.TemporaryDirectory(prefix="linkemu-lfp-") as tmpd, \
            LabSession(o.bed, o.pmd, o.seed) as sess:
        tmp = Path(tmpd)
        bpf = _load_bpf(o.senders, prog, loaded_here)
        res["bpf"] = [{"name": k, **v} for k, v in bpf.items()]
        path_rtt = {}
        gso_was = _gso_max_segs(sess.bed.ns_src, sess.bed.ns_dev)
        gso_why = _set_gso_max_segs(sess.bed.ns_src, sess.bed.ns_dev, SENDER_GSO_MAX_SEGS)
        res["config"]["sender_gso_max_segs"] = None if gso_why else SENDER_GSO_MAX_SEGS
        if gso_why:
            prog.note(f"the sender sends GSO bursts (Linux may defer them up to 1 ms): {gso_why}")
        try:
            with sess.link(prof.a2b, prof.b2a) as link:
                path_rtt["before"] = ping.ping(sess.bed, PING_COUNT, PING_INTERVAL_S).summary()
                for sender in o.senders:
                    if sender in bpf and not bpf[sender]["loaded"]:
                        continue
                    _set_stack(sess.bed.ns_src, SENDERS[sender][1])
                    for w in windows:
                        for k in range(o.runs):
                            prog.step(f"{sender}, window {w // KB} KB, run {k + 1}/{o.runs}")
                            runs.append(_one(sess, sender, w, o, len(runs), tmp, gso_why is None))
                mss = statistics.median(r["mss"] for r in runs) if runs else 1448
                rtt_s = path_rtt_s(prof.a2b, prof.b2a, int(mss))
                payload = payload_bps(phys["rate_bps"], int(mss))
                worst = _worst(runs, rtt_s, payload)
                if worst is not None:
                    prog.step(f"anatomy: {worst['sender']}, window {worst['window'] // KB} KB, "
                              f"again with a capture")
                    res["anatomy"] = _anatomy_run(sess, worst, o, tmp, payload)
                path_rtt["after"] = ping.ping(sess.bed, PING_COUNT, PING_INTERVAL_S).summary()
            err = link.a2b.get("emulation_error_ns", {})
            res["link_final"] = {"problems": link.problems, "contention": link.contention,
                                 "emulation_error_ns": {k: err.get(k)
                                                        for k in ("p50", "p99", "max")}}
            res["path_rtt"] = path_rtt
            res["metadata"]["pmd"] = sess.pmd
            if o.table2:
                res["table2"] = _table2(sess, o, prog)
        finally:
            if gso_why is None and gso_was is not None:
                # whatever runs on the bed next gets Linux's default sender back
                _set_gso_max_segs(sess.bed.ns_src, sess.bed.ns_dev, gso_was)
        per = {s: summarize_sender([r for r in runs if r["sender"] == s], rtt_s, payload)
               for s in o.senders if any(r["sender"] == s for r in runs)}
        unresolved = resolvable(path_rtt, phys["base_rtt_s"])
        checks = physics_checks(runs, rtt_s, payload, phys["limit_frames"], int(mss),
                                unresolved)
        for b in res["bpf"]:
            carried = [r for r in runs if r["sender"] == b["name"] and r["bytes"] > 0
                       and r["cc"] == b["name"]]
            checks.append({"sender": b["name"], "window": None, "region": "BPF loads and "
                           "carries traffic", "expected_mbps": None,
                           "measured_mbps": (statistics.median(r["mbps"] for r in carried)
                                             if carried else None),
                           "error": None, "ok": bool(carried) if b["loaded"] else None,
                           "why": b["why"]})
        res["summary"] = {"rtt_s": rtt_s, "payload_mbps": payload / 1e6, "mss": int(mss),
                          "nominal_rtt_s": phys["base_rtt_s"],
                          "tcp_min_rtt_s": (min(r["min_rtt_us"] for r in runs) / 1e6
                                            if runs else None),
                          "whole_segments": gso_why is None,
                          "unresolved": unresolved,
                          "senders": per, "checks": checks,
                          "published": {"knee_kb": published.LFP_KNEE_KB,
                                        "collapse_kb": published.LFP_COLLAPSE_KB,
                                        "collapse_mbps": published.LFP_COLLAPSE_MBPS,
                                        "rtt_ms": published.LFP_RTT_MS,
                                        "fig4": published.LFP_FIG4,
                                        "source": published.LFP_SOURCE}}


def _anatomy_run(sess, worst: dict, o: LfpOptions, tmp: Path, payload: float) -> dict:
    """The worst run's sender and window once more, with TCP_INFO every
    2 ms and a capture in the sender's namespace (headers only)."""
    _set_stack(sess.bed.ns_src, worst["stack"])
    pcap = tmp / "anatomy.pcap"
    why = tcpcap.available()
    spec = ttcp.TtcpSpec(window=worst["window"], cc=SENDERS[worst["sender"]][0],
                         seconds=o.seconds, samples=tmp / "anatomy.csv",
                         sample_ms=ANATOMY_SAMPLE_MS, nodelay=True, quickack=True)
    if why is None:
        with tcpcap.capture(sess.bed.ns_src, sess.bed.ns_dev, pcap, spec.port):
            out = ttcp.run(sess.bed, spec)
    else:
        out = ttcp.run(sess.bed, spec)
    run = {**worst, "mbps": out["sender"]["mbps"], "id": -1}
    a = anatomy(ttcp.read_samples(spec.samples), run, payload)
    a["sweep_run_id"] = worst["id"]
    a["capture"] = (_thin(tcpcap.read_tcp(pcap, sess.bed.addr_src, spec.port))
                    if why is None else None)
    a["capture_why_not"] = why
    return a


def _thin(trace: dict) -> dict:
    """At most ANATOMY_MAX_POINTS of each series (every k-th)."""
    out = {"packets": trace["packets"]}
    for t, v in (("t_s", "seq_bytes"), ("retrans_t_s", "retrans_seq"), ("ack_t_s", "ack_bytes")):
        k = max(1, len(trace[t]) // ANATOMY_MAX_POINTS)
        out[t], out[v] = trace[t][::k], trace[v][::k]
    out["retransmissions"] = len(trace["retrans_t_s"])
    return out


def _worst(runs: list[dict], rtt_s: float, payload: float) -> dict | None:
    """The run of the 1992 sender (else any) that lost most against theory."""
    pool = [r for r in runs if r["sender"] == "reno-1992"] or runs
    if not pool:
        return None
    return min(pool, key=lambda r: r["mbps"] / theory_mbps(r.get("window_in_flight",
                                                                   r["window"]), rtt_s, payload))


def _notes(res: dict) -> list[str]:
    notes = []
    bad = [c for c in res["summary"].get("checks", []) if c["ok"] is False]
    for c in bad:
        if c["expected_mbps"] is None:
            notes.append(f"check failed: {c['sender']}: {c['region']}")
        else:
            notes.append(f"check failed: {c['sender']} at {c['window'] // KB} KB "
                         f"({c['region']}): {c['measured_mbps']:.2f} Mbit/s vs "
                         f"{c['expected_mbps']:.2f} expected ({c['error'] * 100:+.1f} %)")
    if res["config"].get("sender_gso_max_segs", SENDER_GSO_MAX_SEGS) is None:
        notes.append("the sender could not be set to one segment per skb (gso_max_segs): "
                     "Linux's GSO deferral makes region 1 bursty, a few % below theory")
    if res["summary"].get("unresolved"):
        notes.append("timing checks not made: " + res["summary"]["unresolved"])
    for b in res.get("bpf", []):
        if not b["loaded"]:
            notes.append(f"{b['name']} skipped: {b['why']}")
    return notes


def failed_checks(res: dict) -> list[str]:
    return [n for n in res.get("notes", []) if n.startswith("check failed")]
