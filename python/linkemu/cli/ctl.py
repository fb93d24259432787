"""`linkemu ctl ACTION` and `linkemu stats [--watch]`: a running linkemud
over its control socket (docs/control.md)."""

from __future__ import annotations

import argparse
import json

from linkemu import api
from linkemu.cli.common import daemon_options, refused, seconds
from linkemu.daemon import control, watch
from linkemu.daemon.control import DaemonRefused
from linkemu.daemon.summary import fmt_direction
from linkemu.errors import UsageError


def format_stats(st: dict) -> str:
    head = (f"linkemud {st.get('version', '?')}: layout {st.get('layout', '?')}, "
            f"{st.get('lcores', '?')} lcore(s), up {st.get('uptime_s', 0):.1f} s (live)")
    if "mempool_in_use" in st:
        head += f", mbufs in use {st['mempool_in_use']}"
    lines = [head]
    for name in ("a2b", "b2a"):
        d = st.get("directions", {}).get(name)
        if d is not None:
            lines += fmt_direction(name, d)
    return "\n".join(lines)


def cmd_ctl(a: argparse.Namespace) -> int:
    bed = api.Bed(a.bed)
    if a.ctl_command == "telemetry":
        reply = control.telemetry_query(control.telemetry_path(bed.file_prefix), a.command,
                                        a.timeout)
        print(json.dumps(reply, indent=2))
        return 0
    with bed.control(a.timeout) as c:
        try:
            if a.ctl_command == "set":
                reply = c.set(a.direction, " ".join(a.grammar))
                if a.json:
                    print(json.dumps(reply))
                else:
                    print(f"{a.direction}: {reply.get('config') or '(no impairment)'}")
            elif a.ctl_command == "show":
                links = c.show()
                if a.json:
                    print(json.dumps(links, indent=2))
                else:
                    for d, g in links.items():
                        print(f"{d}: {g or '(no impairment)'}")
            elif a.ctl_command == "stats":
                st = c.stats()
                print(json.dumps(st, indent=2) if a.json else format_stats(st))
            elif a.ctl_command == "reset-stats":
                c.reset_stats()
                print("counters and histograms reset")
            elif a.ctl_command == "help":
                print(c.help())
            elif a.ctl_command == "raw":
                reply = c.request(a.line)
                print(json.dumps(reply))
                return 0 if reply.get("ok") is True else 1
        except DaemonRefused as e:
            return refused(e)
    return 0


# --- stats -----------------------------------------------------------------------------

def cmd_stats(a: argparse.Namespace) -> int:
    bed = api.Bed(a.bed)
    if a.interval <= 0:
        raise UsageError("--interval must be more than 0")
    count = 1 if a.once else a.count
    if count is not None and count < 1:
        raise UsageError("--count must be at least 1")
    with bed.control(a.timeout) as c:
        try:
            if a.watch or count is not None:
                return watch.watch(c, bed.name, a.interval, count, as_json=a.json)
            st = c.stats()
        except DaemonRefused as e:
            return refused(e)
    print(json.dumps(st, indent=2) if a.json else format_stats(st))
    return 0


def register(sub) -> None:
    """Add ctl and stats to the main parser."""
    c = sub.add_parser("ctl", help="talk to a running linkemud over its control socket",
                       description="Send commands to the bed's running linkemud "
                                   "(/run/linkemu/BED/control.sock, docs/control.md).")
    daemon_options(c, True)
    cs = c.add_subparsers(dest="ctl_command", metavar="ACTION", required=True)
    p = cs.add_parser("set", help="change one direction's link, e.g. set a2b delay 20ms")
    daemon_options(p, False)
    p.add_argument("direction", choices=control.DIRECTIONS)
    p.add_argument("grammar", nargs="*", metavar="GRAMMAR",
                   help="link grammar (one quoted argument or several words); none = "
                        "no impairment")
    p.add_argument("--json", action="store_true", help="print the daemon's reply")
    p = cs.add_parser("show", help="the current links as grammar")
    daemon_options(p, False)
    p.add_argument("--json", action="store_true")
    p = cs.add_parser("stats", help="live counters")
    daemon_options(p, False)
    p.add_argument("--json", action="store_true", help="the daemon's stats object")
    p = cs.add_parser("reset-stats", help="counters and histograms restart from zero")
    daemon_options(p, False)
    p = cs.add_parser("help", help="the daemon's own help")
    daemon_options(p, False)
    p = cs.add_parser("raw", help="send one line as is, print the reply (exit 1 unless ok)")
    daemon_options(p, False)
    p.add_argument("line", metavar="LINE")
    p = cs.add_parser("telemetry", help="query the DPDK telemetry socket "
                                        "(default command /linkemu/stats)")
    daemon_options(p, False)
    p.add_argument("command", nargs="?", default="/linkemu/stats", metavar="COMMAND")
    c.set_defaults(func=cmd_ctl)

    s = sub.add_parser("stats", help="live counters of a running linkemud; --watch for a live "
                                     "view")
    daemon_options(s, True)
    s.add_argument("--watch", "-w", action="store_true",
                   help="redraw every interval until Ctrl-C")
    s.add_argument("--interval", type=seconds, default=1.0, metavar="S",
                   help="seconds between frames (default: 1)")
    s.add_argument("--once", action="store_true", help="one frame (rates over one interval)")
    s.add_argument("--count", type=int, default=None, metavar="N", help="N frames, then exit")
    s.add_argument("--json", action="store_true",
                   help="JSON: the stats object, or with --watch one line of rates per frame")
    s.set_defaults(func=cmd_stats)
