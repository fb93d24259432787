"""forwarding: the kernel vs DPDK forwarding study (docs/lab.md, "forwarding").

Paths compared in one run on one bed (forwarding_paths.py): the direct veth
pair, SWA (linkemuk), SWB (linkemud) and, when `punt` exists, SWC with all
UDP frames or a 1 % control flow of 64 B frames through the FIFO or shared
memory. Per payload size (32 .. 1460 B): iperf3 UDP with the offered load
above what any path carries (2 Gbit/s, the study's), its jitter, ping RTT
during it, and iperf3 TCP writing that size (not for SWC: the study measured
SWC with UDP only); then a long ping at 32 B per path for the distribution
(Fig. 8). The report sets our ratios against SWA beside Table 8.

--quick (about a minute, in make test) checks what must hold on any
machine: every path forwards (UDP, TCP, ping), each daemon's final report
conserves frames, and with punt: SWC with 1 % through IPC carries >= 0.9x
SWB's UDP at 64 B, and shared memory is not slower than the FIFO - three
one-sided Welch t-tests on the means of interleaved rounds (the rounds'
noise sets each test's margin), at levels that keep the invocation's
false-alarm rate at 1 % (forwarding_analysis.FAMILY_ALPHA).

--lock FILE holds FILE (flock) only while one path is measured and waits
for a quiet machine before each: a full study is several short quiet
windows, not one long one.
"""

from __future__ import annotations

import fcntl
import time
from dataclasses import dataclass
from pathlib import Path

from linkemu.bed import procs
from linkemu.errors import LinkemuError, UsageError
from linkemu.lab import forwarding_analysis as fa
from linkemu.lab import forwarding_measure as fm
from linkemu.lab import forwarding_paths as fp
from linkemu.lab import published_forwarding as pub
from linkemu.lab import results
from linkemu.lab.session import LabSession, Progress

OFFERED = "2G"
LONG_SIZE = 32
# Interleaved rounds of SWB and the SWC paths in --quick.
QUICK_ROUNDS = 3
QUIET_PSI = 2.0


@dataclass
class ForwardingOptions:
    quick: bool = False
    sizes: tuple = pub.SIZES
    paths: tuple = fp.PATHS
    udp_seconds: float = 4.0
    tcp_seconds: float = 3.0
    repeats: int = 1
    offered: str = OFFERED
    long_seconds: float = 30.0
    rounds: int = QUICK_ROUNDS
    lock: Path | None = None
    quiet_wait_s: float = 300.0
    bed: str = "lab"
    pmd: str | None = None
    seed: int = 1
    quiet: bool = False

    @classmethod
    def quick_defaults(cls, **kw) -> "ForwardingOptions":
        base = dict(quick=True, sizes=(64,), udp_seconds=2.0, tcp_seconds=1.5,
                    long_seconds=0.0)
        base.update({k: v for k, v in kw.items() if v is not None})
        return cls(**base)

    def validate(self) -> None:
        bad = [p for p in self.paths if p not in fp.PATHS]
        if bad:
            raise UsageError(f"--paths: unknown {', '.join(bad)} (known: {', '.join(fp.PATHS)})")
        if "swa" not in self.paths:
            raise UsageError("--paths: swa is needed (every ratio is against it)")
        if any(fp.one_pct(p) for p in self.paths) and "swb" not in self.paths:
            raise UsageError("--paths: the 1 % SWC paths need swb (their control flow is 1 % "
                             "of SWB's traffic)")
        if not self.sizes or any(not 16 <= s <= 1472 for s in self.sizes):
            raise UsageError("--sizes: payload sizes must be 16 .. 1472 B (a UDP datagram in "
                             "one 1500 B frame)")
        if not 0.5 <= self.udp_seconds <= 600 or not 0.5 <= self.tcp_seconds <= 600:
            raise UsageError("--udp-seconds and --tcp-seconds must be 0.5 .. 600")
        if not 1 <= self.repeats <= 20 or not 1 <= self.rounds <= 20:
            raise UsageError("--repeats and --rounds must be 1 .. 20")
        if not 0 <= self.long_seconds <= 3600:
            raise UsageError("--long-seconds must be 0 .. 3600")


# --- planning --------------------------------------------------------------------------

def _per_size(o: ForwardingOptions, path: str) -> float:
    return o.udp_seconds + 1.5 + (0 if fp.is_swc(path) else o.tcp_seconds + 1.5)


def planned(o: ForwardingOptions, paths: list[str]) -> list[float]:
    """One entry per progress step: a path's size (and repeat); a path's
    last step also carries its start and its long ping."""
    steps = len(o.sizes) * o.repeats
    out = []
    if o.quick:
        rounds = _round_paths(paths)
        for p in [p for p in paths if p not in rounds]:
            out += [_per_size(o, p)] * (steps - 1) + [_per_size(o, p) + 1]
        for _ in range(o.rounds if rounds else 0):
            for p in rounds:
                out += [o.udp_seconds + 1.5] * (steps - 1) + [o.udp_seconds + 2.5]
        return out
    for p in paths:
        out += [_per_size(o, p)] * (steps - 1) + [_per_size(o, p) + 1 + o.long_seconds]
    return out


def _round_paths(paths: list[str]) -> list[str]:
    """--quick: SWB and the SWC paths go in interleaved rounds (their
    ratios are checked); with no SWC path, SWB runs once like the rest."""
    swc = [p for p in paths if fp.is_swc(p)]
    return (["swb"] + swc) if swc else []


# --- quiet windows ---------------------------------------------------------------------

class QuietWindow:
    """With a lock file: hold it (flock) for one path, after waiting until
    the CPUs are quiet (PSI some avg10 < 2 %, no other linkemud). Without:
    only record what the machine was like."""

    def __init__(self, o: ForwardingOptions, own_prefix: str, prog: Progress):
        self.o, self.prefix, self.prog = o, own_prefix, prog
        self.f = None

    def __enter__(self) -> dict:
        if self.o.lock is not None:
            self.f = open(self.o.lock, "a")
            fcntl.flock(self.f, fcntl.LOCK_EX)
        t0 = time.monotonic()
        while True:
            psi, others = _psi(), _others(self.prefix)
            # Without a lock there is no waiting, and the pressure is mostly
            # the lab's own previous run: only other daemons count then.
            quiet = not others and (psi is None or psi < QUIET_PSI or self.o.lock is None)
            if quiet or self.o.lock is None or time.monotonic() - t0 > self.o.quiet_wait_s:
                break
            time.sleep(2.0)
        if self.o.lock is not None and not quiet:
            self.prog.note(f"machine not quiet after {self.o.quiet_wait_s:.0f} s (cpu pressure "
                           f"{psi} %, other daemons {len(others)}): measuring anyway")
        return {"cpu_pressure_avg10": psi, "other_daemons": others, "quiet": quiet,
                "waited_s": round(time.monotonic() - t0, 1), "locked": self.o.lock is not None}

    def __exit__(self, *exc) -> None:
        if self.f is not None:
            fcntl.flock(self.f, fcntl.LOCK_UN)
            self.f.close()
            self.f = None


def _psi() -> float | None:
    try:
        for line in open("/proc/pressure/cpu"):
            if line.startswith("some "):
                return float(line.split("avg10=")[1].split()[0])
    except (OSError, ValueError, IndexError):
        pass
    return None


def _others(own_prefix: str) -> list[str]:
    return [str(p) for p in procs.any_linkemud()
            if not procs.is_linkemud(p, own_prefix)]


# --- measuring a path ------------------------------------------------------------------

def _control_bps(runs: list[dict], size: int, rnd: int | None) -> float:
    """The 1 % control flow's offered rate: 1 % of SWB's received traffic
    at this size (the study's Table 7), from the same round in --quick."""
    swb = [r for r in runs if r["path"] == "swb" and r["kind"] == "udp" and r["size"] == size
           and (rnd is None or r.get("round") == rnd)]
    if not swb:
        raise LinkemuError(f"no SWB run at {size} B to take the 1 % control rate from")
    mbit = sorted(r["mbit_s"] for r in swb)[len(swb) // 2]
    return max(64 * 8 * 10.0, mbit * 1e6 * pub.CONTROL_SHARE)   # at least 10 frames/s


def _daemon_record(path: str, rnd: int, link, window: dict) -> dict:
    f = link.final or {}
    a2b = f.get("directions", {}).get("a2b", {})
    return {"path": path, "round": rnd, "conserved": bool(f.get("conserved")),
            "layout": f.get("layout"), "lcores": f.get("lcores"), "uptime_s": f.get("uptime_s"),
            "a2b": {k: a2b.get(k, 0) for k in ("rx", "tx", "dropped_total", "in_flight")},
            "a2b_dropped": {k: v for k, v in a2b.get("dropped", {}).items() if v},
            "before_rx": a2b.get("before_rx", {}).get("total", 0),
            "contention": list(link.contention), "problems": list(link.problems),
            "machine": window}


def _finish_rec(rec: dict, path: str, rnd: int, window: dict) -> dict:
    rec["path"] = path
    rec["round"] = rnd
    rec["kind"] = rec.pop("proto")
    rec["id"] = f"{path}-{rec['kind']}-{rec['size']}-r{rnd}"
    if rec["kind"] == "udp":
        rec["limit"] = fa.limiter(rec)
    rec["machine"] = window
    rec.setdefault("problems", [])
    return rec


def measure_path(sess: LabSession, o: ForwardingOptions, path: str, rnd: int, sizes,
                 res: dict, prog: Progress, tcp: bool, long_s: float) -> None:
    """Start `path`, measure every size (UDP, then TCP unless not asked),
    the long ping, stop; append records to res."""
    with QuietWindow(o, sess.bed.file_prefix, prog) as window:
        with fp.started(sess, path) as st:
            for size in sizes:
                for rep in range(o.repeats):
                    r = rnd if o.quick else rep
                    prog.step(f"{fp.LABELS[path]}: {size} B UDP" + (" + TCP" if tcp else "")
                              + (f" (round {rnd + 1})" if o.quick else ""))
                    ctl = (_control_bps(res["runs"], size, rnd if o.quick else None)
                           if fp.one_pct(path) else None)
                    rec = _finish_rec(fm.udp(st, size, o.udp_seconds, o.offered, ctl),
                                      path, r, window)
                    res["runs"].append(rec)
                    prog.note(f"UDP {rec['mbit_s']:.2f} Mbit/s = {rec['pps']:.0f} pps "
                              f"(sent {rec['sent_pps']:.0f} pps), jitter "
                              f"{rec['jitter_ms'] or 0:.4f} ms, ping median "
                              f"{rec['ping']['median_ms']} ms; limit: {rec['limit']['where']}")
                    if tcp:
                        t = _finish_rec(fm.tcp(st, size, o.tcp_seconds), path, r, window)
                        res["runs"].append(t)
                        prog.note(f"TCP {t['mbit_s']:.2f} Mbit/s"
                                  + (f", mean frame {t['mean_frame_bytes']:.0f} B"
                                     if t.get("mean_frame_bytes") else ""))
            if long_s > 0:
                prog.note(f"long ping at {LONG_SIZE} B for {long_s:g} s")
                lr = fm.ping_long(st, LONG_SIZE, long_s)
                lr.update(path=path, machine=window)
                res["latency"].append(lr)
        if st.link is not None:
            res["daemons"].append(_daemon_record(path, rnd, st.link, window))
            for r in res["runs"]:
                if r["path"] == path and r.get("daemon_round") is None and (
                        not o.quick or r["round"] == rnd):
                    r["daemon_round"] = rnd
                    r["contention"] = list(st.link.contention)
                    r["problems"] += [p for p in st.link.problems if p not in r["problems"]]


# --- the run ---------------------------------------------------------------------------

def available_paths(o: ForwardingOptions) -> tuple[list[str], dict[str, str]]:
    """The paths to measure and, for those left out, why (never faked)."""
    why = fp.punt_unavailable()
    skipped = {p: f"not available: {why}" for p in o.paths if fp.is_swc(p) and why}
    return [p for p in o.paths if p not in skipped], skipped


def run(o: ForwardingOptions, out_path: Path) -> dict:
    o.validate()
    paths, skipped = available_paths(o)
    prog = Progress(planned(o, paths), quiet=o.quiet)
    res = results.new("forwarding", quick=o.quick, seed=o.seed, config={
        "sizes": list(o.sizes), "paths": list(o.paths), "udp_seconds": o.udp_seconds,
        "tcp_seconds": o.tcp_seconds, "repeats": o.repeats, "offered": o.offered,
        "long_seconds": o.long_seconds, "long_size": LONG_SIZE,
        "rounds": o.rounds if o.quick else None, "ping_interval_s": fm.PING_INTERVAL_S,
        "control": {"size": pub.CONTROL_SIZE, "share_of_swb": pub.CONTROL_SHARE,
                    "port": fp.CONTROL_PORT},
        "swb_layout": fp.SWB_LAYOUT, "bed": o.bed, "pmd": o.pmd or "af_xdp",
        "lock": str(o.lock) if o.lock else None, "source": pub.SOURCE})
    res.update(paths=[{"path": p, "label": fp.LABELS[p], "available": p not in skipped,
                       "reason": skipped.get(p)} for p in o.paths],
               daemons=[], latency=[])
    for p, why in skipped.items():
        res["notes"].append(f"{fp.LABELS[p]}: {why}")
    with prog.naming_failures("forwarding"), LabSession(o.bed, o.pmd, seed=o.seed) as sess:
        if o.quick:
            rounds = _round_paths(paths)
            for p in [p for p in paths if p not in rounds]:
                measure_path(sess, o, p, 0, o.sizes, res, prog, tcp=True, long_s=0)
            for rnd in range(o.rounds if rounds else 0):
                for p in rounds:
                    measure_path(sess, o, p, rnd, o.sizes, res, prog,
                                 tcp=(p == "swb" and rnd == 0), long_s=0)
        else:
            for p in paths:
                measure_path(sess, o, p, 0, o.sizes, res, prog, tcp=not fp.is_swc(p),
                             long_s=o.long_seconds)
        res["metadata"]["pmd"] = sess.pmd
    res["summary"] = summarise(res, o, paths)
    _notes(res, paths)
    res["metadata"]["elapsed_s"] = round(prog.elapsed(), 1)
    results.write(res, out_path)
    return res


def summarise(res: dict, o: ForwardingOptions, paths: list[str]) -> dict:
    runs = res["runs"]
    s = {"table8": fa.table8(runs, list(o.sizes)),
         "frame_cost": fa.frame_cost(runs, paths, 64 if 64 in o.sizes else o.sizes[0]),
         "swb_layout": (f"linkemud `--layout {fp.SWB_LAYOUT}` on one lcore (CPU 1): RX, model "
                        f"and TX of both directions in one loop; sender, receiver and the "
                        f"kernel's veth processing on CPU 0 (the study: RX and TX on a "
                        f"dedicated core each)")}
    if o.quick:
        checks = fa.forwards_checks(runs, paths) + fa.conservation_checks(res["daemons"])
        if any(fp.is_swc(p) for p in paths):
            checks += fa.swc_checks(runs, 64)
        s["checks"] = checks
        s["all_pass"] = all(c["pass"] is not False for c in checks)
    return s


def _notes(res: dict, paths: list[str]) -> None:
    hit = [d for d in res["daemons"] if d["contention"]]
    if hit:
        res["notes"].append(f"{len(hit)} of {len(res['daemons'])} daemon runs shared the "
                            f"machine with another busy-polling linkemud "
                            f"({hit[0]['contention'][0]}): rates show CPU sharing")
    loud = [r for r in res["runs"] if not r["machine"].get("quiet")]
    if loud:
        res["notes"].append(f"{len(loud)} of {len(res['runs'])} runs started on a machine "
                            f"that was not quiet (another linkemud running"
                            + (f", or CPU pressure >= {QUIET_PSI:g} % after the wait)"
                               if res["config"].get("lock") else ")"))
    res["notes"].append(f"offered UDP load {res['config']['offered']}bit/s per run, above "
                        f"what any path carries here; SWC measured with UDP only, as in the "
                        f"study")
