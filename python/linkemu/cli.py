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

from linkemu import __version__, api, attached, ctl_cli, daemon, profile_cli, testbed
from linkemu.errors import LinkemuError, UsageError
from linkemu.interrupts import interruptible, shielded


def _err(msg: str) -> None:
    print(f"linkemu: {msg}", file=sys.stderr)


# --- testbed --------------------------------------------------------------------

def _bed(a: argparse.Namespace) -> api.Bed:
    """The bed the options name: --ports, --between, or the bed of --bed."""
    if getattr(a, "ports", None):
        port_a, _, port_b = a.ports.partition(",")
        return api.Bed.ports(port_a, port_b, name=a.bed)
    if getattr(a, "between", None):
        return api.Bed.between(*a.between, name=a.bed, dev=a.dev or attached.DEFAULT_DEV,
                               addr_a=a.addr_a or "", addr_b=a.addr_b or "")
    for opt in ("dev", "addr_a", "addr_b"):
        if getattr(a, opt, None):
            raise UsageError(f"--{opt.replace('_', '-')} is for --between NS_A NS_B")
    return api.Bed(a.bed)


def _bring_up(bed: api.Bed, pmd: str = "af_xdp") -> dict:
    """bed.up(), removing what this call built if it fails or is interrupted.
    A bed that was up before is left as it was (it may carry a running
    daemon); `up` reported what is wrong with it."""
    was_up = bed.is_up()
    try:
        return bed.up(pmd)
    except BaseException:
        if not was_up:
            with shielded():
                bed.down()
        raise


def cmd_testbed(a: argparse.Namespace) -> int:
    if a.action != "up" and (a.between or a.dev or a.addr_a or a.addr_b):
        raise UsageError(f"--between, --dev and --addr-a/b are for `testbed up`; "
                         f"`testbed {a.action}` takes only --bed")
    bed = _bed(a)
    if a.action == "up":
        with interruptible():
            st = _bring_up(bed)
        _print_status(bed, st, a.json)
        return 0
    if a.action == "down":
        with shielded():
            done = bed.down()
        if a.json:
            print(json.dumps({"bed": bed.name, "done": done}, indent=2))
        else:
            print(f"test bed '{bed.name}': " + ("removed" if done else "nothing to remove"))
            for d in done:
                print(f"  {d}")
        return 0
    _print_status(bed, bed.status(), a.json)
    return 0


def _print_status(bed: api.Bed, st: dict, as_json: bool) -> None:
    print(json.dumps(st, indent=2) if as_json else bed.format_status(st))


# --- run / stop -------------------------------------------------------------------

def cmd_run(a: argparse.Namespace) -> int:
    bed = _bed(a)
    a2b, b2a = api.resolve_links(a.a2b, a.b2a, a.profile)
    daemon.validate(daemon.DaemonConfig(bed=bed.layout, a2b=a2b, b2a=b2a,
                                        pmd=a.pmd or "af_xdp", lcores=a.lcores or "",
                                        layout=a.layout, seed=a.seed))
    daemon.require_binary()
    scen = ctl_cli.run_scenario_load(a)   # checked before anything starts; None without --scenario
    bed.require_no_daemon()
    with interruptible():
        if not bed.is_up() and bed.kind != "ports":
            print(f"linkemu: bringing up test bed '{bed.name}'", file=sys.stderr)
        # Always: up is idempotent, and on a built bed it re-checks what
        # the daemon relies on (offloads off, hugepages free).
        _bring_up(bed, a.pmd or "af_xdp")
        link = bed.run(a2b, b2a, pmd=a.pmd, lcores=a.lcores, layout=a.layout, seed=a.seed)
        player = ctl_cli.run_scenario_start(scen, bed.layout, a.detach, link._daemon)
        ready = (f"linkemud ready on bed '{bed.name}' (pid {link.pid}, {link.pmd}, "
                 f"lcores {a.lcores or daemon.default_lcores()})")
        if a.detach:
            link.detach()
            print(f"{ready}\n  stop it with: linkemu stop --bed {bed.name}", file=sys.stderr)
            return 0
        try:
            print(f"{ready}\n  a2b: {a2b or '(no impairment)'}\n"
                  f"  b2a: {b2a or '(no impairment)'}\n  Ctrl-C to stop", file=sys.stderr)
            while link.exit_code() is None:
                time.sleep(0.2)
        except KeyboardInterrupt:
            pass
    with shielded():
        ctl_cli.run_scenario_stop(player)
        crashed = link.exit_code()
        report = _stop(link)
    rc = _report_stop(report, as_json=False)
    if crashed is not None:
        _err(f"linkemud exited by itself with code {crashed}; log:\n"
             f"{daemon.log_tail(bed.layout)}")
        return 1
    return rc


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
        _err(str(e))
        return None
    if report.how == "killed":
        _err(f"linkemud (pid {report.pid}) did not exit within {daemon.STOP_TIMEOUT_S:.0f} s "
             f"of SIGTERM and was killed (SIGKILL)")
    return report


def _report_stop(report, as_json: bool) -> int:
    if report is None:
        return 1
    print(json.dumps(report.raw, indent=2) if as_json else report.format())
    if report.problems:
        _err("frame conservation violated:\n  " + "\n  ".join(report.problems))
        return 1
    return 0


# --- exec / demo -----------------------------------------------------------------

def cmd_exec(a: argparse.Namespace) -> int:
    bed = api.Bed(a.bed)
    if not a.cmd:
        raise UsageError("exec: no command given (linkemu exec src -- CMD ...)")
    ref = bed.ref(a.where)
    if not ref.exists():
        raise LinkemuError(f"namespace {ref} does not exist: "
                           f"run `linkemu testbed up --bed {bed.name}` first")
    sys.stdout.flush()
    sys.stderr.flush()
    argv = bed.argv(a.where, a.cmd, cpus=None)
    try:
        os.execvp(argv[0], argv)
    except OSError as e:
        raise LinkemuError(f"cannot run {argv[0]}: {e}") from e
    return 1  # not reached


def cmd_demo(a: argparse.Namespace) -> int:
    from linkemu import demo
    return demo.run(api.Bed(a.bed), seconds=a.seconds)


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
    tb.add_argument("--between", nargs=2, metavar=("NS_A", "NS_B"), default=None,
                    help="put the link between two namespaces you have (ip netns names, or "
                         "process ids whose namespace to use, e.g. a container's): a veth "
                         "into each; `down` removes only those")
    tb.add_argument("--dev", default=None, metavar="NAME",
                    help=f"with --between: the veth's name inside NS_A and NS_B "
                         f"(default {attached.DEFAULT_DEV})")
    tb.add_argument("--addr-a", default=None, metavar="CIDR",
                    help="with --between: address for NS_A's end (default: none)")
    tb.add_argument("--addr-b", default=None, metavar="CIDR",
                    help="with --between: address for NS_B's end (default: none)")
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
    r.add_argument("--ports", default=None, metavar="IF_A,IF_B",
                   help="run on two existing host interfaces (AF_XDP/AF_PACKET) or "
                        "DPDK-bound PCI addresses instead of a bed; nothing of them is "
                        "changed (--bed names the run's files)")
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

    from linkemu import shell_cli
    shell_cli.register(sub)  # shell [LINKS] -- COMMAND
    ctl_cli.register(sub)   # ctl, stats, capture, scenario
    profile_cli.register(sub)  # profile list|show|check
    from linkemu.lab.cli import register as lab_register
    from linkemu.report.cli import register as report_register
    lab_register(sub)       # lab EXPERIMENT (delay-precision, loss-accuracy, noise, rate-search)
    report_register(sub)    # report FILE... -o OUT.html
    return ap


NO_ROOT_COMMANDS = {"exec", "report", "profile"}


def _needs_root(a: argparse.Namespace) -> bool:
    if a.command in NO_ROOT_COMMANDS:
        return False
    # `scenario check` only validates a file.
    return not (a.command == "scenario" and getattr(a, "scenario_command", None) == "check")


def main(argv: list[str] | None = None) -> int:
    # `linkemu ... | head` should end quietly, as other commands do.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    ap = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    tail: list[str] = []
    if "--" in argv and {"exec", "shell"} & set(argv[:argv.index("--")]):
        i = argv.index("--")
        argv, tail = argv[:i], argv[i + 1:]
    a = ap.parse_args(argv)   # exits 2 with a message on bad usage
    if a.command in ("exec", "shell"):
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
