"""`linkemu units server|client|run`: the unit-latency instrument's commands
(python/linkemu/instruments/units.py; docs/units.md)."""

from __future__ import annotations

import argparse
import json

from linkemu.bed import testbed
from linkemu.cli.common import output_file, port, seconds
from linkemu.errors import UsageError

def parse_time(text: str, what: str) -> int:
    """'1ms' -> 1_000_000 ns (a unit is required: ns, us, ms, s)."""
    from linkemu.daemon.scenario import parse_time as scenario_time
    try:
        return scenario_time(text)
    except ValueError as e:
        raise UsageError(f"{what}: {e}") from None


def _schedule_opts(p: argparse.ArgumentParser) -> None:
    p.add_argument("--count", type=int, default=10_000, metavar="N",
                   help="units to send (default %(default)s: 10 s at 1 ms)")
    p.add_argument("--size", type=int, default=8, metavar="B", help="bytes per unit (default 8)")
    p.add_argument("--interval", default="1ms", metavar="T",
                   help="one unit generated every T (default 1ms)")
    p.add_argument("--flush", type=int, default=10, metavar="K",
                   help="units per flush (default 10: a flush every 10 ms)")
    p.add_argument("--spin", default="100us", metavar="T",
                   help="busy-wait this long before each deadline instead of sleeping "
                        "(default 100us; 0 = only sleep)")
    p.add_argument("--align", default="0ns", metavar="T",
                   help="start the schedule on a multiple of T on the host's monotonic clock, "
                        "so clients with the same T flush in step (default 0: 20 ms from now)")
    p.add_argument("--cc", default="cubic", metavar="NAME",
                   help="congestion control, TCP and QUIC (default cubic)")
    p.add_argument("--no-nodelay", dest="nodelay", action="store_false",
                   help="TCP: leave Nagle's algorithm on (default: TCP_NODELAY set)")
    p.add_argument("--run-id", type=int, default=1, metavar="N")


def _server_opts(p: argparse.ArgumentParser) -> None:
    p.add_argument("--samples", type=output_file, default=None, metavar="FILE.npy",
                   help="write every unit's seq, generation and receive time (ns)")
    p.add_argument("--delay", default=None, metavar="D",
                   help="one-way delay of the path: report the ideal band D+T .. D+K*T")
    p.add_argument("--together", default="1ms", metavar="T",
                   help="units received within T of the previous one arrived together "
                        "(default 1ms)")
    p.add_argument("--json", action="store_true", help="print the full JSON result")


def register(sub) -> None:
    u = sub.add_parser("units", help="latency of small application units over TCP, QUIC, UDP",
                       description="Units of N bytes generated every T, sent in flushes of K; "
                                   "the server reports each unit's latency (docs/units.md).")
    us = u.add_subparsers(dest="units_command", metavar="ACTION", required=True)
    protos = ("tcp", "quic", "udp")

    s = us.add_parser("server", help="serve one run and report (any host)")
    s.add_argument("--proto", choices=protos, required=True)
    s.add_argument("--bind", default="0.0.0.0", metavar="ADDR")
    s.add_argument("--port", type=port, default=9400)
    s.add_argument("--size", type=int, default=8, metavar="B",
                   help="UDP: unit size if the client's hello is lost (default 8)")
    s.add_argument("--start-timeout", type=seconds, default=60.0, metavar="S")
    s.add_argument("--idle", type=seconds, default=2.0, metavar="S",
                   help="UDP: silence that ends a run (default 2)")
    s.add_argument("--announce", action="store_true", help=argparse.SUPPRESS)
    _server_opts(s)
    s.set_defaults(func=cmd_server)

    c = us.add_parser("client", help="send one run to a server (any host)")
    c.add_argument("--proto", choices=protos, required=True)
    c.add_argument("--connect", required=True, metavar="HOST")
    c.add_argument("--port", type=port, default=9400)
    c.add_argument("--json", action="store_true")
    c.add_argument("--flush-times", type=output_file, default=None, metavar="FILE.npy",
                   help="write each flush's send time (CLOCK_REALTIME, ns)")
    _schedule_opts(c)
    c.set_defaults(func=cmd_client)

    r = us.add_parser("run", help="server in dst, client in src of a running test bed")
    r.add_argument("--bed", default=testbed.DEFAULT_BED, metavar="NAME")
    r.add_argument("--proto", choices=protos, required=True)
    r.add_argument("--port", type=port, default=9400)
    _schedule_opts(r)
    _server_opts(r)
    r.set_defaults(func=cmd_run)


def _client_options(a, host: str):
    from linkemu.instruments.units_client import ClientOptions
    from linkemu.instruments.units_schedule import Schedule
    sched = Schedule(count=a.count, interval_ns=parse_time(a.interval, "--interval"),
                     flush=a.flush, size=a.size, spin_ns=parse_time(a.spin, "--spin"),
                     align_ns=parse_time(a.align, "--align"))
    o = ClientOptions(proto=a.proto, host=host, port=a.port, schedule=sched, cc=a.cc,
                      nodelay=a.nodelay, run_id=a.run_id,
                      flush_times=getattr(a, "flush_times", None))
    o.validate()
    return o


def _delay(a) -> int | None:
    return parse_time(a.delay, "--delay") if a.delay else None


def cmd_server(a) -> int:
    from linkemu.instruments import units
    from linkemu.instruments.units_server import ServerOptions
    o = ServerOptions(proto=a.proto, bind=a.bind, port=a.port, size=a.size,
                      start_timeout_s=a.start_timeout, idle_s=a.idle)
    res = units.serve_and_report(o, a.samples, _delay(a), parse_time(a.together, "--together"),
                                 announce=a.announce)
    print(json.dumps(res) if a.json else format_server(res))
    return 0


def cmd_client(a) -> int:
    from linkemu.instruments.units_client import run
    res = run(_client_options(a, a.connect))
    print(json.dumps(res) if a.json else format_client(res))
    return 0


def cmd_run(a) -> int:
    from linkemu.bed import netns
    from linkemu.errors import LinkemuError
    from linkemu.instruments import units
    bed = testbed.bed_for(a.bed)
    if not netns.ns_exists(bed.ns_src):
        raise LinkemuError(f"test bed '{bed.name}' is not up: `linkemu run --bed {bed.name} "
                           f"--detach ...` first")
    r = units.BedRun(client=_client_options(a, bed.addr_dst), delay_ns=_delay(a),
                     together_ns=parse_time(a.together, "--together"),
                     samples=a.samples.resolve() if a.samples else None)
    res = units.run_on_bed(bed, r)
    if a.json:
        print(json.dumps(res))
    else:
        print(format_client(res["client"]))
        print(format_server(res["server"]))
    return 0


def _ms(v) -> str:
    return "-" if v is None else f"{v / 1e6:.2f}"


def format_client(c: dict) -> str:
    t = c["timing"]
    u, f = t["unit_late_ns"], t["flush_late_ns"]
    extra = ", ".join(f"{k} {c[k]}" for k in ("cc", "nodelay", "send_errors") if k in c)
    return (f"client {c['proto']}: {c['count']} units of {c['size']} B every "
            f"{c['interval_ns'] / 1e6:g} ms in {c['flushes']} flushes of {c['flush']}"
            f"{' (' + extra + ')' if extra else ''}\n"
            f"  sender lateness (ms): units p50 {_ms(u.get('p50'))} p99 {_ms(u.get('p99'))} "
            f"max {_ms(u.get('max'))}; flushes p50 {_ms(f.get('p50'))} p99 "
            f"{_ms(f.get('p99'))} max {_ms(f.get('max'))}")


def format_server(s: dict) -> str:
    lat, g = s["latency_ns"], s["groups"]
    lines = [f"server {s['proto']}: {s['received']} units received of "
             f"{s['expected'] if s['expected'] is not None else '?'} "
             f"(lost {s['lost'] if s['lost'] is not None else '?'}, duplicates "
             f"{s['duplicates']}, reordered {s['reordered']})"]
    if lat.get("count"):
        lines.append(f"  latency (ms): min {_ms(lat['min'])} p1 {_ms(lat['p1'])} p10 "
                     f"{_ms(lat['p10'])} p50 {_ms(lat['p50'])} p90 {_ms(lat['p90'])} p99 "
                     f"{_ms(lat['p99'])} max {_ms(lat['max'])} mean {_ms(lat['mean'])}")
        tr = s["transit_ns"]
        lines.append(f"  latency - flush wait (ms): p1 {_ms(tr['p1'])} p50 {_ms(tr['p50'])} "
                     f"p99 {_ms(tr['p99'])} max {_ms(tr['max'])}")
        k, rw = s.get("latency_kernel_ns") or {}, s.get("receiver_wait_ns") or {}
        if s.get("kernel_stamps") and k.get("count"):
            lines.append(f"  by the kernel's receive stamps (ms): p1 {_ms(k['p1'])} p50 "
                         f"{_ms(k['p50'])} p99 {_ms(k['p99'])} max {_ms(k['max'])} mean "
                         f"{_ms(k['mean'])}; the server read them p50 {_ms(rw['p50'])} p99 "
                         f"{_ms(rw['p99'])} ms later")
    lines.append(f"  arrived together (within {g['together_ns'] / 1e6:g} ms): largest group "
                 f"{g['max']} units; {g['units_in_groups_over_flush']} units "
                 f"({g['share_in_groups_over_flush']:.1%}) in groups of more than "
                 f"{s['flush']}")
    if "band" in s:
        b = s["band"]
        lines.append(f"  ideal band {_ms(b['lo_ns'])} .. {_ms(b['hi_ns'])} ms: "
                     f"{b['share_outside']:.1%} outside ({b['below']} below, {b['above']} above)")
    if s.get("samples"):
        lines.append(f"  samples: {s['samples']}")
    return "\n".join(lines)
