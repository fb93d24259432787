#!/usr/bin/env python3
"""The test bed's attachments side by side: each way of joining linkemud to
the bed's namespaces that works on this kernel, against the same ports
forwarded by `dpdk-testpmd --forward-mode=io` and against a plain veth pair,
all in one run.

Topologies (addresses 198.18.0.1 -> 198.18.0.2, namespaces of our own):
  veth      lr-src eth0 ==veth== eth0 lr-dst: no forwarder (baseline 1)
  af_xdp    the bed lq (lq-src eth0 ==veth== lq-a | forwarder | lq-b ==veth==
            eth0 lq-dst), net_af_xdp on lq-a/lq-b: XDP in native (driver) mode
            on the veth, the socket in copy mode (veth has no zero-copy)
  af_xdp-nb the same with busy_budget=0 (no preferred busy polling)
  af_xdp-bp the same with the host veths' NAPI deferred to the busy poll
            (napi_defer_hard_irqs 2, gro_flush_timeout 200 us: NAPI_DEFER)
  af_packet the bed lq, net_af_packet with DPDK's defaults
  af_packet-t the same with qdisc_bypass=1 and a larger ring, as the bed
            now starts it (AF_PACKET_TUNED)
  tap       net_tap: the forwarder creates lr-a/lr-b, which are then moved
            into lr-src/lr-dst (no veth at all)
  pcap      the bed lq, net_pcap (libpcap on lq-a/lq-b)
Each attachment runs twice per round: linkemud, and testpmd io (baseline 2).

Per run:
  - UDP: 64-byte frames (60 + FCS) from netsniff-ng's trafgen on CPU 0 in
    the source namespace; counted at the destination's device (rx_packets);
    the destination MAC is not the device's, so the stack drops each frame
    at once (PACKET_OTHERHOST): the sink costs next to nothing. The rate at
    0 % loss: one unlimited burst (what the generator reaches), then a
    bisection between 0 and it (STEPS steps); each step sends for STEP_S
    seconds and passes only when every frame arrived.
  - TCP: iperf3 (client and server on CPU 0) for TCP_S seconds; linkemud
    carries `delay 1ms limit 10000` on a2b (the data), testpmd and the veth
    pair no delay. Gbit/s as the receiver counted.
  - CPU during the TCP run: the forwarder's own CPU s/s (utime + stime) and
    the machine's kernel time (system + irq + softirq over all CPUs, less
    the forwarder's own system time) s/s; and all non-idle CPU per GB carried.
  - linkemud's emulation error p99 on a2b over the TCP run (its final report).
linkemud busy-polls CPU 1, every tool runs on CPU 0. Rounds interleave the
configurations; each figure is the median over rounds, with the spread
(min-max). Run as root: `python3 bench/bed_attach.py` (or `make bench`);
by default veth, af_xdp, af_packet, af_packet-t, tap, pcap (about 5
minutes); --all adds af_xdp-nb and af_xdp-bp (whose sends fail on kernel
6.18: docs/performance.md, "The bed's attachments"); --quick: one round,
four attachments. No virtio-user row: it needs vhost-net, which this
kernel lacks (the report says so when /dev/vhost-net is missing).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess as sp
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))

from linkemu import api  # noqa: E402
from linkemu.bed import netns, paths, procs, testbed  # noqa: E402
from linkemu.daemon import daemon  # noqa: E402

sys.path.insert(0, str(REPO / "bench"))
from children import run_interruptible  # noqa: E402

BED, AUX = "lq", "lr"
SRC, DST = "198.18.0.1", "198.18.0.2"
TOOL_CPU, FWD_CPU = "0", "1"
TICKS = os.sysconf("SC_CLK_TCK")
LINK_TCP = "delay 1ms limit 10000"
STEP_S, PROBE_N, STEPS, TCP_S = 1.0, 300_000, 5, 3.0
# AF_PACKET with DPDK's defaults and tuned as the bed now starts it
# (testbed.PMD_DEVARGS): no qdisc on transmit, a ring of 4096 frames of
# 2 KiB (DPDK's default: 512).
AF_PACKET_TUNED = testbed.PMD_DEVARGS["af_packet"]

TRAFGEN_CFG = """{ eth(da=02:00:00:00:00:02, sa=02:00:00:00:00:01, type=0x0800),
  ipv4(saddr=%s, daddr=%s, ttl=64, proto=17), udp(sp=9, dp=9), fill(0x00, 18) }
""" % (SRC, DST)


@dataclass(frozen=True)
class Topo:
    """Where the two ends are: (namespace, device) of src and dst, and the
    host devices a forwarder attaches to (none for the plain pair)."""
    src: tuple[str, str]
    dst: tuple[str, str]
    host: tuple[str, str] | None


@dataclass(frozen=True)
class Attach:
    name: str
    vdev: str | None          # DPDK driver, None: no forwarder (plain veth)
    args: str = ""            # extra devargs
    topo: str = "bed"         # bed | veth | tap
    note: str = ""
    napi: bool = False        # defer the host veths' NAPI to the busy poller (NAPI_DEFER)


ATTACHMENTS = [
    Attach("veth", None, topo="veth", note="plain veth pair, no forwarder"),
    Attach("af_xdp", "net_af_xdp", note="native XDP on veth, copy-mode socket (bed default)"),
    Attach("af_xdp-nb", "net_af_xdp", "busy_budget=0", note="the same, no preferred busy poll"),
    Attach("af_xdp-bp", "net_af_xdp", napi=True,
           note="the same, the host veths' NAPI left to linkemud's preferred busy poll"),
    Attach("af_packet", "net_af_packet", note="DPDK's defaults (the bed's before)"),
    Attach("af_packet-t", "net_af_packet", AF_PACKET_TUNED,
           note="qdisc bypass, 4096-frame ring (the bed's af_packet)"),
    Attach("tap", "net_tap", topo="tap", note="TAP devices moved into the namespaces"),
    Attach("pcap", "net_pcap", note="libpcap on the veths"),
]
DEFAULT = ("veth", "af_xdp", "af_packet", "af_packet-t", "tap", "pcap")   # --all: every one
QUICK = ("veth", "af_xdp", "af_packet-t", "tap")
# Preferred busy polling (DPDK's af_xdp busy_budget, on by default): with a
# deferral count and a flush timeout on the device, the kernel leaves the
# device's NAPI to the socket's busy poll (the forwarder's lcore) instead of
# running it in softirq where the frame was sent (the generator's CPU).
NAPI_DEFER = {"napi_defer_hard_irqs": "2", "gro_flush_timeout": "200000"}


def set_napi(devs, on: bool) -> None:
    for dev in devs:
        for k, v in NAPI_DEFER.items():
            Path(f"/sys/class/net/{dev}/{k}").write_text(v if on else "0")


@dataclass(frozen=True)
class BenchBed(testbed.BedFiles):
    """A bed object daemon.start accepts, with the EAL ports given outright."""
    name: str
    eal: tuple
    host_a: str = ""
    host_b: str = ""

    def eal_ports(self, pmd: str) -> list[str]:
        return list(self.eal)


def run(*argv, check=True, **kw) -> sp.CompletedProcess:
    cp = sp.run(list(argv), capture_output=True, text=True, **kw)
    if check and cp.returncode != 0:
        raise RuntimeError(f"{argv[0] if argv[0] != 'ip' else ' '.join(argv[:5])} ... exited "
                           f"with {cp.returncode}: {(cp.stderr or cp.stdout).strip()[-300:]}")
    return cp


def in_ns(ns: str, *argv) -> list[str]:
    return ["ip", "netns", "exec", ns, "taskset", "-c", TOOL_CPU, *argv]


# --- topologies ----------------------------------------------------------------------

def aux_names():
    return f"{AUX}-src", f"{AUX}-dst", f"{AUX}-a", f"{AUX}-b"


def aux_down() -> None:
    ns_s, ns_d, ha, hb = aux_names()
    for dev in (ha, hb):
        if netns.link_exists(dev):
            netns.link_del_wait(dev)
    for ns in (ns_s, ns_d):
        if netns.ns_exists(ns):
            for p in netns.ns_pids(ns):
                procs.terminate(p, 2.0)
            netns.ns_del(ns)
    shutil.rmtree(paths.bed_run_dir(AUX), ignore_errors=True)
    testbed.remove_dpdk_leftovers(paths.dpdk_file_prefix(AUX))


def ns_side(ns: str, dev: str, addr: str) -> None:
    run("ip", "-n", ns, "link", "set", "lo", "up")
    run("ip", "-n", ns, "addr", "add", f"{addr}/24", "dev", dev)
    run("ip", "-n", ns, "link", "set", dev, "up")
    run("ip", "netns", "exec", ns, "sh", "-c",
        f"echo 1 > /proc/sys/net/ipv6/conf/{dev}/disable_ipv6", check=False)
    run("ip", "netns", "exec", ns, *netns.offloads_off_argv(dev), check=False)


def neighbours(topo: Topo) -> None:
    (ns_s, dev_s), (ns_d, dev_d) = topo.src, topo.dst
    mac_s = netns.link_mac(dev_s, ns_s)
    mac_d = netns.link_mac(dev_d, ns_d)
    run("ip", "-n", ns_s, "neigh", "replace", DST, "lladdr", mac_d, "dev", dev_s, "nud", "permanent")
    run("ip", "-n", ns_d, "neigh", "replace", SRC, "lladdr", mac_s, "dev", dev_d, "nud", "permanent")


def veth_up() -> Topo:
    aux_down()
    ns_s, ns_d, ha, hb = aux_names()
    for ns in (ns_s, ns_d):
        run("ip", "netns", "add", ns)
    run("ip", "link", "add", ha, "type", "veth", "peer", "name", hb)
    for dev, ns, addr in ((ha, ns_s, SRC), (hb, ns_d, DST)):
        run("ip", "link", "set", dev, "netns", ns)
        run("ip", "-n", ns, "link", "set", dev, "name", "eth0")
        ns_side(ns, "eth0", addr)
    t = Topo((ns_s, "eth0"), (ns_d, "eth0"), None)
    neighbours(t)
    return t


def tap_pre() -> Topo:
    aux_down()
    ns_s, ns_d, ha, hb = aux_names()
    for ns in (ns_s, ns_d):
        run("ip", "netns", "add", ns)
    return Topo((ns_s, ha), (ns_d, hb), (ha, hb))


def tap_post(t: Topo) -> None:
    """The forwarder made the TAP devices in the root namespace: move each
    into its namespace (the PMD keeps its file descriptor, which stays valid)."""
    for (ns, dev), addr in ((t.src, SRC), (t.dst, DST)):
        run("ip", "link", "set", "dev", dev, "netns", ns)
        ns_side(ns, dev, addr)
    neighbours(t)


def bed_topo(bed: api.Bed) -> Topo:
    return Topo((bed.ns_src, "eth0"), (bed.ns_dst, "eth0"), (bed.host_a, bed.host_b))


# --- forwarders ----------------------------------------------------------------------

def eal_ports(a: Attach, host: tuple[str, str]) -> list[str]:
    extra = f",{a.args}" if a.args else ""
    return ["--no-pci"] + [f"--vdev={a.vdev}{i},iface={dev}{extra}" for i, dev in enumerate(host)]


class Linkemud:
    kind = "linkemud"

    def __init__(self, a: Attach, topo: Topo, a2b: str):
        self.bed = BenchBed(AUX if a.topo == "tap" else BED, tuple(eal_ports(a, topo.host)))
        cfg = daemon.DaemonConfig(bed=self.bed, a2b=a2b, b2a="", lcores=FWD_CPU)
        self.d = daemon.start(cfg)
        self.pid = self.d.pid
        self.final = None

    def stop(self) -> None:
        r = daemon.stop(self.bed, self.d.popen)
        self.final = r.final


class Testpmd:
    kind = "testpmd"

    def __init__(self, a: Attach, topo: Topo, a2b: str, tmp: Path):
        self.log = tmp / "testpmd.log"
        argv = ["stdbuf", "-oL", "dpdk-testpmd", "-l", f"{TOOL_CPU},{FWD_CPU}", "--in-memory",
                *eal_ports(a, topo.host), "--", "--forward-mode=io", "--nb-cores=1",
                "--auto-start"]
        with open(self.log, "w") as f:
            # testpmd exits on EOF of stdin: keep a pipe open.
            self.p = sp.Popen(argv, stdin=sp.PIPE, stdout=f, stderr=sp.STDOUT, text=True,
                              start_new_session=True)
        self.pid = self.p.pid
        self.final = None
        deadline = time.monotonic() + 30
        while "Press enter to exit" not in self.log.read_text():
            if self.p.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("testpmd did not start:\n" + self.log.read_text()[-1500:])
            time.sleep(0.05)

    def stop(self) -> None:
        if self.p.poll() is None:
            procs.terminate(self.pid, 10.0, self.p)


# --- measurements ----------------------------------------------------------------------

def rx_packets(ns: str, dev: str) -> int:
    return int(run("ip", "netns", "exec", ns, "cat",
                   f"/sys/class/net/{dev}/statistics/rx_packets").stdout)


def trafgen(topo: Topo, cfg: Path, n: int, pps: float | None) -> tuple[int, float, bool]:
    """Send n frames (at pps, or as fast as trafgen can); (frames that
    arrived, seconds the sending took, whether trafgen sent them all).
    trafgen gives up when the device refuses a frame ("Flushing TX_RING
    failed: Resource temporarily unavailable": a veth whose peer's ring is
    full stops its queue): the path did not take the rate, a loss."""
    (ns_s, dev_s), (ns_d, dev_d) = topo.src, topo.dst
    r0 = rx_packets(ns_d, dev_d)
    argv = in_ns(ns_s, "trafgen", "-i", str(cfg), "-o", dev_s, "-P", "1", "-n", str(n),
                 "-Q", "-C")
    if pps:
        argv += ["-b", f"{int(pps)}pps"]
    t0 = time.monotonic()
    cp = run(*argv, check=False)
    dt = time.monotonic() - t0
    if cp.returncode != 0 and "temporarily unavailable" not in (cp.stderr + cp.stdout):
        raise RuntimeError(f"trafgen exited with {cp.returncode}: {cp.stderr.strip()[-300:]}")
    time.sleep(0.2)          # what is in flight arrives
    return rx_packets(ns_d, dev_d) - r0, dt, cp.returncode == 0


def udp_rate(topo: Topo, cfg: Path) -> dict:
    """The highest rate with every frame delivered (see the docstring)."""
    got, dt, sent = trafgen(topo, cfg, PROBE_N, None)
    gen = PROBE_N / dt if sent else got / dt
    out = {"gen_pps": gen, "burst_delivered": got / PROBE_N, "burst_pps": got / dt,
           "burst_refused": not sent}
    print(f"  burst: trafgen {gen / 1e3:.0f} kpps, {got / PROBE_N:.1%} arrived"
          + ("" if sent else " (trafgen stopped: the device refused a frame)"), file=sys.stderr)
    if got >= PROBE_N and sent:
        return {**out, "pps0": gen, "gen_limited": True}
    lo, hi, best = 0.0, gen if sent else 1.5 * gen, 0.0
    for _ in range(STEPS):
        r = (lo + hi) / 2
        n = int(r * STEP_S)
        got, _, sent = trafgen(topo, cfg, n, r)
        if got >= n and sent:
            lo, best = r, r
        else:
            hi = r
    return {**out, "pps0": best, "gen_limited": False}


def cpu_times() -> list[list[int]]:
    rows = []
    for line in Path("/proc/stat").read_text().splitlines():
        if line.startswith("cpu") and line[3].isdigit():
            rows.append([int(x) for x in line.split()[1:9]])
    return rows


def proc_cpu(pid: int) -> tuple[float, float]:
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(f[11]) / TICKS, int(f[12]) / TICKS


def tcp(topo: Topo, fwd_pid: int | None) -> dict:
    (ns_s, _), (ns_d, _) = topo.src, topo.dst
    srv = sp.Popen(in_ns(ns_d, "iperf3", "-s", "-1", "-B", DST), stdout=sp.DEVNULL,
                   stderr=sp.DEVNULL)
    try:
        time.sleep(0.3)
        c0, f0, t0 = cpu_times(), proc_cpu(fwd_pid) if fwd_pid else (0, 0), time.monotonic()
        cp = run(*in_ns(ns_s, "iperf3", "-c", DST, "-t", str(TCP_S), "-J"), check=False,
                 timeout=TCP_S + 30)
        c1, f1, t1 = cpu_times(), proc_cpu(fwd_pid) if fwd_pid else (0, 0), time.monotonic()
    finally:
        if srv.poll() is None:
            srv.kill()
        srv.wait(timeout=10)
    res = json.loads(cp.stdout)
    if "error" in res:
        raise RuntimeError("iperf3: " + res["error"])
    gbps = res["end"]["sum_received"]["bits_per_second"] / 1e9
    dt = t1 - t0
    d = [[b - a for a, b in zip(r0, r1)] for r0, r1 in zip(c0, c1)]
    # user nice system idle iowait irq softirq steal
    kern = sum(r[2] + r[5] + r[6] for r in d) / TICKS
    busy = sum(r[0] + r[1] + r[2] + r[5] + r[6] for r in d) / TICKS
    fu, fs = f1[0] - f0[0], f1[1] - f0[1]
    return {"gbps": gbps, "fwd_cpu": (fu + fs) / dt, "kern_cpu": (kern - fs) / dt,
            "cpu_per_gb": (busy / dt) / (gbps / 8) if gbps else None}


def one(a: Attach, kind: str, bed: api.Bed, tmp: Path, cfg: Path) -> dict:
    """One attachment, one forwarder (linkemud, testpmd or none): UDP, TCP."""
    if a.topo == "veth":
        topo = veth_up()
    elif a.topo == "tap":
        topo = tap_pre()
    else:
        topo = bed_topo(bed)
    fwd = None
    out: dict = {}
    if a.napi:
        set_napi(topo.host, True)
    try:
        for phase in ("udp", "tcp"):
            if a.vdev is not None:
                if kind == "linkemud":
                    fwd = Linkemud(a, topo, "" if phase == "udp" else LINK_TCP)
                else:
                    fwd = Testpmd(a, topo, "", tmp)
                if a.topo == "tap":
                    tap_post(topo)
                time.sleep(0.5)
            if phase == "udp":
                out.update(udp_rate(topo, cfg))
            else:
                out.update(tcp(topo, fwd.pid if fwd else None))
            if fwd is not None:
                fwd.stop()
                if kind == "linkemud" and phase == "tcp" and fwd.final:
                    err = fwd.final["directions"]["a2b"].get("emulation_error_ns") or {}
                    out["err_p99_ns"] = err.get("p99")
                    out["queue_full"] = fwd.final["directions"]["a2b"]["dropped"]["queue_full"]
                fwd = None
            if a.topo == "tap" and phase == "udp":
                topo = tap_pre()
    finally:
        if fwd is not None:
            fwd.stop()
        if a.napi:
            set_napi(topo.host, False)
        if a.topo in ("veth", "tap"):
            aux_down()
    return out


def med(rows: list[dict], k: str):
    v = [r[k] for r in rows if r.get(k) is not None]
    return (statistics.median(v), min(v), max(v)) if v else (None, None, None)


def main() -> int:
    # SIGTERM unwinds like Ctrl-C: the forwarder of the moment is stopped
    # (one()'s finally), the aux namespaces and the bed taken down.
    return run_interruptible(measure)


def measure() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="one round, fewer attachments")
    ap.add_argument("--only", help="comma-separated attachment names")
    ap.add_argument("--all", action="store_true",
                    help="every attachment (adds the af_xdp variants af_xdp-nb and af_xdp-bp)")
    ap.add_argument("--json", metavar="FILE", help="also write every run as JSON")
    o = ap.parse_args()
    if os.geteuid() != 0:
        print("bed_attach: skipped: needs root (network namespaces)")
        return 0
    if sp.run(["which", "trafgen"], capture_output=True).returncode != 0:
        print("bed_attach: skipped: trafgen not found (apt-get install netsniff-ng)")
        return 0
    names = o.only.split(",") if o.only else (
        QUICK if o.quick else [a.name for a in ATTACHMENTS] if o.all else DEFAULT)
    todo = [a for a in ATTACHMENTS if a.name in names]
    rounds = 1 if o.quick else o.rounds
    runs: dict[tuple[str, str], list[dict]] = {}
    failed: dict[tuple[str, str], str] = {}
    bed = api.Bed(BED)
    bed.up()
    try:
        with tempfile.TemporaryDirectory(prefix="linkemu-attach-") as tmp:
            cfg = Path(tmp) / "udp64.cfg"
            cfg.write_text(TRAFGEN_CFG)
            for rnd in range(rounds):
                order = todo if rnd % 2 == 0 else todo[::-1]
                for a in order:
                    for kind in (("none",) if a.vdev is None else
                                 (("linkemud", "testpmd") if rnd % 2 == 0 else ("testpmd", "linkemud"))):
                        key = (a.name, kind)
                        if key in failed:
                            continue
                        print(f"[round {rnd + 1}/{rounds}] {a.name} {kind} ...", file=sys.stderr,
                              flush=True)
                        t0 = time.monotonic()
                        try:
                            r = one(a, kind, bed, Path(tmp), cfg)
                            runs.setdefault(key, []).append(r)
                            print(f"  {time.monotonic() - t0:.0f} s", file=sys.stderr)
                        except Exception as e:      # noqa: BLE001 - reported in the table
                            failed[key] = str(e).strip().splitlines()[-1][:160] if str(e).strip() else repr(e)
                            print(f"  failed: {failed[key]}", file=sys.stderr)
    finally:
        aux_down()
        bed.down()
    if o.json:
        Path(o.json).write_text(json.dumps({f"{k[0]}/{k[1]}": v for k, v in runs.items()},
                                           indent=1) + "\n")
    report(todo, runs, failed, rounds)
    return 0


def report(todo, runs, failed, rounds) -> None:
    base = med(runs.get(("veth", "none"), []), "pps0")[0]
    base_tcp = med(runs.get(("veth", "none"), []), "gbps")[0]
    print(f"64-byte UDP at 0 % loss (trafgen, CPU {TOOL_CPU}) and TCP (iperf3; linkemud through "
          f"`{LINK_TCP}` on a2b) per attachment; forwarder on CPU {FWD_CPU}; median of {rounds} "
          f"round(s) [min-max]")
    print(f"  {'attachment':12} {'forwarder':9} {'kpps@0%':>18} {'x testpmd':>9} {'x veth':>6} "
          f"{'TCP Gbit/s':>17} {'x tpmd':>6} {'x veth':>6} {'fwd CPU':>7} {'kernel':>6} "
          f"{'CPU s/GB':>8} {'err p99 us':>10}")
    for a in todo:
        for kind in (("none",) if a.vdev is None else ("linkemud", "testpmd")):
            key = (a.name, kind)
            if key in failed and key not in runs:
                print(f"  {a.name:12} {kind:9} failed: {failed[key]}")
                continue
            rows = runs.get(key, [])
            if not rows:
                continue
            p, plo, phi = med(rows, "pps0")
            g, glo, ghi = med(rows, "gbps")
            tp = med(runs.get((a.name, "testpmd"), []), "pps0")[0]
            tg = med(runs.get((a.name, "testpmd"), []), "gbps")[0]
            lim = "=gen" if all(r.get("gen_limited") for r in rows) else "    "
            e = med(rows, "err_p99_ns")[0]
            fc, kc, cg = med(rows, "fwd_cpu")[0], med(rows, "kern_cpu")[0], med(rows, "cpu_per_gb")[0]

            def ratio(x, y):
                return f"{x / y:6.2f}" if x and y else f"{'-':>6}"
            print(f"  {a.name:12} {kind:9} {p / 1e3:6.0f} [{plo / 1e3:.0f}-{phi / 1e3:.0f}]{lim}"
                  f" {ratio(p, tp) if kind == 'linkemud' else '':>9} {ratio(p, base)} "
                  f"{g:5.2f} [{glo:.2f}-{ghi:.2f}] {ratio(g, tg) if kind == 'linkemud' else '':>6} "
                  f"{ratio(g, base_tcp)} {fc:7.2f} {kc:6.2f} {cg if cg else 0:8.2f} "
                  f"{(e / 1e3) if e is not None else float('nan'):10.1f}")
    for key, why in failed.items():
        if key in runs:
            print(f"  note: {key[0]} {key[1]} failed in a later round: {why}")
    print("  =gen: every frame arrived even at the generator's full rate (the figure is "
          "trafgen's, not the path's).")
    for a in todo:
        if a.note:
            print(f"  {a.name}: {a.note}")
    print("  no virtio-user/vhost-net row: this kernel has no vhost-net (CONFIG_VHOST_NET is "
          "not set, no /dev/vhost-net)." if not Path("/dev/vhost-net").exists() else "")


if __name__ == "__main__":
    sys.exit(main())
