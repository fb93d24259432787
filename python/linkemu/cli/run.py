"""`linkemu run` (start linkemud on a bed, optionally playing a scenario)
and `linkemu stop` (stop it, print the final counters)."""

from __future__ import annotations

import argparse
import json
import sys
import time

from linkemu.bed import testbed
from linkemu.bed.interrupts import interruptible, shielded
from linkemu.cli import profile, scenario
from linkemu.cli.common import err
from linkemu.daemon import daemon
from linkemu.daemon.summary import conservation_problems, format_final
from linkemu.errors import LinkemuError


def cmd_run(a: argparse.Namespace) -> int:
    bed = testbed.bed_for(a.bed)
    a2b, b2a = profile.links_for_run(a)
    cfg = daemon.DaemonConfig(bed=bed, a2b=a2b, b2a=b2a, pmd=a.pmd or "af_xdp",
                              lcores=a.lcores or "", layout=a.layout, seed=a.seed)
    daemon.validate(cfg)
    binary = daemon.require_binary()
    scen = scenario.run_scenario_load(a)   # checked before anything starts; None without --scenario
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
        player = scenario.run_scenario_start(scen, bed, a.detach, d)
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
        scenario.run_scenario_stop(player)
        crashed = d.popen.poll()
        res = daemon.stop(bed, d.popen)
    rc = _report_stop(res, as_json=False)
    if crashed is not None:
        err(f"linkemud exited by itself with code {crashed}; log:\n{daemon.log_tail(bed)}")
        return 1
    return rc


def cmd_stop(a: argparse.Namespace) -> int:
    bed = testbed.bed_for(a.bed)
    with shielded():
        res = daemon.stop(bed)
    return _report_stop(res, a.json)


def _report_stop(res: daemon.StopResult, as_json: bool) -> int:
    if res.how == "killed":
        err(f"linkemud (pid {res.pid}) did not exit within {daemon.STOP_TIMEOUT_S:.0f} s "
             f"of SIGTERM and was killed (SIGKILL)")
    if res.final is None:
        err(res.error or "no final counters")
        return 1
    problems = conservation_problems(res.final)
    if as_json:
        print(json.dumps(res.final, indent=2))
    else:
        print(format_final(res.final))
    if problems:
        err("frame conservation violated:\n  " + "\n  ".join(problems))
        return 1
    return 0


def register(sub, bed_opt: argparse.ArgumentParser) -> None:
    """Add run and stop to the main parser."""
    r = sub.add_parser("run", parents=[bed_opt], help="start linkemud on a bed")
    r.add_argument("--a2b", default=None, metavar="GRAMMAR",
                   help="link src -> dst, netem words (e.g. 'delay 10ms loss 1%%'); "
                        "empty = no impairment")
    r.add_argument("--b2a", default=None, metavar="GRAMMAR", help="link dst -> src")
    profile.add_run_option(r)
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
