#!/usr/bin/env python3
"""The tail and the cost of waiting: linkemud's busy and adaptive waiting
modes side by side, against the machine's baseline, on a real bed.

Baseline (same run, before any daemon): the noise floor of the daemon's
CPU (src/tools/noisefloor.c: the gaps a busy loop sees there), which
bounds from below what any emulator on this CPU can promise.

Per mode (--wait busy, --wait adaptive), one daemon each, `delay 10ms` on
a2b, on the bed `li` (af_xdp):
  - precision: owdprobe (python/linkemu/instruments/owd.py), 1500-byte
    frames at PROBE_PPS for PROBE_S seconds, paced like a ping (the case
    where an adaptive lcore sleeps between frames): the offset of the
    median one-way delay above 10 ms, and p99, p99.9 and max above 10 ms;
    the daemon's own emulation error (send time - deadline) p50/p99/max.
  - CPU: linkemud's CPU seconds per second (utime + stime of the whole
    process) at idle, at 45 Mbit/s (1500-byte frames at 3750/s through
    the same link), and at full load (owdprobe --max). Beside it the
    guest's idle polling on the daemon's CPU (cpuidle state POLL, time
    the idle loop spins rather than halting; with linkemud's PM QoS hold
    at 0 the vCPU never halts), which the process's own figure cannot see.

Rounds alternate the modes (ROUNDS of each) so the machine's drift falls on
both; each figure is the median over rounds. The ratio column is adaptive
over busy. Run as root (namespaces): `python3 bench/tail_wait.py`, or `make
bench`. --quick: one round, shorter runs.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO / "bench"))

from linkemu import api  # noqa: E402
from linkemu.bed import cpus, isolation, paths  # noqa: E402
from linkemu.daemon import daemon  # noqa: E402
from linkemu.instruments import noisefloor, owd  # noqa: E402
from children import run_interruptible  # noqa: E402

BED = "li"
LINK = "delay 10ms limit 100000"
DELAY_NS = 10_000_000
MODES = ("busy", "adaptive")
PROBE_PPS = 200.0
MBIT45_PPS = 45e6 / (1500 * 8)          # 3750 frames/s of 1500 bytes
TICKS = os.sysconf("SC_CLK_TCK")


def proc_cpu_s(pid: int) -> float:
    """utime + stime of a process, in seconds."""
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TICKS


def idle_poll_s(cpu: int) -> float:
    """Time the CPU's idle loop spent polling (cpuidle state POLL), s."""
    base = Path(f"/sys/devices/system/cpu/cpu{cpu}/cpuidle")
    for st in sorted(base.glob("state*")) if base.exists() else []:
        if (st / "name").read_text().strip() == "POLL":
            return int((st / "time").read_text()) / 1e6
    return 0.0


class CpuMeter:
    """CPU s/s of a process and of its CPU's idle polling over a window."""

    def __init__(self, pid: int, cpu: int):
        self.pid, self.cpu = pid, cpu

    def __enter__(self):
        self.t0, self.c0, self.p0 = time.monotonic(), proc_cpu_s(self.pid), idle_poll_s(self.cpu)
        return self

    def __exit__(self, *exc):
        dt = time.monotonic() - self.t0
        self.proc = (proc_cpu_s(self.pid) - self.c0) / dt
        self.poll = (idle_poll_s(self.cpu) - self.p0) / dt


def q(values, p: float) -> float:
    """The p-quantile (0..1) of sorted values, nearest rank."""
    return values[min(len(values) - 1, max(0, int(round(p * (len(values) - 1)))))]


def owd_stats(samples: Path) -> dict:
    """Offset (median), p99, p99.9 and max of the one-way delay above 10 ms."""
    rec = owd.read_samples(samples)
    d = sorted(int(x) - DELAY_NS for x in (rec["rx_ns"] - rec["send_ns"]))
    return dict(n=len(d), offset=q(d, 0.5), p99=q(d, 0.99), p999=q(d, 0.999), max=d[-1])


SPIN_RE = re.compile(r"--wait adaptive: spin ([\d.]+) us \((auto, learned from (\d+) timer wake-ups; "
                     r"(\d+) woke later|fixed|auto, not learned)")


def log_size() -> int:
    log = paths.daemon_log_file(BED)
    return log.stat().st_size if log.exists() else 0


def spin_said(since: int) -> dict:
    """The spin an adaptive daemon reported at its end (its log after
    byte `since`): us, and for a learned one the wake-ups it came from."""
    with open(paths.daemon_log_file(BED), "rb") as f:
        f.seek(since)
        m = SPIN_RE.search(f.read().decode(errors="replace"))
    if not m:
        return {}
    out = {"spin_us": float(m.group(1))}
    if m.group(3):
        out["spin_wakeups"], out["spin_beyond"] = int(m.group(3)), int(m.group(4))
    return out


def one_mode(bed: api.Bed, mode: str, rnd: int, o, tmp: Path) -> dict:
    """Two daemons: idle CPU and precision (its emulation error is that of
    the probe alone), then CPU at 45 Mbit/s and at full load."""
    dcpu = cpus.daemon_cpu()
    out: dict = {}
    since = log_size()
    link = bed.run(LINK, "", pmd="af_xdp", wait=mode, seed=1, io=o.io)
    try:
        time.sleep(0.5)
        with CpuMeter(link.pid, dcpu) as m:
            time.sleep(o.idle_s)
        out["cpu_idle"], out["poll_idle"] = m.proc, m.poll
        samples = tmp / f"{mode}{rnd}.owd"
        owd.probe(bed.layout, owd.ProbeSpec(ip_len=1500, pps=PROBE_PPS, count=int(PROBE_PPS * o.probe_s),
                                            run_id=100 + rnd, port=9300, samples=samples, spin_us=50))
        out.update(owd_stats(samples))
    finally:
        final = link.stop().raw
    if mode == "adaptive":
        out.update(spin_said(since))
    err = final["directions"]["a2b"].get("emulation_error_ns") or {}
    out["err_p50"], out["err_p99"], out["err_max"] = err.get("p50"), err.get("p99"), err.get("max")
    # What the spacing of the daemon's polls alone allowed (poll_gaps.h).
    gaps = (final["directions"]["a2b"].get("poll_gaps") or {}).get("lateness_ns") or {}
    out["gaps_p99"], out["gaps_p999"] = gaps.get("p99"), gaps.get("p999")
    link = bed.run(LINK, "", pmd="af_xdp", wait=mode, seed=1, io=o.io)
    try:
        time.sleep(0.5)
        samples = tmp / f"{mode}{rnd}-45.owd"
        with CpuMeter(link.pid, dcpu) as m:
            owd.probe(bed.layout, owd.ProbeSpec(ip_len=1500, pps=MBIT45_PPS, count=int(MBIT45_PPS * o.load_s),
                                                run_id=200 + rnd, port=9301, samples=samples, spin_us=50))
        out["cpu_45"], out["poll_45"] = m.proc, m.poll
        out.update({f"{k}_45": v for k, v in owd_stats(samples).items()})
        with CpuMeter(link.pid, dcpu) as m:
            owd.probe(bed.layout, owd.ProbeSpec(ip_len=1500, pps=None, count=int(100_000 * o.load_s),
                                                run_id=300 + rnd, port=9302, idle_s=0.3))
        out["cpu_full"], out["poll_full"] = m.proc, m.poll
    finally:
        link.stop()
    return out


def fmt_us(ns) -> str:
    return "-" if ns is None else f"{ns / 1000:9.1f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="one round, shorter runs")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--io", choices=("dpdk", "kernel"), default="dpdk",
                    help="the data plane: linkemud (dpdk, the default) or linkemuk (kernel: busy is its "
                         "--busy-poll; its thread is not pinned, so the CPU columns are its process's)")
    ap.add_argument("--adaptive-args", default="", metavar="ARGS",
                    help="more linkemud options for the adaptive runs, e.g. '--spin-us 200'")
    ap.add_argument("--isolate-lcore", action="store_true",
                    help="for the run, move every other thread that may run elsewhere off the daemon's "
                         "CPU (PID 1's workers, kdamond, other sessions; the noise floor too is then "
                         "measured so) and move them back at the end: changes other processes' CPU "
                         "affinity (linkemu.bed.isolation)")
    o = ap.parse_args()
    if o.adaptive_args:
        extra = o.adaptive_args.split()
        build = daemon.build_argv
        daemon.build_argv = lambda b, cfg: build(b, cfg) + (extra if cfg.wait == "adaptive" else [])
    o.rounds = 1 if o.quick else o.rounds
    o.idle_s, o.probe_s, o.load_s = (2.0, 5.0, 2.0) if o.quick else (3.0, 10.0, 3.0)
    if os.geteuid() != 0:
        print("tail_wait: skipped: needs root (network namespaces)")
        return 0

    def isolated_measure():
        if not o.isolate_lcore:
            return measure(o, {})
        # Not this process: the bed derives the daemon's CPU from its
        # affinity (linkemu.bed.cpus), and it mostly sleeps.
        with isolation.isolated(cpus.daemon_cpu(), keep={os.getpid()},
                                say=lambda line: print(line, file=sys.stderr)) as moved:
            return measure(o, moved)

    # SIGTERM unwinds like Ctrl-C, isolated or not: the daemon of the
    # moment is stopped, the bed taken down (measure's finally), and
    # isolated() moves the threads back.
    return run_interruptible(isolated_measure)


def measure(o, moved: dict) -> int:
    nf = noisefloor.noise_floor(cpus.daemon_cpu(), 2.0)
    gap = nf["gap_ns"]
    tool_cpu = (cpus.tool_cpu_list() or [cpus.daemon_cpu()])[0]
    tgap = noisefloor.noise_floor(tool_cpu, 2.0)["gap_ns"]
    rows: dict[str, list[dict]] = {m: [] for m in MODES}
    bed = api.Bed(BED)
    bed.up()
    try:
        with tempfile.TemporaryDirectory(prefix="linkemu-bench-") as tmp:
            for rnd in range(o.rounds):
                for mode in (MODES if rnd % 2 == 0 else MODES[::-1]):
                    rows[mode].append(one_mode(bed, mode, rnd, o, Path(tmp)))
    finally:
        bed.down()
    med = {m: {k: statistics.median(r[k] for r in rows[m] if r.get(k) is not None)
               for k in rows[m][0]} for m in MODES}
    print(f"baseline, same run: noise floor (gaps in a busy loop, src/tools/noisefloor.c), 2 s "
          f"on each CPU, us: daemon's CPU {cpus.daemon_cpu()} p99 {gap['p99'] / 1000:.2f} p99.9 "
          f"{gap['p999'] / 1000:.2f} max {gap['max'] / 1000:.1f}; tools' CPU {tool_cpu} p99 "
          f"{tgap['p99'] / 1000:.2f} p99.9 {tgap['p999'] / 1000:.2f} max {tgap['max'] / 1000:.1f}")
    if o.io == "kernel":
        print("data plane: linkemuk (kernel sockets; its thread may run on either CPU)")
    if o.adaptive_args:
        print(f"adaptive runs with: {o.adaptive_args}")
    print(f"daemon's CPU: {'isolated, ' + isolation.describe(moved) + ' moved off it' if moved else 'shared with every thread the bench did not start (--isolate-lcore to move them)'}")
    print(f"one-way delay through `delay 10ms`, 1500 B at {PROBE_PPS:.0f}/s, us above 10 ms "
          f"(median of {o.rounds} round(s), {med['busy']['n']:.0f} frames each):")
    print(f"  {'mode':9} {'offset':>9} {'p99':>9} {'p99.9':>9} {'max':>9} | daemon error "
          f"{'p50':>7} {'p99':>9} {'max':>9} | poll gaps {'p99':>7} {'p99.9':>9}")
    for m in MODES:
        r = med[m]
        print(f"  {m:9} {fmt_us(r['offset'])} {fmt_us(r['p99'])} {fmt_us(r['p999'])} "
              f"{fmt_us(r['max'])} |              {fmt_us(r['err_p50'])[2:]} {fmt_us(r['err_p99'])} "
              f"{fmt_us(r['err_max'])} |           {fmt_us(r.get('gaps_p99'))[2:]} {fmt_us(r.get('gaps_p999'))}")
    print("  (poll gaps: the lateness that the spacing of the daemon's polls alone gave a deadline at a "
          "random moment, in the same run: the machine's stalls and the loop's own work)")
    for m in MODES:
        r = med[m]
        print(f"  {m[:4]}@45M {fmt_us(r['offset_45'])} {fmt_us(r['p99_45'])} {fmt_us(r['p999_45'])} "
              f"{fmt_us(r['max_45'])} | (45 Mbit/s of 1500 B, {r['n_45']:.0f} frames)")
    print(f"  baseline  {'':9} {fmt_us(max(gap['p99'], tgap['p99']))} "
          f"{fmt_us(max(gap['p999'], tgap['p999']))} {fmt_us(max(gap['max'], tgap['max']))}"
          f" | (noise floor, the worse CPU)")
    a = med["adaptive"]
    if "spin_us" in a:
        how = (f"learned from {a['spin_wakeups']:.0f} timer wake-ups, {a['spin_beyond']:.0f} of them later "
               f"than 1024 us" if "spin_wakeups" in a else "as given")
        print(f"  adaptive's spin at the end of the precision run: {a['spin_us']:.1f} us ({how}; median of rounds)")
    print(f"{'linkemuk' if o.io == 'kernel' else 'linkemud'} CPU s/s (process; + guest idle polling of its CPU):")
    print(f"  {'mode':9} {'idle':>13} {'45 Mbit/s':>13} {'full load':>13}")
    for m in MODES:
        r = med[m]
        print(f"  {m:9} " + " ".join(f"{r['cpu_' + k]:6.3f}+{r['poll_' + k]:5.3f}"
                                      for k in ("idle", "45", "full")))
    a, b = med["adaptive"], med["busy"]
    print("  adaptive/busy CPU: " + ", ".join(
        f"{k} {a['cpu_' + k] / b['cpu_' + k]:.2f}x" for k in ("idle", "45", "full")
        if b['cpu_' + k] > 0) + f"; offset {(a['offset'] - b['offset']) / 1000:+.1f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
