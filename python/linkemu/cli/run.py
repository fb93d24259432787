"""`linkemu run` (start linkemud on a bed, optionally playing a scenario)
and `linkemu stop` (stop it, print the final counters)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time

from linkemu import api
from linkemu.bed import isolation
from linkemu.bed.interrupts import interruptible, shielded
from linkemu.cli import profile, punt, scenario
from linkemu.cli.common import err
from linkemu.cli.testbed import bed_from_args, bring_up
from linkemu.daemon import daemon
from linkemu.errors import LinkemuError, UsageError


def cmd_run(a: argparse.Namespace) -> int:
    bed = bed_from_args(a)
    a2b, b2a = api.resolve_links(a.a2b, a.b2a, a.profile)
    cfg = daemon.DaemonConfig(bed=bed.layout, a2b=a2b, b2a=b2a, pmd=a.pmd or "af_xdp",
                              lcores=a.lcores or "", layout=a.layout, seed=a.seed, io=a.io,
                              wait=a.wait, spin=a.spin_us)
    daemon.validate(cfg)
    away = _isolated_cpus(a)   # checked before anything starts; None without --isolate-lcore
    for line in isolation.recover_stale():   # a killed --isolate-lcore run's threads
        err(line)
    daemon.check_links(cfg, daemon.require_binary(a.io))   # both links, before any bed is built
    scen = scenario.run_scenario_load(a)   # checked before anything starts; None without --scenario
    bed.require_no_daemon()
    link = player = None
    echoes: list = []
    # Shielded around the whole: interruptible() hands back to the shield,
    # so the cleanup below starts with signals ignored. With the shield
    # entered only at the cleanup, a SIGTERM in between ended the process
    # (its default action) and left linkemud running.
    with shielded():
        try:
            with interruptible():
                if not bed.is_up() and bed.kind != "ports":
                    print(f"linkemu: bringing up test bed '{bed.name}'", file=sys.stderr)
                # Always: up is idempotent, and on a built bed it re-checks what
                # the daemon relies on (offloads off, hugepages free).
                bring_up(bed, a.pmd or "af_xdp")
                link = bed.run(a2b, b2a, pmd=a.pmd, lcores=a.lcores, layout=a.layout, seed=a.seed,
                               io=a.io, wait=a.wait, spin=a.spin_us)
                player = scenario.run_scenario_start(scen, link, a.detach)
                echoes = punt.start_echoes(a, bed.name, a2b, b2a)   # --punt-echo
                how = ("kernel sockets" if a.io == "kernel"
                       else f"{link.pmd}, lcores {a.lcores or daemon.default_lcores()}")
                ready = f"{_daemon_name(a.io)} ready on bed '{bed.name}' (pid {link.pid}, {how})"
                if a.detach:
                    link.detach()
                    link = None            # the user's now: `linkemu stop` ends it
                    print(f"{ready}\n  stop it with: linkemu stop --bed {bed.name}", file=sys.stderr)
                    return 0
                # Not this process: it mostly sleeps, and the daemon's own threads
                # are bound already (its lcores, its control threads).
                with (isolation.isolated(away, keep={os.getpid()}, say=err)
                      if away else contextlib.nullcontext({})) as moved:
                    try:
                        if away:
                            err(f"moved {isolation.describe(moved)} off CPU {','.join(map(str, sorted(away)))} "
                                "until the run ends (--isolate-lcore)")
                        print(f"{ready}\n  a2b: {a2b or '(no impairment)'}\n"
                              f"  b2a: {b2a or '(no impairment)'}\n  Ctrl-C to stop", file=sys.stderr)
                        while link.exit_code() is None:
                            time.sleep(0.2)
                    except KeyboardInterrupt:
                        pass
        except BaseException:
            # linkemud runs in a session of its own, so nothing but us stops it:
            # a step after it became ready that failed (punt_echo not built,
            # or one that cannot start) or a Ctrl-C/SIGTERM before the wait
            # above (or a second one after it)
            # would leave it running, holding its hugepages and the bed.
            if link is not None:
                scenario.run_scenario_stop(player)
                _stop(link)
                punt.reap(echoes)
            raise
        scenario.run_scenario_stop(player)
        crashed = link.exit_code()
        report = _stop(link)
        punt.reap(echoes)
    rc = _report_stop(report, as_json=False)
    if crashed is not None:
        # linkemuk does so when an interface is deleted (docs/kernel-plane.md)
        err(f"{_daemon_name(a.io)} exited by itself with code {crashed}; log:\n"
             f"{daemon.log_tail(bed.layout)}")
        return 1
    return rc


def _daemon_name(io: str) -> str:
    return "linkemuk" if io == "kernel" else "linkemud"


def _isolated_cpus(a: argparse.Namespace) -> set[int] | None:
    """The CPUs --isolate-lcore keeps other threads off, or None."""
    if not a.isolate_lcore:
        return None
    if a.detach:
        raise UsageError("--isolate-lcore needs the run in the foreground: the moved threads get "
                         "their CPUs back when it ends, and --detach returns at once")
    if a.io == "kernel":
        raise UsageError("--isolate-lcore is for linkemud's lcores; the kernel plane (--io kernel) "
                         "has none")
    away = isolation.cpus_of(a.lcores or daemon.default_lcores())
    if not set(os.sched_getaffinity(0)) - away:
        raise UsageError(f"--isolate-lcore: the lcores take every CPU this process may use "
                         f"({','.join(map(str, sorted(away)))}); nothing would be left for the others")
    return away


def cmd_stop(a: argparse.Namespace) -> int:
    bed = api.Bed(a.bed)
    with shielded():
        report = _stop(bed.attach())
    return _report_stop(report, a.json)


def _stop(link: api.Link):
    """link.stop(), or None after saying why there are no final counters."""
    try:
        report = link.stop()
    except LinkemuError as e:
        err(str(e))
        return None
    if report.how == "killed":
        err(f"linkemud (pid {report.pid}) did not exit within {daemon.STOP_TIMEOUT_S:.0f} s "
             f"of SIGTERM and was killed (SIGKILL)")
    return report


def _report_stop(report, as_json: bool) -> int:
    if report is None:
        return 1
    print(json.dumps(report.raw, indent=2) if as_json else report.format())
    if report.problems:
        err("frame conservation violated:\n  " + "\n  ".join(report.problems))
        return 1
    return 0


def add_io_option(p: argparse.ArgumentParser) -> None:
    """--io: which data plane runs the link (run, demo)."""
    p.add_argument("--io", choices=daemon.IOS, default="dpdk",
                   help="data plane: dpdk (linkemud, default) or kernel (linkemuk: AF_PACKET "
                        "sockets, no DPDK or hugepages; docs/kernel-plane.md)")


def register(sub, bed_opt: argparse.ArgumentParser) -> None:
    """Add run and stop to the main parser."""
    r = sub.add_parser("run", parents=[bed_opt], help="start linkemud on a bed")
    r.add_argument("--a2b", default=None, metavar="GRAMMAR",
                   help="link src -> dst, netem words (e.g. 'delay 10ms loss 1%%'); "
                        "empty = no impairment")
    r.add_argument("--b2a", default=None, metavar="GRAMMAR", help="link dst -> src")
    profile.add_run_option(r)
    punt.add_run_option(r)
    r.add_argument("--pmd", choices=daemon.PMDS, default=None,
                   help="DPDK driver for the veths (default: af_xdp, falling back to "
                        "af_packet if af_xdp does not start)")
    add_io_option(r)
    r.add_argument("--lcores", default=None, metavar="LIST",
                   help=f"EAL lcore list (default here: {daemon.default_lcores()})")
    r.add_argument("--layout", choices=daemon.LAYOUTS, default=None)
    r.add_argument("--seed", type=int, default=None, metavar="N")
    r.add_argument("--wait", choices=daemon.WAITS, default=None,
                   help="how the idle data plane waits: busy (poll; one CPU at 100 %%) or "
                        "adaptive (sleep until shortly before the next deadline or a frame; "
                        "default: the daemon's, docs/performance.md)")
    r.add_argument("--spin-us", default=None, metavar="N|auto",
                   help="with --wait adaptive: wake N us before a deadline and poll until it; auto "
                        "(the default): as early as 99.9 %% of the data plane's recent wake-ups were late")
    r.add_argument("--detach", action="store_true", help="return once the daemon is ready")
    r.add_argument("--isolate-lcore", action="store_true",
                   help="while the run lasts, move every other thread that may also run elsewhere "
                        "(PID 1's workers, kdamond, other sessions' processes) off the lcores' CPUs, "
                        "and give them back at the end: the millisecond tail of a shared machine "
                        "(docs/performance.md); changes other processes' CPU affinity; not with "
                        "--detach")
    r.add_argument("--scenario", default=None, metavar="FILE",
                   help="play a scenario file (timed link changes) once the daemon is ready")
    r.add_argument("--ports", default=None, metavar="IF_A,IF_B",
                   help="run on two existing host interfaces (AF_XDP/AF_PACKET) or "
                        "DPDK-bound PCI addresses instead of a bed; nothing of them is "
                        "changed (--bed names the run's files)")
    r.set_defaults(func=cmd_run)

    s = sub.add_parser("stop", parents=[bed_opt], help="stop linkemud, print final counters")
    s.add_argument("--json", action="store_true", help="print the daemon's final JSON")
    s.set_defaults(func=cmd_stop)
