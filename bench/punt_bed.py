"""Frames per second of 64-byte frames through linkemud on a bed, with
every IPv4 frame of a2b punted to punt_echo over a FIFO or shared memory,
against the same run with nothing punted (the baseline, same invocation).
An owdprobe sender at full speed; the receiver's rate and one-way delay.

    flock /tmp/linkemu-quiet.lock .venv/bin/python bench/punt_bed.py [--bed lw] [--count N]

Needs root and a built tree (make build). Prints one line per path and
the ratios."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from children import run_interruptible  # noqa: E402
from linkemu.bed import testbed  # noqa: E402
from linkemu.instruments.owd import ProbeSpec, probe  # noqa: E402

LINKEMU = str(ROOT / ".venv" / "bin" / "linkemu")
PATHS = {
    "not punted": "; class all match ether ipv4 :",
    "punt fifo": "; class all match ether ipv4 : punt fifo /tmp/linkemu-punt-bed",
    "punt shm": "; class all match ether ipv4 : punt shm linkemu-punt-bed",
}


def one(bed, a2b: str, count: int) -> dict:
    cp = subprocess.run([LINKEMU, "run", "--bed", bed.name, "--a2b", a2b, "--b2a", "",
                         "--punt-echo", "--detach"], capture_output=True, text=True)
    if cp.returncode != 0:
        sys.exit(f"punt_bed: linkemu run failed ({cp.returncode}):\n{cp.stderr[-800:]}")
    try:
        # ip_len 50: a 64-byte frame with its FCS
        r = probe(bed, ProbeSpec(ip_len=50, pps=None, count=count, port=9500, idle_s=0.5))
    finally:
        # Also on Ctrl-C or SIGTERM (run_interruptible): a detached
        # linkemud left on the bed would take a CPU until someone stops it.
        cp = subprocess.run([LINKEMU, "stop", "--bed", bed.name, "--json"], capture_output=True,
                            text=True)
    if cp.returncode != 0:
        sys.exit(f"punt_bed: linkemu stop failed ({cp.returncode}):\n{cp.stderr[-800:]}")
    a2b = json.loads(cp.stdout)["directions"]["a2b"]
    rcv = r["receiver"]
    # achieved_pps, not sent / send_span_s: the span ends at the last send
    # call's start, so the last batch's frames are not in it (owdprobe.c,
    # achieved_rate()); counting them overstated a batched (--max) run.
    return {"sent_pps": r["sender"]["achieved_pps"],
            "rx_pps": rcv["rx_pps"], "received": rcv["received"], "lost": rcv["lost"],
            "owd_p50_us": rcv["delay_ns"].get("p50", 0) / 1e3,
            "drops": {k: v for k, v in a2b["dropped"].items() if v},
            "missed": a2b["before_rx"]["total"]}


def frame_count(text: str) -> int:
    """An argparse type: a whole number of frames, at least 1."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number of frames above 0")
    return n


def ratio(x: float, base: float) -> str:
    """x / base, or a word when the baseline delivered nothing."""
    return f"{x / base:4.2f}x" if base > 0 else "  n/a"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bed", default="lw")
    ap.add_argument("--count", type=frame_count, default=200_000)
    a = ap.parse_args()
    return run_interruptible(lambda: measure(a))


def measure(a) -> int:
    bed = testbed.bed_for(a.bed)
    if not testbed.status(bed)["up"]:
        testbed.up(bed)
    res = {name: one(bed, text, a.count) for name, text in PATHS.items()}
    base = res["not punted"]["rx_pps"]
    for name, r in res.items():
        print(f"  {name:11s} offered {r['sent_pps'] / 1e3:7.1f} kpps  delivered {r['rx_pps'] / 1e3:7.1f} kpps "
              f"({ratio(r['rx_pps'], base)})  lost {r['lost']:6d}  OWD p50 {r['owd_p50_us']:7.1f} us"
              f"  (linkemud: missed at its port {r['missed']}, dropped {r['drops'] or 0})")
    f, s = res["punt fifo"]["rx_pps"], res["punt shm"]["rx_pps"]
    print(f"  shm delivers {ratio(s, f).strip()} the FIFO's rate")
    if base <= 0:
        print("  the baseline delivered nothing: no ratio means anything", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
