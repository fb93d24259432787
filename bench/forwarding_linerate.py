#!/usr/bin/env python3
"""Forwarding on time at line rate: each row's emulation error with the
input paced to 14.88 Mpps and above, the source inside linkemud's poll.

Issue 12 counts a row's rate only where its frames also leave on time at
that rate, with the input paced to it. forwarding.py measures on net_null,
which offers more than any program forwards (an overload figure);
forwarding_paced.py paces with pacegen, a DPDK process of its own, which
on these 2-vCPU machines shares the other CPU with the kernel and tops
out near 4 Mpps. Here linkemud's own --paced-source feeds each net_null
port (no-rx=1) from an RX callback: a wire that delivers a 64-byte frame
every 1/rate seconds into a receive ring of --paced-ring descriptors
(default 4096, a NIC ring's usual maximum, as forwarding_paced.py's
memif rings). It costs the lcore what net_null's receive costs plus one
histogram record a frame, so the lcore's budget is no larger than behind
a NIC (src/dataplane/paced_source.h).

Per rung (a total rate, half into each port), after a warm-up and a
`reset stats` through the control socket, over the measured window:
  - error: linkemud's emulation error (send time minus the model's
    deadline; the worse direction), as everywhere else;
  - wait: how long each frame waited in the ring before the poll that
    received it (linkemud stamps a frame when it receives it, so a paced
    sender sees wait + error per frame);
  - gaps: the lateness the spacing of the lcore's polls alone gives a
    deadline at a random moment (src/plane/poll_gaps.h);
  - missed: frames that found the ring full.
A rung is carried when nothing was missed, nothing dropped but by design
(loss) and the books balance; it is on time when, besides, the error's
p99 is at most --bound-us (default 10 us, as forwarding_paced.py). A
row's two figures are the medians over rounds of the highest rung carried
and the highest on time, each climbing from the lowest rung until its
first failure (rungs climb until both failed, or through every rung with
--full-ladder).
The row "the machine alone" is noisefloor's busy loop on the lcore's CPU
in the same rounds: the machine's own stalls, read as lateness.

A stall of the lcore's CPU longer than the ring lasts (4096 frames: 0.55
ms at 7.44 Mpps a port), or a few shorter ones close together, loses
frames behind any forwarder; these VMs have such stalls now and then
(docs/performance.md, "The 4 ms stalls"). A rung whose ring overflowed
although it was not full the rest of the time (the wait's p99 under half
the ring's time; an overload fills it for good) is run again, up to
--retries times, and the reason says "in stalls" when it stays.
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from children import eal_prefix, running, wait_ready  # noqa: E402
from delay_line_1s import ask as control  # noqa: E402
from forwarding import linkemud_path, run_noisefloor  # noqa: E402
from forwarding_paced import (DESIGNED, ROWS, add_isolate_argument, keep_off, machine, median_rung, refuse_bad_words,  # noqa: E402
                              run_isolated_if_asked)
from linkemu.bed import isolation  # noqa: E402

LADDER = [7.44e6, 10e6, 14.88e6, 20e6, 29.76e6]  # total; 14.88: 10 GbE of 64-byte frames one way, 29.76: both ways
PREFIX = eal_prefix("lelr")


def worse(d, f):
    return max(f(d[x]) for x in ("a2b", "b2a"))


def run_rung(a, link, rate):
    """linkemud with a paced source of rate/2 into each port; the window's
    figures and the whole run's books."""
    ctl = tempfile.mktemp(prefix="lelr", suffix=".ctl")
    with tempfile.NamedTemporaryFile(suffix=".json") as stats:
        cmd = [linkemud_path(), "-l", str(a.lcore), "--no-pci", "--in-memory", "--file-prefix", PREFIX,
               "--vdev=net_null0,no-rx=1", "--vdev=net_null1,no-rx=1", "--",
               "--a2b", link, "--b2a", link, "--seed", "1", "--control", ctl, "--stats-file", stats.name,
               "--paced-source", f"{rate / 2:.0f}", "--paced-ring", str(a.ring)]
        try:
            with running(cmd, PREFIX, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as p:
                wait_ready(p)
                time.sleep(a.warmup)
                control(ctl, "reset stats")
                first = control(ctl, "stats")["stats"]
                time.sleep(a.seconds)
                window = control(ctl, "stats")["stats"]
                p.send_signal(signal.SIGINT)
                out = p.communicate(timeout=30)[0]
                if p.returncode != 0:
                    sys.exit(f"linkemud ended with {p.returncode}:\n{out}")
            final = json.load(open(stats.name))
        finally:
            if os.path.exists(ctl):
                os.unlink(ctl)
    d = window["directions"]
    bad = {f"{x}_{k}": v for x in ("a2b", "b2a") for k, v in d[x]["dropped"].items() if v and k not in DESIGNED}
    rx_pps, seconds = window_rate(first, window)
    return {
        "rx_pps": rx_pps,
        "missed": sum(d[x]["paced_source"]["missed"] for x in ("a2b", "b2a")),
        "bad_drops": bad, "conserved": final["conserved"] and window["conserved"],
        **{f"err_{q}_ns": worse(d, lambda x, q=q: x["emulation_error_ns"][q]) for q in ("p50", "p99", "p999", "max")},
        **{f"wait_{q}_ns": worse(d, lambda x, q=q: x["paced_source"]["wait_ns"][q]) for q in ("p99", "p999", "max")},
        **{f"gaps_{q}_ns": worse(d, lambda x, q=q: x["poll_gaps"]["lateness_ns"][q]) for q in ("p99", "p999")},
        "longest_gap_ns": worse(d, lambda x: x["poll_gaps"]["over_1us"]["max"]),
        "window_s": seconds,
    }


def window_rate(first, window):
    """(frames received per second, seconds) over the window, from two
    `stats` reports taken after the `reset stats`: the frames counted
    between the two, over the time between them. The reset's own moment
    is not reported, and the first report comes a control round trip
    after it (ms on a busy machine): its frames are not the window's."""
    seconds = (window["time_ns"] - first["time_ns"]) / 1e9
    rx = lambda r: sum(r["directions"][x]["rx"] for x in ("a2b", "b2a"))  # noqa: E731
    return (rx(window) - rx(first)) / seconds, seconds


def verdict(r, rate, bound_ns, ring):
    """(why the rung was not carried, why it was not on time): lists of
    reasons. Frames missed in stalls of the machine are said to be."""
    lost = []
    if r["rx_pps"] < 0.99 * rate:
        lost.append(f"received {r['rx_pps'] / 1e6:.2f} Mpps")
    if r["missed"]:
        # Stalls: the ring overflowed while it was not full the rest of
        # the time (frames of an overload wait a ring's time at p99 too):
        # one stall longer than the ring, or several close together whose
        # backlogs added up before the drain ended.
        ring_ns = ring / (rate / 2) * 1e9
        stall = r["wait_p99_ns"] < ring_ns / 2
        lost.append(f"{r['missed']} missed" +
                    (f" (in stalls, the longest {r['longest_gap_ns'] / 1e6:.2f} ms)" if stall else ""))
    if r["bad_drops"]:
        lost.append(f"drops {r['bad_drops']}")
    if not r["conserved"]:
        lost.append("not conserved")
    late = [f"error p99 {r['err_p99_ns'] / 1e3:.1f} us"] if r["err_p99_ns"] > bound_ns else []
    return lost, late


def stalled_only(r):
    """Whether all the rung lost is what stalls of the machine explain."""
    return r["lost"] and all("in stalls" in w for w in r["lost"])


def highest(ladder, rs, key):
    """The highest rung reached from the bottom with no failure of this kind."""
    top = 0.0
    for rate, r in zip(ladder, rs):
        if r[key]:
            break
        top = rate
    return top


def row_summary(name, link, carried, on_time, runs):
    """A row's two figures: the medians over rounds of the highest rung
    carried and on time, each a rung (median_rung)."""
    return {"name": name, "link": link, "carried_per_round_pps": carried, "carried_pps": median_rung(carried),
            "on_time_per_round_pps": on_time, "on_time_pps": median_rung(on_time), "runs": runs}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=2.0, help="measured window per rung (default 2)")
    ap.add_argument("--warmup", type=float, default=0.5, help="before the window (default 0.5)")
    ap.add_argument("--bound-us", type=float, default=10.0, help="emulation-error p99 bound (default 10)")
    ap.add_argument("--ladder", help="comma-separated total Mpps (default 7.44,10,14.88,20,29.76)")
    ap.add_argument("--ring", type=int, default=4096, help="the paced source's receive ring (default 4096)")
    ap.add_argument("--row", action="append", help="only rows whose name contains this")
    ap.add_argument("--full-ladder", action="store_true", help="measure every rung, past a failure too")
    ap.add_argument("--quick", action="store_true", help="1 round, 1 s windows")
    ap.add_argument("--retries", type=int, default=2,
                    help="a rung that lost frames only in stalls of the machine (the ring overflowed but was not "
                         "full otherwise) is run again, at most this many times (default 2)")
    ap.add_argument("--lcore", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    add_isolate_argument(ap)
    a = ap.parse_args()
    if a.quick:
        a.rounds, a.seconds = 1, 1.0
    if a.ring < 1:
        ap.error("--ring must be at least 1")
    refuse_bad_words(ap, a)
    keep_off(a.lcore)
    run_isolated_if_asked(a, lambda a, moved: report(a, measure(a, moved)))


def measure(a, moved):
    ladder = [float(x) * 1e6 for x in a.ladder.split(",")] if a.ladder else LADDER
    rows = [r for r in ROWS if not a.row or any(s in r[0] for s in a.row)]
    bound = a.bound_us * 1e3
    runs = {name: {} for name, _ in rows}
    carried = {name: [] for name, _ in rows}
    on_time = {name: [] for name, _ in rows}
    floor = []
    before = machine()
    for rnd in range(a.rounds):
        print(f"[round {rnd + 1}/{a.rounds}] the machine alone ...", file=sys.stderr, flush=True)
        floor.append(run_noisefloor(a.lcore, a.seconds))
        for name, link in rows:
            measured = []
            for rate in ladder:
                print(f"[round {rnd + 1}/{a.rounds}] {name} at {rate / 1e6:g} Mpps ...", file=sys.stderr, flush=True)
                for attempt in range(a.retries + 1):
                    r = run_rung(a, link, rate)
                    r["lost"], late = verdict(r, rate, bound, a.ring)
                    r["fail"] = r["lost"] + late
                    r["attempts"] = attempt + 1
                    if not stalled_only(r) or attempt == a.retries:
                        break
                    print(f"    {'; '.join(r['lost'])}: again", file=sys.stderr, flush=True)
                runs[name].setdefault(f"{rate / 1e6:g}", []).append(r)
                measured.append(r)
                if r["fail"]:
                    print(f"    fails: {'; '.join(r['fail'])}", file=sys.stderr, flush=True)
                # Lost frames settle both figures: no higher rung counts.
                if not a.full_ladder and r["lost"]:
                    break
            carried[name].append(highest(ladder, measured, "lost"))
            on_time[name].append(highest(ladder, measured, "fail"))
    out = [row_summary(name, link, carried[name], on_time[name], runs[name]) for name, link in rows]
    return {"rounds": a.rounds, "seconds": a.seconds, "bound_ns": bound, "ring": a.ring, "ladder": ladder,
            "machine_before": before, "machine_after": machine(),
            "isolated": isolation.describe(moved) if moved else None,
            "machine_alone": {q: statistics.median(f[f"gap_{q}_ns"] for f in floor) for q in ("p99", "p999")},
            "rows": out}


def report(a, res):
    if a.json:
        print(json.dumps(res, indent=1))
        return
    us = lambda v: f"{v / 1e3:7.1f}u"  # noqa: E731
    print(f"paced source inside linkemud's poll (--paced-source), half into each net_null port, 64-byte frames, "
          f"ring {res['ring']}; median of {res['rounds']} rounds of {res['seconds']:g} s; "
          f"carried = nothing missed or dropped; on time = carried and error p99 <= {res['bound_ns'] / 1e3:g} us")
    print(f"machine at start: {res['machine_before']}; at end: {res['machine_after']}")
    print(f"lcore's CPU: {'isolated, ' + res['isolated'] + ' moved off it' if res['isolated'] else 'shared with every thread the bench did not start (--isolate-lcore to move them)'}")
    m = res["machine_alone"]
    print(f"the machine alone (noisefloor on the lcore's CPU): gaps p99 {m['p99'] / 1e3:.1f} us, "
          f"p99.9 {m['p999'] / 1e3:.1f} us")
    print("every rung measured (medians over rounds; err = linkemud's emulation error, wait = in the ring "
          "before the poll, gaps = the polls' spacing alone):")
    print(f"{'row':<22} {'Mpps':>6} {'err p50':>8} {'err p99':>8} {'p99.9':>8} {'max':>9} {'wait p99':>8} "
          f"{'p99.9':>8} {'gaps p99':>8} {'p99.9':>8} {'missed':>7} on time")
    for o in res["rows"]:
        for rate, rs in o["runs"].items():
            md = lambda k: statistics.median(r[k] for r in rs)  # noqa: E731
            print(f"{o['name'][:22]:<22} {float(rate):6.2f} {us(md('err_p50_ns'))} {us(md('err_p99_ns'))} "
                  f"{us(md('err_p999_ns'))} {us(md('err_max_ns')):>9} {us(md('wait_p99_ns'))} "
                  f"{us(md('wait_p999_ns'))} {us(md('gaps_p99_ns'))} {us(md('gaps_p999_ns'))} "
                  f"{md('missed'):7.0f} {sum(not r['fail'] for r in rs)}/{len(rs)}")
    print(f"{'carried':>8} {'on time':>8}  Mpps, row (rounds' figures carried / on time; what failed first above)")
    for o in res["rows"]:
        first = lambda key, top: next(("; ".join(r[key]) for rate, rs in o["runs"].items()  # noqa: E731
                                       if float(rate) * 1e6 > top for r in rs if r[key]), "-")
        rounds = lambda k: ",".join(f"{b / 1e6:g}" for b in o[k])  # noqa: E731
        print(f"{o['carried_pps'] / 1e6:8.2f} {o['on_time_pps'] / 1e6:8.2f}  {o['name']} "
              f"({rounds('carried_per_round_pps')} / {rounds('on_time_per_round_pps')}; "
              f"{first('lost', o['carried_pps'])[:50]} / {first('fail', o['on_time_pps'])[:50]})")


if __name__ == "__main__":
    main()
