"""The `linkemu` command: the parser and main().

Each command group lives in its own module of this package (testbed, run,
demo, ctl, capture, scenario, profile, lab, report) with a register(sub)
function; see cli/common.py for the conventions they share.

Exit codes: 0 success, 1 a step failed, 2 usage error (bad arguments, bad
link grammar). Errors are printed as one message naming the failed step,
never as a traceback; so is a standard output that cannot be written
(cli/stdout_guard.py).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys

from linkemu import __version__
from linkemu.cli import (capture, cc, ctl, demo, lab, profile, report, run, scenario, shell,
                         testbed, units)
from linkemu.cli.common import bed_parent, err
from linkemu.cli.stdout_guard import guarded_stdout
from linkemu.errors import LinkemuError, UsageError


def build_parser() -> argparse.ArgumentParser:
    bed_opt = bed_parent()
    ap = argparse.ArgumentParser(
        prog="linkemu", description="DPDK link emulator: test bed, daemon control, measurements")
    ap.add_argument("--version", action="version", version=f"linkemu {__version__}")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND", required=True)
    testbed.register(sub, bed_opt)   # testbed up|down|status, exec
    run.register(sub, bed_opt)       # run, stop
    demo.register(sub, bed_opt)      # demo
    shell.register(sub)              # shell [LINKS] -- COMMAND
    ctl.register(sub)                # ctl, stats
    capture.register(sub)            # capture
    scenario.register(sub)           # scenario check|play
    profile.register(sub)            # profile list|show|check
    units.register(sub)              # units server|client|run
    lab.register(sub)                # lab EXPERIMENT
    report.register(sub)             # report FILE... -o OUT.html
    cc.register(sub)                 # cc list|load|unload|stats (BPF congestion controls)
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
    if "--" in argv and {"exec", "shell"} & set(argv[:argv.index("--")]):
        i = argv.index("--")
        argv, tail = argv[:i], argv[i + 1:]
    a = ap.parse_args(argv)   # exits 2 with a message on bad usage
    if a.command in ("exec", "shell"):
        a.cmd = tail
    # Reading results and profiles touches no namespace, hugepage or port.
    if os.geteuid() != 0 and _needs_root(a):
        err("must run as root (namespaces, veths, hugepages, DPDK)")
        return 1
    try:
        with guarded_stdout():   # a failed write to stdout: one message, exit 1
            return a.func(a)
    except UsageError as e:
        # The daemon's own words (its grammar errors) keep its name.
        print(str(e) if str(e).startswith(("linkemud:", "linkemuk:")) else f"linkemu: {e}",
              file=sys.stderr)
        return 2
    except LinkemuError as e:
        err(str(e))
        return 1
    except KeyboardInterrupt:
        err("interrupted")
        return 1


if __name__ == "__main__":
    sys.exit(main())
