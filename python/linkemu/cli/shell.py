"""`linkemu shell [LINKS] -- COMMAND`: run a program behind an emulated link.

Mahimahi's habit (`mm-delay 20 -- cmd`) and Rattan's (`rattan link -- cmd`):
COMMAND runs in a namespace whose only way out is linkemud, and the far
side of the link is the host itself, at the address in $LINKEMU_HOST. When
COMMAND exits, the daemon stops, its final counters are printed (on
stderr, so COMMAND's output stays clean) and everything is removed; the
exit status is COMMAND's.

Signals: while COMMAND runs, Ctrl-C belongs to it (the terminal sends it
to COMMAND as to us; we wait for COMMAND to end, then clean up), just as a
shell does for its foreground job. SIGTERM or SIGHUP sent to linkemu is
passed on to COMMAND. Before and after, any of them means: clean up, exit.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys

from linkemu import api
from linkemu.bed import procs
from linkemu.bed.interrupts import interruptible, shielded
from linkemu.cli import profile
from linkemu.daemon import daemon
from linkemu.errors import LinkemuError

EPILOG = """\
directions: a2b is the uplink, from COMMAND to the host; b2a is the
downlink, from the host to COMMAND. Each takes netem words, e.g.
"delay 20ms rate 10mbit loss 1%" (docs/grammar.md).

COMMAND sees:
  LINKEMU_HOST  the host's end of the link (servers on the host listening
                there, or on 0.0.0.0, answer through the link)
  LINKEMU_ADDR  COMMAND's own address
  LINKEMU_BED   the bed's name (linkemu ctl --bed NAME set a2b ... changes the
                link while COMMAND runs)

examples:
  linkemu shell --a2b "delay 20ms" --b2a "delay 20ms" -- sh -c 'ping -c 20 $LINKEMU_HOST'
  linkemu shell --profile lte-uplink               # an interactive shell
"""

WATCH_INTERVAL_S = 0.2
# COMMAND's time to end after SIGTERM once its link is gone, before SIGKILL.
END_GRACE_S = 5.0


def register(sub) -> None:
    p = sub.add_parser(
        "shell", help="run COMMAND (default: a shell) behind an emulated link to the host",
        usage="linkemu shell [--a2b LINK] [--b2a LINK | --profile NAME] [--bed NAME] "
              "[options] [-- COMMAND [ARGS...]]",
        description="Run COMMAND in a network namespace whose only way out passes through "
                    "linkemud to the host; exit with COMMAND's status.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--a2b", default=None, metavar="LINK",
                   help="uplink: COMMAND -> host (netem words; default: no impairment)")
    p.add_argument("--b2a", default=None, metavar="LINK",
                   help="downlink: host -> COMMAND")
    profile.add_run_option(p)
    p.add_argument("--bed", default=None, metavar="NAME",
                   help="bed name, 1-8 of [a-z0-9] (default: the first free of sh0, sh1, ...)")
    p.add_argument("--pmd", choices=daemon.PMDS, default=None,
                   help="DPDK driver for the veths (default af_xdp, falling back to af_packet)")
    p.add_argument("--lcores", default=None, metavar="LIST", help="EAL lcore list")
    p.add_argument("--seed", type=int, default=None, metavar="N")
    p.add_argument("--cpus", default="auto", metavar="LIST",
                   help="CPUs for COMMAND (default: those linkemud does not poll; 'all': any)")
    p.add_argument("--quiet", "-q", action="store_true",
                   help="print no banner and no final counters")
    p.set_defaults(func=cmd_shell, cmd=[])


def cmd_shell(a: argparse.Namespace) -> int:
    a2b, b2a = api.resolve_links(a.a2b, a.b2a, a.profile)
    command = a.cmd or [os.environ.get("SHELL") or "/bin/sh"]
    cpus = None if a.cpus == "all" else a.cpus
    daemon.require_binary()
    bed = api.Bed.shell(a.bed)
    link = None
    # Shielded around the whole, for the reason in demo.run: no gap between
    # the work and the cleanup where a signal is not ignored.
    with shielded():
        try:
            with interruptible():
                bed.__enter__()
                link = bed.run(a2b, b2a, pmd=a.pmd, lcores=a.lcores, seed=a.seed)
                env = {"LINKEMU_HOST": bed.addr("dst"), "LINKEMU_ADDR": bed.addr("src"),
                       "LINKEMU_BED": bed.name}
                if not a.quiet:
                    print(f"linkemu shell on bed '{bed.name}': you are {bed.addr('src')}, the "
                          f"host is {bed.addr('dst')} ($LINKEMU_HOST)\n"
                          f"  a2b (uplink):   {a2b or '(no impairment)'}\n"
                          f"  b2a (downlink): {b2a or '(no impairment)'}", file=sys.stderr)
                rc = run_foreground(bed.argv("src", command, cpus), env, link)
        finally:
            report = None
            if link is not None:
                try:
                    report = link.stop()
                except LinkemuError as e:
                    print(f"linkemu: {e}", file=sys.stderr)
            bed.__exit__(None, None, None)
    if report is not None:
        if not a.quiet:
            print(report.format(), file=sys.stderr)
        for p in report.problems:
            print(f"linkemu: frame conservation violated: {p}", file=sys.stderr)
    return rc


def run_foreground(argv: list[str], env: dict, link: api.Link) -> int:
    """Run argv as a foreground job and return its exit status (128+N if a
    signal N ended it). If the daemon dies meanwhile, COMMAND is ended (its
    link is gone) and the status is 1."""
    import subprocess

    def forward(signum, _frame):
        if child.poll() is None:
            child.send_signal(signum)

    # Handlers, not SIG_IGN: exec resets handled signals to their defaults,
    # so COMMAND gets the terminal's Ctrl-C as it would without us.
    old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    signal.signal(signal.SIGINT, lambda *_: None)
    try:
        child = subprocess.Popen(argv, env={**os.environ, **env})
        for s in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, forward)
        while True:
            try:
                rc = child.wait(WATCH_INTERVAL_S)
                break
            except subprocess.TimeoutExpired:
                pass
            code = link.exit_code()
            if code is not None:
                print(f"linkemu: linkemud exited by itself (code {code}) while COMMAND ran; "
                      f"ending COMMAND", file=sys.stderr)
                # SIGKILL after the grace: an interactive shell (the
                # default COMMAND) ignores SIGTERM, and waiting on would
                # hang until the user left it.
                procs.terminate(child.pid, END_GRACE_S, child)
                return 1
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    return 128 - rc if rc < 0 else rc
