"""One measurement of the forwarding study on a started path.

udp(): iperf3 UDP at one payload size with the offered load above what
any path carries, ping (same payload size, every 10 ms) during it, and for
SWC's 1 % paths a second iperf3 flow of 64 B control frames at 1 % of SWB's
traffic; tcp(): iperf3 TCP writing that payload size; ping_long(): ping
alone, for the latency distribution. Each records what limits a path:
what the sender sent, what the forwarder received, dropped and sent (its
counters before and after, over the control socket), what arrived, and
how busy each CPU and the forwarder's process were.
"""

from __future__ import annotations

import math
import os
import threading
import time

from linkemu.bed import netns
from linkemu.bed.cpus import tool_cpu_pair, tool_cpus
from linkemu.errors import LinkemuError
from linkemu.instruments import iperf3, ping
from linkemu.lab.forwarding_paths import CONTROL_PORT, Started

UDP_PORT = 5201
TCP_PORT = 5202
PING_INTERVAL_S = 0.01
_TICK = os.sysconf("SC_CLK_TCK")


# --- CPU accounting -----------------------------------------------------------------------

def cpu_ticks() -> dict[int, tuple[int, int]]:
    """Per CPU: (busy, total) jiffies from /proc/stat (busy = all but idle
    and iowait)."""
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("cpu") and line[3].isdigit():
                p = line.split()
                v = [int(x) for x in p[1:]]
                idle = v[3] + (v[4] if len(v) > 4 else 0)
                out[int(p[0][3:])] = (sum(v) - idle, sum(v))
    return out


def busy_share(t0: dict, t1: dict) -> dict[str, float]:
    out = {}
    for c in t1:
        if c in t0:
            busy, total = t1[c][0] - t0[c][0], t1[c][1] - t0[c][1]
            out[str(c)] = round(busy / total, 3) if total > 0 else 0.0
    return out


def proc_cpu_s(pid: int | None) -> float | None:
    """user + system CPU seconds of a process (all its threads)."""
    if pid is None:
        return None
    try:
        f = open(f"/proc/{pid}/stat").read().rpartition(")")[2].split()
        return (int(f[11]) + int(f[12])) / _TICK
    except (OSError, IndexError, ValueError):
        return None


def udp_errors(ns: str) -> dict[str, int]:
    """The namespace's UDP receive errors (/proc/net/snmp as seen inside
    it): RcvbufErrors = datagrams dropped at a full socket buffer."""
    cp = netns.ns_run(ns, ["cat", "/proc/net/snmp"], check=False)
    lines = [l.split() for l in cp.stdout.splitlines() if l.startswith("Udp:")]
    if len(lines) < 2:
        return {}
    return {k: int(v) for k, v in zip(lines[0][1:], lines[1][1:]) if v.lstrip("-").isdigit()}


def backlog_drops() -> int:
    """Frames the kernel dropped at a full per-CPU input backlog (all CPUs,
    /proc/net/softnet_stat column 2; not per namespace: the bed's traffic
    is all there is)."""
    try:
        return sum(int(l.split()[1], 16) for l in open("/proc/net/softnet_stat"))
    except (OSError, IndexError, ValueError):
        return 0


class Window:
    """Counters of the forwarder and the CPUs around one measurement."""

    def __init__(self, st: Started):
        self.st = st

    def __enter__(self) -> "Window":
        self.d0 = _a2b(self.st)
        self.c0 = cpu_ticks()
        self.p0 = proc_cpu_s(self.st.pid)
        self.q0 = proc_cpu_s(self.st.peer_pid)
        self.u0, self.b0 = udp_errors(self.st.layout.ns_dst), backlog_drops()
        self.t0 = time.monotonic()
        return self

    def __exit__(self, *exc) -> None:
        self.elapsed = time.monotonic() - self.t0
        self.d1 = _a2b(self.st)
        self.c1 = cpu_ticks()
        self.p1 = proc_cpu_s(self.st.pid)
        self.q1 = proc_cpu_s(self.st.peer_pid)
        self.u1, self.b1 = udp_errors(self.st.layout.ns_dst), backlog_drops()

    def record(self) -> dict:
        out = {"cpu_busy": busy_share(self.c0, self.c1), "elapsed_s": round(self.elapsed, 3),
               "receiver": {"socket_drops": self.u1.get("RcvbufErrors", 0)
                            - self.u0.get("RcvbufErrors", 0),
                            "backlog_drops": self.b1 - self.b0}}
        if self.p0 is not None and self.p1 is not None:
            out["forwarder_cpu_s"] = round(self.p1 - self.p0, 3)
        if self.q0 is not None and self.q1 is not None:
            out["punt_peer_cpu_s"] = round(self.q1 - self.q0, 3)
        if self.d0 is not None and self.d1 is not None:
            out["forwarder"] = counter_delta(self.d0, self.d1)
        return out


def _a2b(st: Started) -> dict | None:
    if st.link is None:
        return None
    return st.link.link.stats().raw["directions"]["a2b"]


def counter_delta(d0: dict, d1: dict) -> dict:
    """What the forwarder did in a2b between two snapshots: frames in,
    out, dropped by cause, lost before its input (the port's counters)."""
    drop = {k: d1["dropped"].get(k, 0) - d0["dropped"].get(k, 0) for k in d1["dropped"]}
    b0, b1 = d0.get("before_rx", {}), d1.get("before_rx", {})
    return {"rx": d1["rx"] - d0["rx"], "tx": d1["tx"] - d0["tx"],
            "rx_bytes": d1["rx_bytes"] - d0["rx_bytes"],
            "dropped": {k: v for k, v in drop.items() if v},
            "before_rx": b1.get("total", 0) - b0.get("total", 0),
            "oerrors": d1.get("after_tx", {}).get("oerrors", 0)
            - d0.get("after_tx", {}).get("oerrors", 0), **punt_delta(d0, d1)}


PUNT_KEYS = ("sent", "returned", "injected", "punt_dropped", "punt_full", "punt_down")


def punt_delta(d0: dict, d1: dict) -> dict:
    """A punted direction's channels (docs/punt.md), summed: frames handed
    to the process and returned in the window, and its drop causes."""
    if not d1.get("punt"):
        return {}
    tot = {k: sum(c.get(k, 0) for c in d1["punt"]) - sum(c.get(k, 0) for c in d0.get("punt", []))
           for k in PUNT_KEYS}
    return {"punt": tot}


# --- iperf3 -----------------------------------------------------------------------------

def udp_summary(out: dict, size: int) -> dict:
    """Sent and received datagrams and payload rate from iperf3 -J (3.x:
    end.sum_sent / end.sum_received; received = packets - lost)."""
    end = out.get("end", {})
    snt, rcv = end.get("sum_sent") or end.get("sum", {}), end.get("sum_received") or end.get("sum", {})
    secs = float(rcv.get("seconds") or snt.get("seconds") or 0) or 1e-9
    sent = int(snt.get("packets", 0))
    lost = int(rcv.get("lost_packets", 0))
    got = max(0, int(rcv.get("packets", sent)) - lost)
    return {"sent_pkts": sent, "recv_pkts": got, "lost_pkts": lost, "seconds": round(secs, 3),
            "sent_pps": round(sent / float(snt.get("seconds") or secs), 1),
            "pps": round(got / secs, 1), "mbit_s": round(got * size * 8 / secs / 1e6, 4),
            "jitter_ms": rcv.get("jitter_ms")}


def _iperf3_udp(layout, size: int, seconds: float, rate: str, port: int) -> dict:
    snd, rcv = tool_cpu_pair()
    return iperf3.iperf3_run(layout, ["-u", "-b", rate, "-l", str(size), "-t", f"{seconds:g}"],
                             seconds, port, server_cpus=rcv, client_cpus=snd,
                             label=f"iperf3 UDP {size} B")


def _ping(layout, size: int, seconds: float, interval: float) -> ping.PingResult:
    count = max(1, int(seconds / interval))
    cmd = ["ping", "-n", "-c", str(count), "-i", f"{interval:g}",
           "-s", str(size), "-W", "2", "-w", str(math.ceil(seconds + 2)), layout.addr_dst]
    cp = netns.ns_run(layout.ns_src, cmd, cpus=tool_cpus(), check=False, timeout=seconds + 30)
    # 1 = some replies missing (fine under load); no statistics line = ping
    # did not run as asked.
    if cp.returncode not in (0, 1) or "packets transmitted" not in cp.stdout:
        raise LinkemuError(f"ping failed ({cp.returncode}): "
                           f"{(cp.stderr or cp.stdout).strip()[:300]}")
    return ping.parse_ping(cp.stdout)


class _Bg(threading.Thread):
    """A call in a thread whose result or exception is kept for join()."""

    def __init__(self, fn, *args):
        super().__init__(daemon=True)
        self.fn, self.args, self.result, self.error = fn, args, None, None
        self.start()

    def run(self) -> None:
        try:
            self.result = self.fn(*self.args)
        except BaseException as e:      # re-raised in the caller's thread
            self.error = e

    def get(self):
        self.join()
        if self.error is not None:
            raise self.error
        return self.result


def ping_summary(p: ping.PingResult) -> dict:
    s = p.summary()
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in s.items()}


def udp(st: Started, size: int, seconds: float, offered: str,
        control_bps: float | None = None, ping_interval: float = PING_INTERVAL_S) -> dict:
    """UDP throughput, jitter and (concurrent) ping RTT at one payload size."""
    with Window(st) as w:
        pinger = _Bg(_ping, st.layout, size, max(0.5, seconds - 0.5), ping_interval)
        ctl = None
        if control_bps:
            ctl = _Bg(_iperf3_udp, st.layout, 64, seconds, f"{control_bps:.0f}", CONTROL_PORT)
        main = _iperf3_udp(st.layout, size, seconds, offered, UDP_PORT)
        ctl_out = ctl.get() if ctl else None
        p = pinger.get()
    rec = {"proto": "udp", "size": size, "offered": offered, **udp_summary(main, size),
           "ping": ping_summary(p), **w.record()}
    if ctl_out is not None:
        c = udp_summary(ctl_out, 64)
        c["offered_bps"] = round(control_bps)
        rec["control"] = c
        rec["user_mbit_s"] = rec["mbit_s"]
        rec["mbit_s"] = round(rec["mbit_s"] + c["mbit_s"], 4)
        rec["user_pps"] = rec["pps"]
        rec["pps"] = round(rec["pps"] + c["pps"], 1)
    return rec


def tcp(st: Started, size: int, seconds: float) -> dict:
    """TCP throughput with writes of the payload size (Nagle on: the
    sender's stack coalesces small writes, as in the study)."""
    snd, rcv = tool_cpu_pair()
    with Window(st) as w:
        out = iperf3.iperf3_run(st.layout, ["-l", str(size), "-t", f"{seconds:g}"], seconds,
                                TCP_PORT, server_cpus=rcv, client_cpus=snd,
                                label=f"iperf3 TCP {size} B")
    s = iperf3.iperf3_tcp_summary(out)
    rec = {"proto": "tcp", "size": size, "mbit_s": round(s["mbit_s"], 4),
           "retransmits": s["retransmits"], **w.record()}
    f = rec.get("forwarder")
    if f and f["rx"]:
        # What the sender's stack made of the small writes: the mean frame
        # through the forwarder (data and ACK-less a2b: data segments).
        rec["mean_frame_bytes"] = round(f["rx_bytes"] / f["rx"], 1)
    return rec


def ping_long(st: Started, size: int, seconds: float,
              interval: float = PING_INTERVAL_S) -> dict:
    """ping alone for the distribution (every reply's RTT kept)."""
    with Window(st) as w:
        p = _ping(st.layout, size, seconds, interval)
    return {"size": size, "interval_s": interval, **ping_summary(p),
            "rtts_ms": [round(x, 4) for x in p.rtts_ms], **w.record()}
