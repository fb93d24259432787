"""The `linkemu` command.

Exit codes: 0 success, 1 a step failed, 2 usage error (bad arguments, bad
link grammar). Errors are printed as one message naming the failed step,
never as a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time

from linkemu import __version__, ctl_cli, daemon, profile_cli, testbed
from linkemu.errors import LinkemuError, UsageError
from linkemu.interrupts import interruptible, shielded
from linkemu.summary import conservation_problems, format_final


def _err(msg: str) -> None:
    print(f"linkemu: {msg}", file=sys.stderr)


# --- testbed --------------------------------------------------------------------

def cmd_testbed(a: argparse.Namespace) -> int:
    bed = testbed.bed_for(a.bed)
    if a.action == "up":
        was_up = testbed.status(bed)["up"]
        with interruptible():
            try:
                st = testbed.up(bed)
            except BaseException:
                # A half-built bed is worse than none: remove what this call
                # built. A bed that was up before is left as it was (it may
                # carry a running daemon); `up` reported what is wrong with it.
                if not was_up:
                    with shielded():
                        testbed.down(bed)
                raise
        _print_status(st, a.json)
        return 0
    if a.action == "down":
        with shielded():
            done = testbed.down(bed)
        if a.json:
            print(json.dumps({"bed": bed.name, "done": done}, indent=2))
        else:
            print(f"test bed '{bed.name}': " + ("removed" if done else "nothing to remove"))
            for d in done:
                print(f"  {d}")
        return 0
    st = testbed.status(bed)
    _print_status(st, a.json)
    return 0


def _print_status(st: dict, as_json: bool) -> None:
    print(json.dumps(st, indent=2) if as_json else testbed.format_status(st))


# --- run / stop -------------------------------------------------------------------

def cmd_run(a: argparse.Namespace) -> int:
    bed = testbed.bed_for(a.bed)
    a2b, b2a = profile_cli.links_for_run(a)
    cfg = daemon.DaemonConfig(bed=bed, a2b=a2b, b2a=b2a, pmd=a.pmd or "af_xdp",
                              lcores=a.lcores or "", layout=a.layout, seed=a.seed)
    daemon.validate(cfg)
    binary = daemon.require_binary()
    scen = ctl_cli.run_scenario_load(a)   # checked before anything starts; None without --scenario
    running = testbed.daemon_pid(bed)
    if running is not None:
        raise LinkemuError(f"linkemud is already running on bed '{bed.name}' (pid {running}); "
                           f"run `linkemu stop --bed {bed.name}` first")
    with interruptible():
        was_up = testbed.status(bed)["up"]
        if not was_up:
            print(f"linkemu: bringing up test bed '{bed.name}'", file=sys.stderr)
        try:
            # Always: up is idempotent, and on a built bed it re-checks what
            # the daemon relies on (offloads off, hugepages free).
            testbed.up(bed)
        except BaseException:
            if not was_up:
                with shielded():
                    testbed.down(bed)
            raise
        d = daemon.start_auto(cfg, binary, fallback=a.pmd is None)
        player = ctl_cli.run_scenario_start(scen, bed, a.detach, d)
        ready = (f"linkemud ready on bed '{bed.name}' (pid {d.pid}, {d.config.pmd}, "
                 f"lcores {cfg.lcores or daemon.default_lcores()})")
        if a.detach:
            print(f"{ready}\n  stop it with: linkemu stop --bed {bed.name}", file=sys.stderr)
            return 0
        try:
            print(f"{ready}\n  a2b: {cfg.a2b or '(no impairment)'}\n"
                  f"  b2a: {cfg.b2a or '(no impairment)'}\n  Ctrl-C to stop", file=sys.stderr)
            while d.popen.poll() is None:
                time.sleep(0.2)
        except KeyboardInterrupt:
            pass
    with shielded():
        ctl_cli.run_scenario_stop(player)
        crashed = d.popen.poll()
        res = daemon.stop(bed, d.popen)
    rc = _report_stop(res, as_json=False)
    if crashed is not None:
        _err(f"linkemud exited by itself with code {crashed}; log:\n{daemon.log_tail(bed)}")
        return 1
    return rc


def cmd_stop(a: argparse.Namespace) -> int:
    bed = testbed.bed_for(a.bed)
    with shielded():
        res = daemon.stop(bed)
    return _report_stop(res, a.json)


def _report_stop(res: daemon.StopResult, as_json: bool) -> int:
    if res.how == "killed":
        _err(f"linkemud (pid {res.pid}) did not exit within {daemon.STOP_TIMEOUT_S:.0f} s "
             f"of SIGTERM and was killed (SIGKILL)")
    if res.final is None:
        _err(res.error or "no final counters")
        return 1
    problems = conservation_problems(res.final)
    if as_json:
        print(json.dumps(res.final, indent=2))
    else:
        print(format_final(res.final))
    if problems:
        _err("frame conservation violated:\n  " + "\n  ".join(problems))
        return 1
    return 0


# --- exec / demo -----------------------------------------------------------------

def cmd_exec(a: argparse.Namespace) -> int:
    bed = testbed.bed_for(a.bed)
    cmd = a.cmd
    if not cmd:
        raise UsageError("exec: no command given (linkemu exec src -- CMD ...)")
    ns = bed.namespace(a.where)
    from linkemu import netns
    if not netns.ns_exists(ns):
        raise LinkemuError(f"namespace {ns} does not exist: "
                           f"run `linkemu testbed up --bed {bed.name}` first")
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execvp("ip", ["ip", "netns", "exec", ns, *cmd])
    except OSError as e:
        raise LinkemuError(f"cannot run ip netns exec: {e}") from e
    return 1  # not reached


def cmd_demo(a: argparse.Namespace) -> int:
    from linkemu import demo
    return demo.run(testbed.bed_for(a.bed), seconds=a.seconds)


# --- parser -------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    bed_opt = argparse.ArgumentParser(add_help=False)
    bed_opt.add_argument("--bed", default=testbed.DEFAULT_BED, metavar="NAME",
                         help="test bed name (default: %(default)s; others: 1-8 of [a-z0-9])")
    ap = argparse.ArgumentParser(
        prog="linkemu", description="DPDK link emulator: test bed, daemon control, measurements")
    ap.add_argument("--version", action="version", version=f"linkemu {__version__}")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND", required=True)

    tb = sub.add_parser("testbed", parents=[bed_opt], help="build, remove or show a test bed")
    tb.add_argument("action", choices=("up", "down", "status"))
    tb.add_argument("--json", action="store_true", help="machine-readable output")
    tb.set_defaults(func=cmd_testbed)

    r = sub.add_parser("run", parents=[bed_opt], help="start linkemud on a bed")
    r.add_argument("--a2b", default=None, metavar="GRAMMAR",
                   help="link src -> dst, netem words (e.g. 'delay 10ms loss 1%%'); "
                        "empty = no impairment")
    r.add_argument("--b2a", default=None, metavar="GRAMMAR", help="link dst -> src")
    profile_cli.add_run_option(r)
    r.add_argument("--pmd", choices=daemon.PMDS, default=None,
                   help="DPDK driver for the veths (default: af_xdp, falling back to "
                        "af_packet if af_xdp does not start)")
    r.add_argument("--lcores", default=None, metavar="LIST",
                   help=f"EAL lcore list (default here: {daemon.default_lcores()})")
    r.add_argument("--layout", choices=daemon.LAYOUTS, default=None)
    r.add_argument("--seed", type=int, default=None, metavar="N")
    r.add_argument("--detach", action="store_true", help="return once the daemon is ready")
    r.add_argument("--scenario", default=None, metavar="FILE",
                   help="play a scenario file (timed link changes) once the daemon is ready")
    r.set_defaults(func=cmd_run)

    s = sub.add_parser("stop", parents=[bed_opt], help="stop linkemud, print final counters")
    s.add_argument("--json", action="store_true", help="print the daemon's final JSON")
    s.set_defaults(func=cmd_stop)

    e = sub.add_parser("exec", parents=[bed_opt], help="run a command in a bed namespace",
                       usage="linkemu exec {src,dst} [--bed NAME] -- CMD ...")
    e.add_argument("where", choices=("src", "dst"))
    # The command after `--` is split off in main(): argparse cannot mix an
    # option (--bed) between a positional and a REMAINDER list.
    e.set_defaults(func=cmd_exec)

    d = sub.add_parser("demo", parents=[bed_opt],
                       help="bed + linkemud + ping/iperf3, summary, then clean up")
    d.add_argument("--seconds", type=int, default=5, metavar="N", help="iperf3 duration")
    d.set_defaults(func=cmd_demo)

    ctl_cli.register(sub)   # ctl, stats, capture, scenario
    profile_cli.register(sub)  # profile list|show|check
    from linkemu.lab.cli import register as lab_register
    from linkemu.report.cli import register as report_register
    from linkemu.units_cli import register as units_register
    units_register(sub)     # units server|client|run
    lab_register(sub)       # lab EXPERIMENT (delay-precision, loss-accuracy, noise, rate-search)
    report_register(sub)    # report FILE... -o OUT.html
    return ap


NO_ROOT_COMMANDS = {"exec", "report", "profile"}


def _needs_root(a: argparse.Namespace) -> bool:
    if a.command in NO_ROOT_COMMANDS:
        return False
    # The units server and client are plain sockets, usable on any host.
    if a.command == "units" and getattr(a, "units_command", None) in ("server", "client"):
        return False
    # `scenario check` only validates a file.
    return not (a.command == "scenario" and getattr(a, "scenario_command", None) == "check")


def main(argv: list[str] | None = None) -> int:
    # `linkemu ... | head` should end quietly, as other commands do.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    ap = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    tail: list[str] = []
    if "--" in argv and "exec" in argv[:argv.index("--")]:
        i = argv.index("--")
        argv, tail = argv[:i], argv[i + 1:]
    a = ap.parse_args(argv)   # exits 2 with a message on bad usage
    if a.command == "exec":
        a.cmd = tail
    # Reading results and profiles touches no namespace, hugepage or port.
    if os.geteuid() != 0 and _needs_root(a):
        _err("must run as root (namespaces, veths, hugepages, DPDK)")
        return 1
    try:
        return a.func(a)
    except UsageError as e:
        print(str(e) if str(e).startswith("linkemud:") else f"linkemu: {e}", file=sys.stderr)
        return 2
    except LinkemuError as e:
        _err(str(e))
        return 1
    except KeyboardInterrupt:
        _err("interrupted")
        return 1


if __name__ == "__main__":
    sys.exit(main())
