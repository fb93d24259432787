"""`linkemu demo`: a bed, an impaired link, the usual tools, a summary.

Shows in one command what linkemu does: ping, the one-way delay
(owdprobe), iperf3 TCP and UDP across a link with 10 ms delay and 0.1 %
loss each way, then the emulator's own counters. Whatever happens (an
error, Ctrl-C, SIGTERM) the daemon is stopped and the bed removed.
"""

from __future__ import annotations

import sys

from linkemu import api
from linkemu.bed.interrupts import interruptible, shielded
from linkemu.cli import run as run_cli
from linkemu.daemon import daemon
from linkemu.daemon.summary import format_final
from linkemu.errors import LinkemuError
from linkemu.instruments import iperf3, owd, ping

# `limit` (netem's default, 1000 frames held) would cut TCP through 10 ms at
# the rate the bed carries: its slow start and cwnd bursts overfill 1000
# (8,000-12,000 queue_full drops per 5 s, 615-650 Mbit/s; limit 2000: ~700;
# 5000 and 20000: none, ~735 Mbit/s, limited by the 0.1 % loss; bench notes in
# docs/performance.md, "The bed's attachments"). 10000 is what the daemon
# sizes its pools for anyway (--max-limit's default), so it costs no memory.
LINK = "delay 10ms loss 0.1% limit 10000"
STEPS = 7


def _step(n: int, what: str) -> None:
    print(f"[{n}/{STEPS}] {what} ...", flush=True)


def run(bed: api.Bed, seconds: int = 5, io: str = "dpdk") -> int:
    if seconds < 1:
        raise LinkemuError("--seconds must be >= 1")
    daemon.require_binary(io)
    # Not ours to stop: the demo would take down someone's running link.
    bed.require_no_daemon()
    link = None
    results: dict = {}
    report = None
    # Shielded around the whole: interruptible() hands back to the shield,
    # so a signal between the work and the cleanup is ignored. With the
    # shield only inside `finally`, a SIGTERM arriving just after the work
    # ended the process (its default) and left the bed and linkemud.
    with shielded():
        try:
            with interruptible():
                _step(1, f"bringing up test bed '{bed.name}'")
                bed.up()
                _step(2, f"starting {'linkemuk' if io == 'kernel' else 'linkemud'} "
                         f"({LINK}, both directions)")
                link = bed.run(LINK, LINK, io=io)
                _step(3, "ping src -> dst (20 pings, 0.2 s apart), one-way delay (owdprobe, 1 s)")
                results["ping"] = ping.ping(bed.layout, count=20, interval=0.2).summary()
                results["owd"] = owd.probe(bed.layout, owd.ProbeSpec(ip_len=100, pps=1000,
                                                                     count=1000,
                                                                     spin_us=50))["receiver"]
                _step(4, f"iperf3 TCP src -> dst ({seconds} s)")
                results["tcp"] = iperf3.iperf3_tcp_summary(iperf3.iperf3(bed.layout, seconds))
                _step(5, f"iperf3 UDP 50 Mbit/s src -> dst ({seconds} s)")
                results["udp"] = iperf3.iperf3_udp_summary(
                    iperf3.iperf3(bed.layout, seconds, udp=True, bitrate="50M"))
                _step(6, "stopping linkemud")
                with shielded():
                    report = link.stop()
        except KeyboardInterrupt:
            print("\ninterrupted: cleaning up", file=sys.stderr)
            return 1
        finally:
            if link is not None and link.report is None:
                try:
                    link.stop()
                except LinkemuError:
                    pass
            _step(7, f"tearing down test bed '{bed.name}'")
            bed.down()
    print()
    print(format_summary(results, report.raw))
    return 0


def format_summary(results: dict, final: dict) -> str:
    p, t, u = results["ping"], results["tcp"], results["udp"]
    lines = [f"link: {LINK} each way (so RTT >= 20 ms)"]
    if p["received"]:
        lines.append(f"ping: {p['received']}/{p['transmitted']} replies, RTT min "
                     f"{p['min_ms']:.2f} / median {p['median_ms']:.2f} / max "
                     f"{p['max_ms']:.2f} ms")
    else:
        lines.append(f"ping: no replies out of {p['transmitted']}")
    o = results["owd"]
    if o["received"]:
        d = o["delay_ns"]
        lines.append(f"one-way delay src -> dst: min {d['min'] / 1e6:.3f} / median "
                     f"{d['p50'] / 1e6:.3f} / p99 {d['p99'] / 1e6:.3f} ms, {o['lost']} of "
                     f"{o['expected']} datagrams lost (owdprobe)")
    else:
        lines.append(f"one-way delay: no datagram arrived out of {o['expected']}")
    lines.append(f"iperf3 TCP: {t['mbit_s']:.1f} Mbit/s, {t['retransmits']} retransmits")
    loss = "?" if u["lost_percent"] is None else f"{u['lost_percent']:.2f}"
    lines.append(f"iperf3 UDP: {u['mbit_s']:.1f} Mbit/s, loss {loss} %")
    lines.append(format_final(final))
    return "\n".join(lines)


def cmd_demo(a) -> int:
    return run(api.Bed(a.bed), seconds=a.seconds, io=a.io)


def register(sub, bed_opt) -> None:
    """Add demo to the main parser."""
    d = sub.add_parser("demo", parents=[bed_opt],
                       help="bed + linkemud + ping/iperf3, summary, then clean up")
    d.add_argument("--seconds", type=int, default=5, metavar="N", help="iperf3 duration")
    run_cli.add_io_option(d)
    d.set_defaults(func=cmd_demo)
