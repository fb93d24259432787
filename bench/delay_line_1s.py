#!/usr/bin/env python3
"""A delay line that holds a second at 10 GbE (issue 12, part 3).

linkemud on net_null ports, one lcore: port 0 offers 64-byte frames as
fast as the lcore polls, port 1 takes what a2b sends and offers nothing
(no-rx), so the lcore works for one direction only. The link is
`delay 1s limit 14880000`: a second at 14.88 Mpps (64-byte frames at
10 GbE). The limit paces the line: a frame is admitted only while fewer
than 14.88 M are held, so what it sustains cannot exceed 14.88 Mpps, and
what the source offers beyond is dropped at admission (queue_full,
counted). net_null is not paced: the lcore receives and sends on the
same core, so the rate this machine's lcore sustains is what the row
reports, with the emulation error at that rate.

Sampled every 0.25 s through the control socket and /proc: frames held
(the line's in_flight), the compact store's slots in use, hugepage memory
(HugetlbPages) and the rest of the process (VmRSS); the rate is frames
sent per second over the last seconds, once the line is full. The same
link with --no-compact (every held frame in its 2 KiB+ mbuf, as before)
is asked for too: it cannot start, and says how much it would need.

Then `delay 4s` with the same limit: long enough for the lcore to fill
all 14.88 M frames at the rate it admits here, for the memory of a full
line (the store and the pools are allocated at start, so the figure is
the same at any occupancy but for the delay line's ring, which the first
pass through touches).
"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from children import eal_prefix, run_interruptible, running, wait_ready  # noqa: E402
LINK = os.environ.get("DL1S_LINK", "delay 1s limit 14880000")
# The same limit with a delay long enough for this lcore to fill it: the
# memory of 1.49 x 10^7 frames held, whatever rate the lcore reaches.
FULL_LINK = "delay 4s limit 14880000"
PREFIX = eal_prefix("ledl1s")
EAL = ["--no-pci", "--in-memory", "--vdev=net_null0", "--vdev=net_null1,no-rx=1", "--log-level=lib.eal:error",
       "--file-prefix", PREFIX]


def linkemud_path():
    return os.environ.get("LINKEMUD", os.path.join(REPO, "build", "src", "dataplane", "linkemud"))


def proc_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        m = re.search(rf"^{field}:\s+(\d+) kB", f.read(), re.M)
    return int(m.group(1)) if m else 0


def ask(sock_path, line):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(sock_path)
    s.sendall((line + "\n").encode())
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = s.recv(1 << 16)
        if not chunk:
            break
        buf += chunk
    s.close()
    return json.loads(buf)


def before_figure(lcore, extra):
    """What the same link needs with every held frame in an mbuf."""
    p = subprocess.run([linkemud_path(), "-l", str(lcore), *EAL, "--", "--a2b", LINK, "--no-compact",
                        "--no-control", *extra], capture_output=True, text=True, timeout=120)
    m = re.search(r"frames need (\d+) MiB of hugepage memory \(mbuf pool: (\d+) mbufs", p.stderr)
    if p.returncode == 0 or not m:
        return None, (p.stderr or p.stdout).strip()[-300:]
    return {"mib": int(m.group(1)), "mbuf_bytes": int(m.group(1)) * 1048576 / int(m.group(2))}, None


def run(lcore, seconds, extra, link=LINK):
    tmp = tempfile.mkdtemp(prefix="linkemu-dl1s-")
    sock = os.path.join(tmp, "ctl.sock")
    stats = os.path.join(tmp, "final.json")
    cmd = [linkemud_path(), "-l", str(lcore), *EAL, "--", "--a2b", link, "--b2a", "", "--seed", "1",
           "--control", sock, "--stats-file", stats, *extra]
    try:
        with running(cmd, PREFIX, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as p:
            wait_ready(p)
            samples = []
            t0 = time.monotonic()
            reset_done = False
            while time.monotonic() - t0 < seconds:
                time.sleep(0.25)
                st = ask(sock, "stats")["stats"]
                a = st["directions"]["a2b"]
                samples.append({
                    "t": time.monotonic() - t0, "time_ns": st["time_ns"], "tx": a["tx"], "rx": a["rx"],
                    "held": a["in_flight"], "slots": st.get("compact", {}).get("a2b", {}).get("in_use", 0),
                    "huge_kib": proc_kib(p.pid, "HugetlbPages"), "rss_kib": proc_kib(p.pid, "VmRSS"),
                    "since_reset": reset_done, "error_p99_ns": a["emulation_error_ns"]["p99"],
                })
                # The error histogram from here on: the line is full and
                # sending (the samples' reports; the final one is the run's).
                if not reset_done and samples[-1]["t"] >= 1.5:
                    ask(sock, "reset stats")
                    reset_done = True
            hwm = proc_kib(p.pid, "VmHWM")
            p.send_signal(signal.SIGINT)
            p.communicate(timeout=60)
        final = json.load(open(stats))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    rate, error_p99 = sustained(samples, final)
    peak = max(samples, key=lambda s: s["held"])
    a = final["directions"]["a2b"]
    return {
        "frames_held_peak": peak["held"], "compact_slots_at_peak": peak["slots"],
        "hugepage_mib": max(s["huge_kib"] for s in samples) / 1024,
        "rss_peak_mib": hwm / 1024,
        "total_mib": max(s["huge_kib"] for s in samples) / 1024 + hwm / 1024,
        "sustained_pps": rate,
        "error_p99_ns": error_p99,
        "queue_full": a["dropped"].get("queue_full", 0),
        "compact": final.get("compact", {}).get("a2b"),
        "conserved": final["conserved"], "samples": samples,
    }


def sustained(samples, final):
    """(frames sent per second, emulation error p99) once the line is full
    and sending: over the samples taken after the `reset stats` and from
    2 s on, whose counters all start at the reset (one taken before it
    counts from the start: a rate across the two is meaningless); the
    error from the last of them, the histogram since the reset. The final
    report (--stats-file) is the whole run's, filling and all; it is the
    fallback only when no sample followed the reset."""
    steady = [s for s in samples if s["t"] >= 2.0 and s["since_reset"]]
    rate = ((steady[-1]["tx"] - steady[0]["tx"]) / ((steady[-1]["time_ns"] - steady[0]["time_ns"]) / 1e9)
            if len(steady) > 1 else 0.0)
    after = [s for s in samples if s["since_reset"]]
    p99 = after[-1]["error_p99_ns"] if after else final["directions"]["a2b"]["emulation_error_ns"]["p99"]
    return rate, p99


def main():
    # SIGTERM unwinds like Ctrl-C: the linkemud of the moment is stopped.
    run_interruptible(measure)


def measure():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=5.0, help="run length (default 5; the line fills in 1)")
    ap.add_argument("--lcore", type=int, default=1)
    ap.add_argument("--fill-seconds", type=float, default=5.5,
                    help=f"run '{FULL_LINK}' this long to fill the limit (default 5.5; 0: skip)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("extra", nargs="*", help="more linkemud options (after --)")
    a = ap.parse_args()
    need_before, why = before_figure(a.lcore, a.extra)
    r = run(a.lcore, a.seconds, a.extra)
    r["before_mib"] = need_before
    full = run(a.lcore, a.fill_seconds, a.extra, FULL_LINK) if a.fill_seconds > 0 else None
    r["full"] = full
    if a.json:
        print(json.dumps(r, indent=1))
        return
    print(f"link '{LINK}' on net_null, one lcore, one direction, {a.seconds:g} s")
    print(f"  frames held (peak)      {r['frames_held_peak']:>12,}   ({r['compact_slots_at_peak']:,} in compact slots)")
    print(f"  memory                  {r['total_mib']:>9,.0f} MiB   (hugepages {r['hugepage_mib']:,.0f} MiB + "
          f"process {r['rss_peak_mib']:,.0f} MiB peak RSS)")
    if need_before:
        one = 14_880_000 * need_before["mbuf_bytes"] / 1048576
        print(f"  with mbufs (--no-compact): 14.88 M held frames alone take {one:,.0f} MiB "
              f"({need_before['mbuf_bytes']:,.0f} B per mbuf), {one / max(1, r['total_mib']):.0f}x; "
              f"its pool for these limits ({need_before['mib']:,} MiB) does not start here")
    else:
        print(f"  with mbufs (--no-compact): {why}")
    print(f"  sustained               {r['sustained_pps'] / 1e6:>9.2f} Mpps (goal 14.88), emulation error p99 "
          f"{r['error_p99_ns'] / 1e6:.1f} ms at that rate; {r['queue_full']:,} frames offered beyond the limit")
    if full:
        print(f"link '{FULL_LINK}' (the same limit, filled at the rate this lcore admits), {a.fill_seconds:g} s")
        print(f"  frames held (peak)      {full['frames_held_peak']:>12,}   ({full['compact_slots_at_peak']:,} in "
              f"compact slots)")
        print(f"  memory                  {full['total_mib']:>9,.0f} MiB   (hugepages {full['hugepage_mib']:,.0f} MiB + "
              f"process {full['rss_peak_mib']:,.0f} MiB peak RSS): "
              f"{full['total_mib'] * 1048576 / max(1, full['frames_held_peak']):.0f} B per frame held")
    if not r["conserved"] or (full and not full["conserved"]):
        print("  WARNING: frames not conserved")


if __name__ == "__main__":
    main()
