"""`linkemu lab EXPERIMENT [options]`: the measurement lab's commands.

Registered into the main parser by register(sub); each command raises
UsageError (exit 2) for bad options and LinkemuError (exit 1) for failed
steps, like every other linkemu command.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from linkemu.daemon.scenario import exact_ns
from linkemu.errors import UsageError

_TIME_RE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*(ns|us|ms|s)?\s*$")
_UNITS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000, None: 1_000}


def parse_delays(text: str) -> tuple[int, ...]:
    """'0,1us,10us,1ms' -> ns. A bare number is in microseconds, as in tc."""
    out = []
    for part in text.split(","):
        m = _TIME_RE.match(part)
        if not m:
            raise UsageError(f"--delays: '{part.strip()}' is not a time (e.g. 0,10us,1ms,1s)")
        # Exact decimal arithmetic, as the daemon's grammar: through a
        # float, 1.001ms was 1000999.9999999999 ns ("finer than 1 ns") and
        # 1.0000000000000001s was 1 s.
        try:
            out.append(exact_ns(m.group(1), _UNITS[m.group(2)]))
        except ValueError:
            raise UsageError(f"--delays: '{part.strip()}' is finer than 1 ns") from None
    return tuple(out)


def parse_ints(text: str, what: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in text.split(","))
    except ValueError:
        raise UsageError(f"{what}: '{text}' is not a comma-separated list of integers")


def parse_floats(text: str, what: str) -> tuple[float, ...]:
    try:
        return tuple(float(x) for x in text.split(","))
    except ValueError:
        raise UsageError(f"{what}: '{text}' is not a comma-separated list of numbers")


def parse_high(text: str) -> dict[int, float]:
    """'46=150000,1500=80000' -> {46: 150000.0, 1500: 80000.0}."""
    out = {}
    for part in text.split(","):
        k, sep, v = part.partition("=")
        try:
            if not sep:
                raise ValueError
            out[int(k)] = float(v)
        except ValueError:
            raise UsageError(f"--high-pps: '{part}' is not SIZE=PPS (e.g. 46=150000,1500=80000)")
    return out


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bed", default="lab", metavar="NAME",
                   help="test bed the lab builds and removes (default: %(default)s)")
    p.add_argument("--quick", action="store_true",
                   help="seconds instead of minutes: fewer delays/frames (used by the tests)")
    p.add_argument("-o", "--output", type=Path, default=None, metavar="FILE",
                   help="results file (.json or .json.gz; default "
                        "linkemu-lab-EXPERIMENT-DATE.json.gz here)")
    p.add_argument("--report", type=Path, default=None, metavar="HTML",
                   help="also render the results to this HTML page")
    p.add_argument("--seed", type=int, default=1, metavar="N", help="linkemud's seed")
    p.add_argument("--pmd", choices=("af_xdp", "af_packet"), default=None)
    p.add_argument("--noise-seconds", type=float, default=None, metavar="S")
    p.add_argument("--quiet", action="store_true", help="no progress lines")


def register(sub) -> None:
    lab = sub.add_parser("lab", help="measurement lab: delay, loss, forwarding, long fat pipes, 4G/5G, noise",
                         description="Run a lab experiment on its own test bed and write one "
                                     "results file (see docs/lab.md).")
    lsub = lab.add_subparsers(dest="experiment", metavar="EXPERIMENT", required=True)

    d = lsub.add_parser("delay-precision", help="one-way delay through `delay D` (DEMU Tables 2-6)")
    _common(d)
    d.add_argument("--delays", default=None, metavar="LIST",
                   help="inserted delays (default 0,1us,10us,100us,1ms,10ms,100ms,1s; "
                        "--quick: 0,100us,1ms,10ms)")
    d.add_argument("--sizes", default=None, metavar="LIST", help="IP lengths (default 1500,46)")
    d.add_argument("--rates", default=None, metavar="LIST",
                   help="rate classes: moderate,high (default both)")
    d.add_argument("--moderate-pps", type=float, default=None, metavar="PPS",
                   help="moderate rate (default 10000)")
    d.add_argument("--high-pps", default=None, metavar="SIZE=PPS,...",
                   help="high rate per IP length (default: searched in full mode, "
                        "46=100000,1500=60000 with --quick)")
    d.add_argument("--seconds", type=float, default=None, metavar="S",
                   help="traffic per run (default 5; --quick 1)")
    d.add_argument("--no-raw", action="store_true",
                   help="do not keep the raw per-frame samples beside the results file")
    d.set_defaults(func=cmd_delay)

    l = lsub.add_parser("loss-accuracy", help="loss rate, loss runs, GE, TCP (DEMU loss Table 1)")
    _common(l)
    l.add_argument("--levels", default=None, metavar="LIST",
                   help="loss rates as fractions (default 0,1e-6,1e-5,1e-4,1e-3,1e-2)")
    l.add_argument("--frames", type=int, default=None, metavar="N",
                   help="probe frames per rate (default 10^7; --quick 10^5)")
    l.add_argument("--pps", type=float, default=None, help="probe rate (default 50000; "
                                                            "--quick 25000)")
    l.add_argument("--confidence", type=float, default=None,
                   help="Wilson interval confidence (default 0.99)")
    l.add_argument("--tcp-seconds", type=float, default=None, metavar="S",
                   help="iperf3 duration per run (default 60; --quick 3)")
    l.add_argument("--tcp-levels", default=None, metavar="LIST",
                   help="loss rates for TCP (default: all; --quick 0,1e-4,1e-2)")
    l.add_argument("--ccs", default=None, metavar="LIST", help="congestion controls "
                                                               "(default cubic,bbr)")
    l.add_argument("--no-tcp", action="store_true", help="skip the TCP part")
    l.add_argument("--no-ge", action="store_true", help="skip the Gilbert-Elliott part")
    l.set_defaults(func=cmd_loss)

    f = lsub.add_parser("lfp", help="long fat pipe: window sweep, LFP syndrome, Table 2, BPF cc")
    _common(f)
    f.add_argument("--windows", default=None, metavar="LIST",
                   help="windows in KB (default 8,12,16,...,520: 21 points; --quick 32,48,160)")
    f.add_argument("--senders", default=None, metavar="LIST",
                   help="reno-1992,cubic,bbr,lfp_fixed,lfp_adapt (default all; --quick "
                        "reno-1992,lfp_fixed,lfp_adapt)")
    f.add_argument("--runs", type=int, default=None, metavar="N",
                   help="runs per window (default 3; --quick 1)")
    f.add_argument("--seconds", type=float, default=None, metavar="S",
                   help="ttcp duration per run (default 8; --quick 3)")
    f.add_argument("--no-table2", action="store_true", help="skip Table 2")
    f.set_defaults(func=cmd_lfp)

    c = lsub.add_parser("cellular", help="the 4G/5G study: ping, iperf3 and unit latency over "
                                         "TCP/QUIC/UDP on the cell-* profiles")
    _common(c)
    c.add_argument("--links", default=None, metavar="LIST",
                   help="profiles to measure (default: the study's four, cell-4g-dec4,"
                        "cell-5g-dec4,cell-4g-dec2,cell-5g-dec2)")
    c.add_argument("--protos", default=None, metavar="LIST",
                   help="unit-latency protocols (default tcp,quic,udp)")
    c.add_argument("--unit-runs", type=int, default=None, metavar="N",
                   help="unit-latency runs per protocol and link (default 5)")
    c.add_argument("--units", type=int, default=None, metavar="N",
                   help="units per run (default 10000; --quick: 3000)")
    c.add_argument("--iperf-runs", type=int, default=None, metavar="N", help="default 3")
    c.add_argument("--iperf-seconds", type=float, default=None, metavar="S", help="default 20")
    c.add_argument("--ping-seconds", type=int, default=None, metavar="S", help="default 60")
    c.add_argument("--no-raw", action="store_true",
                   help="do not keep the raw per-unit samples beside the results file")
    c.set_defaults(func=cmd_cellular)

    w = lsub.add_parser("forwarding", help="kernel vs DPDK forwarding and the control-plane "
                                           "split (Table 8): direct, SWA, SWB, SWC")
    _common(w)
    w.add_argument("--sizes", default=None, metavar="LIST",
                   help="UDP/TCP payload sizes in B (default 32,64,128,256,512,768,1024,1280,"
                        "1460; --quick 64)")
    w.add_argument("--paths", default=None, metavar="LIST",
                   help="direct,swa,swb,swc-all-fifo,swc-1pct-fifo,swc-all-shm,swc-1pct-shm "
                        "(default all; SWC only where punt is built)")
    w.add_argument("--udp-seconds", type=float, default=None, metavar="S",
                   help="iperf3 UDP per size (default 4; --quick 2)")
    w.add_argument("--tcp-seconds", type=float, default=None, metavar="S",
                   help="iperf3 TCP per size (default 3; --quick 1.5)")
    w.add_argument("--repeats", type=int, default=None, metavar="N",
                   help="runs per path and size (default 1)")
    w.add_argument("--rounds", type=int, default=None, metavar="N",
                   help="--quick: interleaved rounds of SWB and SWC (default 3)")
    w.add_argument("--offered", default=None, metavar="RATE",
                   help="iperf3 UDP offered load (default 2G, the study's)")
    w.add_argument("--long-seconds", type=float, default=None, metavar="S",
                   help="ping at 32 B per path for the distribution (default 30; --quick 0)")
    w.add_argument("--lock", type=Path, default=None, metavar="FILE",
                   help="hold FILE (flock) only while one path is measured, after waiting for "
                        "a quiet CPU (e.g. /tmp/linkemu-quiet.lock)")
    w.add_argument("--quiet-wait", type=float, default=None, metavar="S",
                   help="with --lock: wait up to S s for a quiet machine per path (default 300)")
    w.set_defaults(func=cmd_forwarding)

    n = lsub.add_parser("noise", help="the machine's scheduling noise (noisefloor) per CPU")
    n.add_argument("--cpu", type=int, action="append", default=None,
                   help="CPU to measure (repeatable; default: the daemon's and the tool CPU)")
    n.add_argument("--seconds", type=float, default=3.0)
    n.add_argument("--json", action="store_true")
    n.set_defaults(func=cmd_noise)

    r = lsub.add_parser("rate-search", help="highest loss-free owdprobe rate through the bed")
    r.add_argument("--bed", default="lab", metavar="NAME")
    r.add_argument("--sizes", default="1500,46", metavar="LIST")
    r.add_argument("--seconds", type=float, default=1.0, help="traffic per trial")
    r.add_argument("--pmd", choices=("af_xdp", "af_packet"), default=None)
    r.add_argument("--json", action="store_true")
    r.set_defaults(func=cmd_rate_search)


def _out(a, experiment: str) -> Path:
    from linkemu.lab import results
    p = a.output or results.default_path(experiment)
    if not (p.name.endswith(".json") or p.name.endswith(".json.gz")):
        raise UsageError(f"-o {p}: the results file must end in .json or .json.gz")
    # Refused now, not when the results of a long run are to be written.
    try:
        results.check_writable(p)
    except results.ResultsError as e:
        raise UsageError(f"-o {e}") from None
    return p


def _finish(a, res: dict, path: Path) -> int:
    from linkemu.report import render, tables
    print(tables.text_summary(res))
    print(f"\nresults: {path}")
    if a.report:
        render.write_report([path], a.report)
        print(f"report:  {a.report}")
    return 0


def _given(**kw) -> dict:
    """The options given on the command line; one left at None takes the
    study's default (quick or full)."""
    return {k: v for k, v in kw.items() if v is not None}


def _parsed(parse, text: str | None, *args):
    """parse(text, *args), or None for an option not given."""
    return None if text is None else parse(text, *args)


def _words(text: str, what: str) -> tuple[str, ...]:
    """'a, b' -> ('a', 'b'). An empty item is refused: '--ccs ""' ran
    with a congestion control named ''."""
    words = tuple(x.strip() for x in text.split(","))
    if "" in words:
        raise UsageError(f"{what}: '{text}' has an empty item (a comma-separated list of names)")
    return words


def _study_options(cls, a, given: dict, **fixed):
    """The study's options: its quick or full defaults, then the bed, pmd,
    seed and quiet every study takes, the study's own `fixed` ones and the
    options `given`."""
    kw = dict(bed=a.bed, pmd=a.pmd, seed=a.seed, quiet=a.quiet, **fixed, **given)
    return cls.quick_defaults(**kw) if a.quick else cls(**kw)


def _run_study(a, o, run, experiment: str) -> tuple[dict, int]:
    """Checks the options, runs the study into its results file and prints
    its summary: (results, exit status)."""
    o.validate()
    path = _out(a, experiment)
    res = run(o, path)
    return res, _finish(a, res, path)


def _quick_checks_failed(o, res: dict) -> bool:
    """A quick run is also the study's test: its checks must all pass."""
    return o.quick and not res["summary"]["all_pass"]


def cmd_delay(a) -> int:
    from linkemu.lab import delay_precision as dp
    given = _given(delays_ns=_parsed(parse_delays, a.delays),
                   sizes=_parsed(parse_ints, a.sizes, "--sizes"),
                   rates=_parsed(_words, a.rates, "--rates"),
                   moderate_pps=a.moderate_pps, high_pps=_parsed(parse_high, a.high_pps),
                   seconds=a.seconds, noise_seconds=a.noise_seconds)
    o = _study_options(dp.DelayOptions, a, given, keep_raw=not a.no_raw)
    return _run_study(a, o, dp.run, "delay-precision")[1]


def cmd_loss(a) -> int:
    from linkemu.lab import loss_accuracy as la
    given = _given(levels=_parsed(parse_floats, a.levels, "--levels"), frames=a.frames,
                   pps=a.pps, confidence=a.confidence, tcp_seconds=a.tcp_seconds,
                   tcp_levels=_parsed(parse_floats, a.tcp_levels, "--tcp-levels"),
                   ccs=_parsed(_words, a.ccs, "--ccs"), tcp=False if a.no_tcp else None,
                   noise_seconds=a.noise_seconds)
    o = _study_options(la.LossOptions, a, given)
    if a.no_ge:
        o.ge = None  # None is also "not given" to the defaults: set after
    return _run_study(a, o, la.run, "loss-accuracy")[1]


def cmd_lfp(a) -> int:
    from linkemu.lab import lfp
    given = _given(windows_kb=_parsed(parse_ints, a.windows, "--windows"),
                   senders=_parsed(_words, a.senders, "--senders"), runs=a.runs, seconds=a.seconds,
                   table2_seconds=a.seconds, table2=False if a.no_table2 else None)
    o = _study_options(lfp.LfpOptions, a, given)
    res, rc = _run_study(a, o, lfp.run, "lfp")
    failed = lfp.failed_checks(res)
    if failed:
        print("\n".join(failed))
        return 1
    return rc


def cmd_cellular(a) -> int:
    from linkemu.lab import cellular
    links = _parsed(_words, a.links, "--links")
    unit_links = None if links is None else tuple(l for l in cellular.pub.UNIT_LINKS if l in links)
    given = _given(links=links, unit_links=unit_links,
                   protos=_parsed(_words, a.protos, "--protos"), unit_runs=a.unit_runs,
                   iperf_runs=a.iperf_runs, iperf_seconds=a.iperf_seconds,
                   ping_seconds=a.ping_seconds, **{"quick_units" if a.quick else "units": a.units})
    o = _study_options(cellular.CellularOptions, a, given, keep_raw=not a.no_raw)
    res, rc = _run_study(a, o, cellular.run, "cellular")
    return 1 if _quick_checks_failed(o, res) else rc


def cmd_forwarding(a) -> int:
    from linkemu.lab import forwarding as fw
    given = _given(sizes=_parsed(parse_ints, a.sizes, "--sizes"),
                   paths=_parsed(_words, a.paths, "--paths"),
                   udp_seconds=a.udp_seconds, tcp_seconds=a.tcp_seconds, repeats=a.repeats,
                   rounds=a.rounds, offered=a.offered, long_seconds=a.long_seconds, lock=a.lock,
                   quiet_wait_s=a.quiet_wait)
    o = _study_options(fw.ForwardingOptions, a, given)
    res, rc = _run_study(a, o, fw.run, "forwarding")
    return 1 if _quick_checks_failed(o, res) else rc


def cmd_noise(a) -> int:
    from linkemu.bed import cpus
    from linkemu.instruments import noisefloor
    from linkemu.lab import analysis
    if not 0.1 <= a.seconds <= 3600:
        raise UsageError("--seconds must be 0.1 .. 3600")
    cpus = a.cpu or [cpus.daemon_cpu()] + cpus.tool_cpu_list()[:1]
    out = {}
    for c in cpus:
        nf = noisefloor.noise_floor(c, a.seconds)
        nf["stall_residual_ns"] = round(analysis.stall_residual_ns(nf), 2)
        out[str(c)] = nf
    if a.json:
        print(json.dumps(out, indent=2))
        return 0
    from linkemu.report import tables
    print(tables.render_text(tables.noise_table({f"CPU {k}": v for k, v in out.items()})))
    return 0


def cmd_rate_search(a) -> int:
    from linkemu.lab import delay_precision as dp
    from linkemu.lab.session import LabSession, Progress
    sizes = parse_ints(a.sizes, "--sizes")
    prog = Progress([10 * a.seconds + 3] * len(sizes))
    found = []
    with LabSession(a.bed, a.pmd) as sess:
        for s in sizes:
            prog.step(f"rate search, {s} B")
            found.append(dp.rate_search(sess, s, a.seconds, prog))
    if a.json:
        print(json.dumps(found, indent=2))
    else:
        for f in found:
            print(f"{f['ip_len']:>5} B: highest loss-free rate {f['max_pps']:.0f} pps "
                  f"(first failing {f['first_failing_pps'] or '-'}); high rate for "
                  f"delay-precision: {dp.HIGH_SHARE:.0%} = {f['max_pps'] * dp.HIGH_SHARE:.0f} pps")
    return 0
