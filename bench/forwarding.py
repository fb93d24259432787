#!/usr/bin/env python3
"""Forwarding rate of linkemud vs dpdk-testpmd (io forward), same run.

Both bridge two net_null ports on one lcore, both directions. net_null
produces frames as fast as they are polled and frees what is sent, so the
forwarded frame rate measures the per-frame cost of each program and
nothing else. linkemud runs a real link model (`delay 1ms loss 1%`, with a
limit large enough that the queue never overflows, so every drop is the
1 % loss). Rounds alternate A/B to spread the machine's drift over both;
the result is the ratio of medians, which is what the README quotes.
Beside it, the lowest and highest of the rounds' own ratios (each
against that round's testpmd): how far one round can be from another on
this machine, so that a difference smaller than that is not read as one.

Each row also shows the emulation error's p99 (send time minus the
model's deadline, from linkemud's own histogram). net_null offers more
than any program forwards, so this is the error AT OVERLOAD: frames wait
for the lcore behind the backlog, and the figure is an upper bound of the
error at the rate the row reaches.

On time: a paced source at these rates needs a CPU of its own
(bench/forwarding_paced.py measures what this machine allows). What
each row does give is "gaps": the lateness that the spacing of the
lcore's polls alone gives a deadline falling at a random moment (p99 and
p99.9, the worse direction; src/plane/poll_gaps.h). A paced input makes
deadlines fall at random moments; below the row's rate a poll carries
fewer frames than at overload, so its polls are no longer apart than
here. So for any paced input up to the row's rate, linkemud's own
lateness is at most these figures, except that after a stall of the
lcore's CPU (in the gaps too) the backlog drains at the rate's spare
capacity, which stretches the stall's share by R/(C - R): 0.37x at
14.88 of 55 Mpps. The bound counts the machine's stalls as they came in
this run: a row "the machine alone" gives the same figure for a busy
loop on the lcore's CPU (src/tools/noisefloor.c) in the same rounds.

Two floors run in the same rounds (bench/holdfwd.c): the same bridge with
no model at all, frames sent at once and frames held 1 ms in a FIFO. The
second is what holding alone costs on this machine (the held mbufs fall
out of the cache); linkemud's delay rows cannot beat it, and the gap
between the two is linkemud's own work per frame.

--frames udp4 runs the same rounds on two net_pcap ports that loop
64-byte UDP/IPv4 frames (bench/udp4_pcap.py), testpmd and the floors
included, by default on the class rows: net_null's frames are all zeros,
not IP, and a class rule on IP fields fails on them at its first field
without a hash probe, the cheapest case there is.

--compare BINARY runs a second linkemud build (e.g. one built from an
older commit) on the same rows in the same rounds, for a before/after
table with a shared baseline.
"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from children import eal_prefix, run_interruptible, running, wait_ready  # noqa: E402
from lcores import lcore_problem, testpmd_lcores  # noqa: E402
import udp4_pcap  # noqa: E402
from linkemu.errors import LinkemuError  # noqa: E402
from linkemu.instruments import noisefloor  # noqa: E402
# limit: 1 ms at the ~20 Mpps one lcore reaches needs ~20k frames; 100k
# leaves room, and with duplicates' headroom the pool (2 x 2 x 100k mbufs)
# still fits the 2 GiB of hugepages scripts/setup.sh reserves.
L = "limit 100000"
HEADLINE_LINK = f"delay 1ms loss 1% {L}"
# A class set of 16 rules of one shape (what a per-flow setup writes); no
# net_null frame matches one, so every frame is checked against all 16.
CLASS16 = " ; ".join(f"class c{k} match proto udp dport {6000 + k} : delay 1ms limit 1000" for k in range(16))
# One row per stage, so each stage's cost shows against the same baseline;
# the last row has every stage on at once.
STAGE_LINKS = [
    "",
    f"delay 1ms {L}",
    HEADLINE_LINK,
    f"delay 1ms 100us noreorder {L}",
    f"delay 1ms 100us {L}",
    f"loss gemodel 1% 10% {L}",
    f"rate 40gbit {L}",
    f"duplicate 1% {L}",
    f"corrupt 1% {L}",
    f"delay 1ms reorder 1% {L}",
    f"delay 1ms {L} ; class ctl match proto tcp port 830 : delay 0",
    f"delay 1ms {L} ; {CLASS16}",
    f"delay 1ms 100us noreorder loss gemodel 1% 10% duplicate 1% corrupt 1% rate 40gbit {L}"
    " ; class ctl match proto tcp port 830 : delay 0",
    f"delay 1ms 100us loss gemodel 1% 10% duplicate 1% corrupt 1% reorder 1% rate 40gbit {L} ; {CLASS16}",
]
EAL_NULL = ["--no-pci", "--in-memory", "--vdev=net_null0", "--vdev=net_null1"]
# The class rows again on frames that are IP (bench/udp4_pcap.py): the
# class sets, and all stages at once with its 16 rules.
# The udp4 frames carry destination ports 5000 .. 5063 in turn, so CLASS16
# (6000 and up) matches none of them: each group's port filter refuses
# them all, the default class's case. CLASS16_HIT puts a quarter of them
# (5000 .. 5015) in 16 classes, one class a frame: those pass the filter
# and pay the key, the hash and the probe, and each class is offered one
# frame of every 64 and merged with the others as frames fall due.
CLASS16_HIT = " ; ".join(f"class h{k} match proto udp dport {5000 + k} : delay 1ms limit 1000" for k in range(16))
CLASS_LINKS = [f"delay 1ms {L}", f"delay 1ms {L} ; class ctl match proto tcp port 830 : delay 0",
               f"delay 1ms {L} ; {CLASS16}", f"delay 1ms {L} ; {CLASS16_HIT}", STAGE_LINKS[-1]]


def eal_pcap(path):
    """Two ports that loop the UDP/IPv4 frames of `path` (net_pcap)."""
    return ["--no-pci", "--in-memory", *(f"--vdev=net_pcap{i},rx_pcap={path},infinite_rx=1" for i in (0, 1))]
PREFIX = eal_prefix("lefwd")


def linkemud_path():
    return os.environ.get("LINKEMUD", os.path.join(REPO, "build", "src", "dataplane", "linkemud"))


def run_linkemud(lcore, seconds, link, binary=None, eal=EAL_NULL):
    with tempfile.NamedTemporaryFile(suffix=".json") as stats:
        cmd = [binary or linkemud_path(), "-l", str(lcore), *eal, "--file-prefix", PREFIX, "--",
               "--a2b", link, "--b2a", link, "--seed", "1", "--stats-file", stats.name]
        with running(cmd, PREFIX, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as p:
            wait_ready(p)
            time.sleep(seconds)
            p.send_signal(signal.SIGINT)
            p.communicate(timeout=30)
        report = json.load(open(stats.name))
    d = report["directions"]
    tx = d["a2b"]["tx"] + d["b2a"]["tx"]
    rx = d["a2b"]["rx"] + d["b2a"]["rx"]
    if not report["conserved"]:
        sys.exit("linkemud did not conserve frames: %r" % report)
    queue = d["a2b"]["dropped"]["queue_full"] + d["b2a"]["dropped"]["queue_full"]
    p99 = max(d[k]["emulation_error_ns"]["p99"] for k in ("a2b", "b2a"))
    # The lateness the spacing of the polls alone gives a deadline at a
    # random moment (poll_gaps.h), worse direction: see "On time" above.
    gaps = [d[k]["poll_gaps"]["lateness_ns"] for k in ("a2b", "b2a")]
    return {"tx_pps": tx / report["uptime_s"], "rx_pps": rx / report["uptime_s"], "error_p99_ns": p99,
            "gap_p99_ns": max(g["p99"] for g in gaps), "gap_p999_ns": max(g["p999"] for g in gaps),
            "queue_full": queue, "loss_frac": (d["a2b"]["dropped"]["loss"] / max(1, d["a2b"]["rx"]))}


def run_noisefloor(lcore, seconds):
    """The machine alone on the lcore's CPU: a busy loop's gaps
    (src/tools/noisefloor.c), as the lateness they would give."""
    try:
        nf = noisefloor.noise_floor(lcore, seconds)
    except LinkemuError as e:
        sys.exit(str(e))
    return {"gap_p99_ns": noisefloor.lateness(nf, 0.99), "gap_p999_ns": noisefloor.lateness(nf, 0.999)}


def holdfwd_path():
    return os.environ.get("HOLDFWD", os.path.join(REPO, "build", "bench", "holdfwd"))


# The floors: no model, frames sent at once, or held for the delay rows' 1 ms.
FLOOR_HOLDS_US = (0, 1000)


def run_holdfwd(lcore, seconds, hold_us, eal=EAL_NULL):
    cmd = [holdfwd_path(), "-l", str(lcore), *eal, "--file-prefix", PREFIX, "--",
           "--hold-us", str(hold_us), "--seconds", str(seconds)]
    with running(cmd, PREFIX, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as p:
        out, _ = p.communicate(timeout=seconds + 60)
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    if p.returncode != 0 or not lines:
        sys.exit(f"holdfwd --hold-us {hold_us} failed (status {p.returncode}):\n" + out[-2000:])
    return json.loads(lines[-1])


def run_testpmd(lcore, seconds, eal=EAL_NULL):
    # testpmd exits on EOF of stdin; feed it a pipe we keep open. It
    # forwards on `lcore`, as linkemud and holdfwd do (bench/lcores.py).
    cmd = ["dpdk-testpmd", *testpmd_lcores(lcore), *eal, "--file-prefix", PREFIX, "--", "--forward-mode=io",
           "--auto-start", "--stats-period", "1"]
    with running(cmd, PREFIX, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                 text=True) as p:
        time.sleep(seconds + 1)
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=30)
    rate = testpmd_rate(out)
    if rate is None:
        sys.exit("testpmd printed no rates:\n" + out[-2000:])
    return {"tx_pps": rate}


def testpmd_rate(out):
    """testpmd's forwarding rate from its --stats-period output, or None
    when it printed no period past its start-up: the mean of its periods
    (each about a second), i.e. frames over the window, as linkemud's rate
    (tx over its uptime) and holdfwd's (over its window) are taken. A
    median of the seconds would drop a second the VM took the CPU from
    testpmd, which the others' figures keep, and flatter the baseline."""
    # One "Tx-pps" line per port per period; sum the two ports of each
    # period and drop the first period (start-up: no rate yet).
    tx = [int(v) for v in re.findall(r"Tx-pps:\s+(\d+)", out)]
    periods = [tx[i] + tx[i + 1] for i in range(0, len(tx) - 1, 2)][1:]
    if not periods:
        return None
    return statistics.fmean(periods)


def main():
    # SIGTERM unwinds like Ctrl-C: the program of the moment is stopped.
    run_interruptible(measure)


def measure():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=5.0, help="per round (default 5)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of each program (default 3)")
    ap.add_argument("--link", action="append",
                    help="link grammar to measure; repeat for several (default: every "
                         "stage alone, then all stages together)")
    ap.add_argument("--quick", action="store_true",
                    help="only the headline link and an unimpaired one, 1 round of 2 s")
    ap.add_argument("--lcore", type=int, default=1, help="lcore that forwards (default 1)")
    ap.add_argument("--json", action="store_true", help="print the result as JSON")
    ap.add_argument("--frames", choices=("zero", "udp4"), default="zero",
                    help="zero: net_null's frames, never written, not IP (default); udp4: 64-byte "
                         "UDP/IPv4 frames looped by net_pcap, so class rules read real headers "
                         "(default links: the class rows)")
    ap.add_argument("--compare", metavar="BINARY",
                    help="also run this linkemud build on every row, same rounds (before/after; "
                         "the two builds take turns going first)")
    a = ap.parse_args()

    if a.quick:
        a.rounds, a.seconds = 1, 2.0
    if a.seconds < 2:
        ap.error("--seconds must be at least 2: testpmd reports once a second, and its first report is its start")
    if a.rounds < 1:
        ap.error("--rounds must be at least 1")
    if problem := lcore_problem(a.lcore):
        ap.error(problem)
    if a.frames == "udp4":
        links = a.link or (CLASS_LINKS[:2] if a.quick else CLASS_LINKS)
    else:
        links = a.link or ([HEADLINE_LINK, ""] if a.quick else STAGE_LINKS)
    with tempfile.TemporaryDirectory(prefix="lefwd") as tmp:
        eal = EAL_NULL
        if a.frames == "udp4":
            udp4_pcap.write(os.path.join(tmp, "udp4.pcap"))
            eal = eal_pcap(os.path.join(tmp, "udp4.pcap"))
        result = run_rounds(a, links, eal)
    report(a, result)


def run_rounds(a, links, eal):
    ours = {link: [] for link in links}
    other = {link: [] for link in links}
    base = []
    floors = {h: [] for h in FLOOR_HOLDS_US}
    machine = []
    for r in range(a.rounds):
        print(f"[round {r + 1}/{a.rounds}] testpmd io ...", file=sys.stderr, flush=True)
        base.append(run_testpmd(a.lcore, a.seconds, eal))
        print(f"[round {r + 1}/{a.rounds}] noisefloor ...", file=sys.stderr, flush=True)
        machine.append(run_noisefloor(a.lcore, a.seconds))
        for h in FLOOR_HOLDS_US:
            print(f"[round {r + 1}/{a.rounds}] holdfwd --hold-us {h} ...", file=sys.stderr, flush=True)
            floors[h].append(run_holdfwd(a.lcore, a.seconds, h, eal))
        for link in links:
            # With --compare the two builds take turns going first: on
            # this VM the second of two back-to-back runs is not a fair
            # copy of the first (rates move by 10-30 % between starts).
            order = [(None, ours), (a.compare, other)] if a.compare else [(None, ours)]
            if r % 2:
                order.reverse()
            for binary, into in order:
                print(f"[round {r + 1}/{a.rounds}] {binary or 'linkemud'} '{link}' ...", file=sys.stderr,
                      flush=True)
                into[link].append(run_linkemud(a.lcore, a.seconds, link, binary, eal))
    m_base = statistics.median(x["tx_pps"] for x in base)

    def summary(runs):
        """A program's rounds: the median rate, its ratio to testpmd's
        median, and the lowest and highest per-round ratio (each against
        that round's testpmd)."""
        m = statistics.median(x["tx_pps"] for x in runs)
        r = [x["tx_pps"] / b["tx_pps"] for x, b in zip(runs, base)]
        return {"tx_pps": m, "ratio": m / m_base, "ratio_range": [min(r), max(r)], "runs": runs}

    def with_error(runs):
        return dict(summary(runs), **{k: statistics.median(x[k] for x in runs)
                                      for k in ("error_p99_ns", "gap_p99_ns", "gap_p999_ns")})

    rows = []
    for link in links:
        row = dict(with_error(ours[link]), link=link, queue_full=sum(x["queue_full"] for x in ours[link]))
        if a.compare:
            row["compare"] = dict(with_error(other[link]), binary=a.compare)
        rows.append(row)
    floor_rows = [dict(summary(floors[h]), hold_us=h, held_max=max(x["held_max"] for x in floors[h]))
                  for h in FLOOR_HOLDS_US]
    machine_row = {k: statistics.median(x[k] for x in machine) for k in ("gap_p99_ns", "gap_p999_ns")}
    return {"rounds": a.rounds, "seconds": a.seconds, "frames": a.frames, "testpmd_tx_pps": m_base,
            "testpmd_runs": base, "floors": floor_rows, "machine": dict(machine_row, runs=machine),
            "linkemud": rows}


def report(a, result):
    m_base = result["testpmd_tx_pps"]
    floor_rows, rows = result["floors"], result["linkemud"]
    if a.json:
        print(json.dumps(result, indent=1))
        return
    cmp = " compare: Mpps  ratio  p99" if a.compare else ""
    print(f"{'Mpps':>8} {'ratio':>7} {'rounds':>13} {'err p99':>9} {'gaps p99/p99.9':>15}{cmp}  program   "
          f"(median of {a.rounds} rounds of {a.seconds:g} s; err p99 at overload; gaps: the lateness the "
          f"polls' spacing gives a deadline at a random moment, at any input rate up to the row's)")
    blank = f"{'':>9} {'':>15}"
    print(f"{m_base / 1e6:8.2f} {1:7.3f} {'':>13} {blank}{' ' * len(cmp)}  testpmd io-forward (baseline; "
          f"{1e9 / m_base:.1f} ns/frame of its lcore)")

    def gaps(r):
        return f"{r['gap_p99_ns'] / 1e3:.1f}/{r['gap_p999_ns'] / 1e3:.0f}us"

    def rng(r):
        return f"{r['ratio_range'][0]:.3f}-{r['ratio_range'][1]:.3f}"

    for f in floor_rows:
        what = ("frames sent at once" if f["hold_us"] == 0 else
                f"frames held {f['hold_us'] / 1000:g} ms in a FIFO, up to {f['held_max']} per direction")
        print(f"{f['tx_pps'] / 1e6:8.2f} {f['ratio']:7.3f} {rng(f):>13} {blank}{' ' * len(cmp)}  holdfwd: no model, "
              f"{what}")
    print(f"{'':>8} {'':>7} {'':>13} {'':>9} {gaps(result['machine']):>15}{' ' * len(cmp)}  the machine alone: a busy loop on the "
          f"lcore's CPU (noisefloor), its gaps as the same lateness")
    for row in rows:
        c = row.get("compare")
        cs = (f" {c['tx_pps'] / 1e6:13.2f} {c['ratio']:6.3f} {c['error_p99_ns'] / 1e3:5.0f}us" if c else "")
        print(f"{row['tx_pps'] / 1e6:8.2f} {row['ratio']:7.3f} {rng(row):>13} {row['error_p99_ns'] / 1e3:7.0f}us"
              f" {gaps(row):>15}{cs}"
              f"  linkemud '{row['link'][:90]}'")
        if row["queue_full"]:
            print(f"  note: {row['queue_full']} queue_full drops; raise limit for a pure cost figure")


if __name__ == "__main__":
    main()
