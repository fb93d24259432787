#!/usr/bin/env python3
"""Forwarding on time: the highest paced rate each row carries with no drop
and an emulation-error p99 under a bound, against testpmd in the same run.

forwarding.py measures on net_null, which offers more than any program
forwards: its error p99 is an overload figure. Here the frames come from
pacegen (bench/pacegen.c), a DPDK process on another CPU than the
forwarding lcore's (the lowest other: CPU 0 at the default --lcore 1)
that sends 64-byte UDP
frames at a set rate (half into each port, bursts of 32 on a TSC
schedule) over two memif ports, and counts and frees what comes back.
linkemud (lcore on --lcore, default CPU 1) attaches to them as a memif client, both
directions, exactly as it would to two NICs. A rung of the rate ladder
passes when, over the measured window (after a warm-up; linkemud's
counters reset at its start through the control socket):

  - the source kept its schedule (sent >= 99 % of the rate asked) and no
    frame was refused by a full port ring (the program kept up);
  - linkemud dropped nothing but what the model drops by design (`loss`;
    no queue_full, no RX miss, no mbuf shortage), and every frame pacegen
    sent came back to it, less those (whole run, counted at both ends);
  - the emulation error's p99 (send time minus the model's deadline,
    linkemud's own histogram, the worse direction) is under --bound
    (default 10 us: a few passes of the lcore's loop over a full burst of
    32 frames, i.e. the batching any burst-mode forwarder has; two orders
    of magnitude under the 1 ms delay the rows emulate, and under the
    jitter the reordering rows add).

testpmd io-forward gets the same ladder on the same kind of ports, with
the same drop criteria (it has no model, so no error bound; pacegen's
one-way time through it is shown instead). Each row's claimed rate is the
median over rounds of the highest rung passed (rungs climb until the first
failure); its p99/p99.9 are the medians of the rounds that measured that
rung. pacegen's own precision (each burst's lateness against its
schedule) is reported beside, so that the source's error is not taken for
the emulator's.
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from delay_line_1s import ask as control  # noqa: E402
from forwarding import CLASS16, L, REPO, linkemud_path  # noqa: E402

sys.path.insert(0, os.path.join(REPO, "python"))
from linkemu.bed import isolation  # noqa: E402
from children import run_interruptible, stop, wait_ready  # noqa: E402
from lcores import lcore_problem, other_cpu, testpmd_lcores  # noqa: E402
from linkemu.bed.testbed import remove_dpdk_leftovers  # noqa: E402

ROWS = [
    ("unimpaired", ""),
    ("delay 1ms", f"delay 1ms {L}"),
    ("delay 1ms 100us", f"delay 1ms 100us {L}"),
    ("delay 1ms reorder 1%", f"delay 1ms reorder 1% {L}"),
    ("16 class rules", f"delay 1ms {L} ; {CLASS16}"),
    ("all stages", f"delay 1ms 100us loss gemodel 1% 10% duplicate 1% corrupt 1% reorder 1% rate 40gbit {L}"
                   f" ; {CLASS16}"),
]
LADDER = [1e6, 2e6, 4e6, 7e6, 10e6, 14.88e6]
# Model drops by design: not failures. ("shutdown": frames held at exit.)
DESIGNED = {"loss", "shutdown"}


def keep_off(lcore):
    """Runs this script, and so every program it starts, on every CPU but
    the forwarding lcore's. A process the scheduler puts on that CPU
    preempts the lcore until it sleeps or the tick ends (up to 4 ms), and
    held frames fall due meanwhile. EAL still places each program's lcores
    where its -l says (sched_setaffinity may widen an inherited mask), and
    its control threads (interrupt, telemetry) on the CPUs it started on
    minus its lcores, or all of those when none is left: pacegen's (lcore
    0), started on all CPUs, would land on linkemud's CPU."""
    cpus = os.sched_getaffinity(0) - {lcore}
    if cpus:
        os.sched_setaffinity(0, cpus)


def pacegen_path():
    return os.environ.get("PACEGEN", os.path.join(REPO, "build", "bench", "pacegen"))


def cpu_busy_s():
    """CPU seconds the whole machine spent busy (all CPUs), from /proc/stat."""
    v = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    hz = os.sysconf("SC_CLK_TCK")
    return (sum(v[:8]) - v[3] - v[4]) / hz  # user nice system (idle iowait) irq softirq steal


def proc_cpu_s(pid):
    try:
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


class Step:
    """One rung: pacegen (memif servers) + the program under test (clients)."""
    n = 0

    def __init__(self, rate, seconds, warmup, burst, rsize, lcore):
        Step.n += 1
        self.t0, self.busy0, self.self0 = time.monotonic(), cpu_busy_s(), sum(os.times()[:4])
        tag = f"{os.getpid()}-{Step.n}"
        self.prefix = f"pgh{tag}"
        self.client_prefix = f"pgc{tag}"  # the program under test's
        self.sock = [f"/tmp/pgh-{tag}.{i}.sock" for i in range(2)]
        self.ctl = f"/tmp/pgh-{tag}.ctl"
        self.gen = subprocess.Popen(
            [pacegen_path(), "-l", str(other_cpu(lcore)), "--in-memory", "--no-pci", "--file-prefix", self.prefix,
             *[f"--vdev=net_memif{i},role=server,socket={s},rsize={rsize}" for i, s in enumerate(self.sock)],
             "--", "--rate", str(rate), "--seconds", str(seconds), "--warmup", str(warmup),
             "--burst", str(burst)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        # Every program of the step, stopped by close() whatever happens.
        self.procs = [self.gen]
        self.rsize = rsize
        try:
            self.wait_line("pacegen: waiting")
        except BaseException:
            self.close()
            raise

    def client_vdevs(self):
        """EAL options of the program under test: the ports, its own prefix."""
        return ["--file-prefix", self.client_prefix,
                *[f"--vdev=net_memif{i},role=client,socket={s},rsize={self.rsize}" for i, s in enumerate(self.sock)]]

    def wait_line(self, prefix):
        for line in self.gen.stdout:
            if line.startswith(prefix):
                return
        sys.exit(f"pacegen ended before '{prefix}'")

    def others(self, pids):
        """CPUs' worth of work by processes other than this step's (read
        just before they stop): another session running meanwhile."""
        ours = sum(proc_cpu_s(p) for p in pids) + sum(os.times()[:4]) - self.self0
        self.contention = max(0.0, cpu_busy_s() - self.busy0 - ours) / (time.monotonic() - self.t0)

    def result(self):
        """pacegen's JSON line (printed once it has drained the ports and
        stopped polling them: the client may go then)."""
        for line in self.gen.stdout:
            if line.startswith("{"):
                self.res = json.loads(line)
                return self.res
        sys.exit("pacegen printed no result")

    def finish(self):
        self.gen.send_signal(signal.SIGINT)
        self.gen.communicate(timeout=30)
        self.close()
        return self.res

    def start(self, argv, **kw):
        """A program under test, stopped by close() with the source."""
        p = subprocess.Popen(argv, **kw)
        self.procs.append(p)
        return p

    def close(self):
        """Stops what still runs (a bench stopped by SIGTERM or Ctrl-C, a
        failed step: a busy-polling linkemud left behind would take a CPU
        until someone killed it) and removes the step's files. Safe to
        call more than once."""
        for p in self.procs:
            stop(p)
        for f in (*self.sock, self.ctl, self.ctl + ".json"):
            if os.path.exists(f):
                os.unlink(f)
        # EAL leaves its runtime directory even with --in-memory.
        remove_dpdk_leftovers(self.prefix)
        remove_dpdk_leftovers(self.client_prefix)


def run_linkemud(step, link, lcore):
    stats_file = step.ctl + ".json"
    p = step.start(
        [linkemud_path(), "-l", str(lcore), "--no-pci", "--in-memory", *step.client_vdevs(), "--",
         "--a2b", link, "--b2a", link, "--seed", "1", "--control", step.ctl, "--stats-file", stats_file],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wait_ready(p)
    step.wait_line("pacegen: measuring")
    control(step.ctl, "reset stats")
    step.wait_line("pacegen: done")
    window = control(step.ctl, "stats")["stats"]
    step.result()  # the delay lines have emptied into pacegen
    step.others([p.pid, step.gen.pid])
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=30)
    final = json.load(open(stats_file))
    os.unlink(stats_file)
    gen = step.finish()
    d, f = window["directions"], final["directions"]
    bad = {k: v for x in ("a2b", "b2a") for k, v in d[x]["dropped"].items() if v and k not in DESIGNED}
    bad.update({f"{x}_{k}": v for x in ("a2b", "b2a") for k, v in d[x]["before_rx"].items()
                if v and k in ("imissed", "ierrors", "rx_nombuf")})
    # Whole run, both ends: pacegen sent = linkemud received; linkemud sent = pacegen received.
    le_rx = f["a2b"]["rx"] + f["b2a"]["rx"]
    le_tx = f["a2b"]["tx"] + f["b2a"]["tx"]
    err = lambda q: max(d[x]["emulation_error_ns"][q] for x in ("a2b", "b2a"))  # noqa: E731
    # What the polls' spacing alone allowed in the same window (poll_gaps.h).
    gaps = lambda q: max(d[x]["poll_gaps"]["lateness_ns"][q] for x in ("a2b", "b2a"))  # noqa: E731
    return {"gen": gen, "contention": step.contention, "bad_drops": bad, "lost_in": gen["tx_all"] - le_rx, "lost_out": le_tx - gen["rx_all"],
            "conserved": final["conserved"], "p50_ns": err("p50"), "p99_ns": err("p99"), "p999_ns": err("p999"),
            "max_ns": err("max"), "gaps_p99_ns": gaps("p99"), "gaps_p999_ns": gaps("p999")}


def run_testpmd(step, lcore):
    p = step.start(
        ["dpdk-testpmd", *testpmd_lcores(lcore), "--no-pci", "--in-memory", *step.client_vdevs(), "--",
         "--forward-mode=io", "--auto-start"],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
    step.wait_line("pacegen: done")
    step.result()
    step.others([p.pid, step.gen.pid])
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=30)
    gen = step.finish()
    # From the window's start: testpmd loses one ring's worth per port at
    # its start-up (before it forwards), which is not a forwarding figure.
    return {"gen": gen, "contention": step.contention, "bad_drops": {}, "lost_in": 0,
            "lost_out": max(0, gen["tx"] - gen["rx_since_window"]),
            "conserved": True, "p50_ns": None, "p99_ns": None, "p999_ns": None, "max_ns": None,
            "gaps_p99_ns": None, "gaps_p999_ns": None}


def verdict(r, rate, bound_ns):
    g = r["gen"]
    why = []
    if g["sent_pps"] < 0.99 * rate:
        why.append(f"source reached {g['sent_pps'] / 1e6:.2f} Mpps")
    if g["refused"]:
        why.append(f"{g['refused']} refused")
    if r["bad_drops"]:
        why.append(f"drops {r['bad_drops']}")
    if r["lost_in"] or r["lost_out"]:
        why.append(f"lost {r['lost_in']}+{r['lost_out']}")
    if not r["conserved"]:
        why.append("not conserved")
    if r["p99_ns"] is not None and r["p99_ns"] > bound_ns:
        why.append(f"p99 {r['p99_ns'] / 1e3:.1f} us")
    return why


def median_rung(tops):
    """The median over rounds of the highest rung each passed, as a rung:
    with an even number of rounds, the lower of the middle two (a rung
    passed in at least half the rounds), not their mean, which is a rate
    on no ladder that no round measured."""
    return statistics.median_low(tops)


def row_summary(name, link, best, results, ladder):
    """A row's figures from its rounds: best, the highest rung passed per
    round; results, {rate: [run, ...]}."""
    claimed = median_rung(best)
    at = [r for r in results.get(claimed, []) if not r["fail"]]
    med = lambda f: statistics.median(f(r) for r in at) if at else None  # noqa: E731
    return {
        "name": name, "link": link, "per_round_best_pps": best, "claimed_pps": claimed,
        "p50_ns": med(lambda r: r["p50_ns"]) if link is not None else None,
        "p99_ns": med(lambda r: r["p99_ns"]) if link is not None else None,
        "p999_ns": med(lambda r: r["p999_ns"]) if link is not None else None,
        "source_lateness_p99_ns": med(lambda r: r["gen"]["burst_lateness_ns"]["p99"]),
        "source_lateness_p999_ns": med(lambda r: r["gen"]["burst_lateness_ns"]["p999"]),
        "oneway_p99_ns": med(lambda r: r["gen"]["oneway_ns"]["p99"]),
        "first_failure": next((r["fail"] for rate in ladder if rate > claimed
                               for r in results.get(rate, []) if r["fail"]), None),
        "runs": {f"{k / 1e6:g}": v for k, v in results.items()},
    }


def machine():
    """Load average and CPU pressure (some avg10): a busy machine's figures mean little."""
    load = open("/proc/loadavg").read().split()[:3]
    try:
        psi = open("/proc/pressure/cpu").readline().split()[1].split("=")[1]
    except OSError:
        psi = "?"
    return f"load {' '.join(load)}, CPU pressure avg10 {psi}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=2.0, help="measured window per rung (default 2)")
    ap.add_argument("--warmup", type=float, default=0.5)
    ap.add_argument("--burst", type=int, default=32, help="pacegen's burst (default 32)")
    ap.add_argument("--bound-us", type=float, default=10.0, help="emulation-error p99 bound (default 10)")
    ap.add_argument("--ladder", help="comma-separated Mpps (default 1,2,4,7,10,14.88)")
    ap.add_argument("--row", action="append", help="only rows whose name contains this")
    ap.add_argument("--no-testpmd", action="store_true")
    ap.add_argument("--quick", action="store_true", help="1 round, 1 s windows")
    ap.add_argument("--lcore", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--rsize", type=int, default=12,
                    help="log2 of the memif rings' size (default 12: 4096 descriptors, a NIC ring's usual "
                         "maximum; 2.2 ms of a port's share of 14.88 Mpps, more than one 4 ms scheduler "
                         "tick at up to 2 Mpps a port)")
    ap.add_argument("--full-ladder", action="store_true",
                    help="measure every rung, past a failure too (the curve of p99 against rate)")
    ap.add_argument("--save", metavar="FILE", help="also write the result as JSON to FILE")
    ap.add_argument("--max-others", type=float, default=0.1,
                    help="a failed rung during which other processes used more than this many CPUs "
                         "is run again (default 0.1)")
    ap.add_argument("--retries", type=int, default=3, help="at most this many times (default 3)")
    add_isolate_argument(ap)
    a = ap.parse_args()
    if a.quick:
        a.rounds, a.seconds = 1, 1.0
    refuse_bad_words(ap, a)
    if not 1 <= a.burst <= 256:
        ap.error("--burst must be 1 .. 256 (pacegen's)")
    keep_off(a.lcore)
    run_isolated_if_asked(a, run)


def refuse_bad_words(ap, a):
    """What this and forwarding_linerate.py cannot measure, refused before
    anything starts (ap.error: status 2, the word named)."""
    if a.rounds < 1:
        ap.error("--rounds must be at least 1")
    if a.seconds <= 0 or a.warmup < 0:
        ap.error("--seconds must be above 0 and --warmup at least 0")
    if a.retries < 0 or a.bound_us <= 0:
        ap.error("--retries must be at least 0, --bound-us above 0")
    if a.ladder:
        try:
            rungs = [float(x) for x in a.ladder.split(",")]
        except ValueError:
            ap.error(f"--ladder: '{a.ladder}' is not a comma-separated list of Mpps")
        if not rungs or min(rungs) <= 0 or max(rungs) > 2000:
            ap.error(f"--ladder: '{a.ladder}': every rung must be above 0 and at most 2000 Mpps")
    # Before keep_off(), which takes the lcore's CPU out of this process's.
    if problem := lcore_problem(a.lcore):
        ap.error(problem)


def add_isolate_argument(ap):
    ap.add_argument("--isolate-lcore", action="store_true",
                    help="for the run, move every other thread that may run elsewhere off the lcore's "
                         "CPU (PID 1's workers, kdamond, other sessions) and move them back at the end: "
                         "changes other processes' CPU affinity (linkemu.bed.isolation)")


def run_isolated_if_asked(a, run):
    """run(a, moved) with the lcore's CPU isolated when --isolate-lcore
    asks (moved: the threads moved off it, {} otherwise). SIGTERM too
    unwinds: each step stops its programs, and isolated() moves the
    threads back."""
    say = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731

    def body():
        if not a.isolate_lcore:
            return run(a, {})
        with isolation.isolated(a.lcore, say=say) as moved:
            say(f"isolated CPU {a.lcore}: moved {isolation.describe(moved)}")
            return run(a, moved)

    run_interruptible(body)


def run(a, moved):
    ladder = [float(x) * 1e6 for x in a.ladder.split(",")] if a.ladder else LADDER
    rows = [r for r in ROWS if not a.row or any(s in r[0] for s in a.row)]
    programs = ([] if a.no_testpmd else [("testpmd io-forward", None)]) + rows
    bound = a.bound_us * 1e3
    # results[name][rate] = list of runs; best[name] = highest rung passed per round
    results = {n: {} for n, _ in programs}
    best = {n: [] for n, _ in programs}
    before = machine()
    for rnd in range(a.rounds):
        for name, link in programs:
            top, passed = 0.0, True
            for rate in ladder:
                print(f"[round {rnd + 1}/{a.rounds}] {name} at {rate / 1e6:g} Mpps ...", file=sys.stderr, flush=True)
                for attempt in range(a.retries + 1):
                    step = Step(rate, a.seconds, a.warmup, a.burst, a.rsize, a.lcore)
                    try:
                        r = run_testpmd(step, a.lcore) if link is None else run_linkemud(step, link, a.lcore)
                    finally:
                        step.close()
                    r["fail"] = verdict(r, rate, bound)
                    r["attempts"] = attempt + 1
                    if not r["fail"] or r["contention"] <= a.max_others or attempt == a.retries:
                        break
                    print(f"    others used {r['contention']:.2f} CPU meanwhile ({'; '.join(r['fail'])}): again",
                          file=sys.stderr, flush=True)
                    time.sleep(2)
                if r["fail"] and r["contention"] > a.max_others:
                    r["fail"].append(f"others used {r['contention']:.2f} CPU")
                results[name].setdefault(rate, []).append(r)
                if r["fail"]:
                    print(f"    fails: {'; '.join(r['fail'])}", file=sys.stderr, flush=True)
                    passed = False
                    if not a.full_ladder:
                        break
                if passed:
                    top = rate
            best[name].append(top)
    after = machine()
    out = [row_summary(name, link, best[name], results[name], ladder) for name, link in programs]
    base = out[0]["claimed_pps"] if not a.no_testpmd else None
    for o in out:
        o["ratio"] = o["claimed_pps"] / base if base else None
    result = {"rounds": a.rounds, "seconds": a.seconds, "bound_ns": bound, "ladder": ladder, "burst": a.burst,
              "machine_before": before, "machine_after": after, "isolated_threads": len(moved), "rows": out}
    if a.save:
        with open(a.save, "w") as f:
            json.dump(result, f, indent=1)
    if a.json:
        print(json.dumps(result, indent=1))
        return
    print(f"paced source: pacegen on CPU {other_cpu(a.lcore)}, linkemud's and testpmd's lcore on CPU {a.lcore}, memif both ways, 64-byte frames, bursts of {a.burst}; "
          f"ladder {','.join(f'{x / 1e6:g}' for x in ladder)} Mpps; median of {a.rounds} rounds of {a.seconds:g} s;"
          f" pass = no drop, error p99 <= {a.bound_us:g} us")
    print(f"machine at start: {before}; at end: {after}")
    print(f"lcore's CPU: {'isolated, ' + isolation.describe(moved) + ' moved off it' if moved else 'shared with every thread the bench did not start (--isolate-lcore to move them)'}")
    print(f"{'Mpps':>6} {'ratio':>6} {'err p99':>8} {'p99.9':>8} {'src p99':>8} {'1-way p99':>9}  row (rounds' best; what failed above)")
    if a.full_ladder:
        print(f"every rung (medians of {a.rounds} rounds; refused = frames the port refused, "
              "source p99.9 = pacegen's burst lateness; gaps = the lateness the spacing of linkemud's "
              "polls alone gave a deadline at a random moment, the machine's stalls and the loop's work):")
        print(f"{'row':<22} {'Mpps':>6} {'err p50':>8} {'err p99':>8} {'p99.9':>9} {'max':>9} "
              f"{'gaps p99':>8} {'p99.9':>9} {'refused':>8} {'src p99.9':>9} {'others':>6} passed")
        for o in out:
            for rate in ladder:
                rs = o["runs"].get(f"{rate / 1e6:g}", [])
                if not rs:
                    continue
                m = lambda f: statistics.median(f(r) for r in rs)  # noqa: E731
                e = lambda q: f"{m(lambda r: r[q]) / 1e3:7.1f}u" if rs[0][q] is not None else f"{'-':>8}"  # noqa: E731
                print(f"{o['name'][:22]:<22} {rate / 1e6:6.2f} {e('p50_ns')} {e('p99_ns')} {e('p999_ns'):>9} "
                      f"{e('max_ns'):>9} {e('gaps_p99_ns')} {e('gaps_p999_ns'):>9} "
                      f"{m(lambda r: r['gen']['refused']):8.0f} "
                      f"{m(lambda r: r['gen']['burst_lateness_ns']['p999']) / 1e3:8.1f}u "
                      f"{m(lambda r: r['contention']):6.3f} {sum(not r['fail'] for r in rs)}/{len(rs)}")
    for o in out:
        us = lambda v: f"{v / 1e3:6.1f}us" if v is not None else f"{'-':>8}"  # noqa: E731
        ratio = f"{o['ratio']:6.3f}" if o["ratio"] is not None else f"{'-':>6}"
        fail = "; ".join(o["first_failure"] or []) or "passed the top rung"
        print(f"{o['claimed_pps'] / 1e6:6.2f} {ratio} {us(o['p99_ns'])} {us(o['p999_ns'])} "
              f"{us(o['source_lateness_p99_ns'])} {us(o['oneway_p99_ns']):>9}  {o['name']} "
              f"({','.join(f'{b / 1e6:g}' for b in o['per_round_best_pps'])}; {fail[:80]})")


if __name__ == "__main__":
    main()
