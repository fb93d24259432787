"""The unit-latency client: runs the schedule (units_schedule) and sends
each flush over TCP, UDP or QUIC.

TCP: the congestion control is set on the socket (default cubic, the
study's). TCP_NODELAY is on by default: the application already batches
units into flushes, so Nagle's algorithm could only hold a flush back
while the previous one is unacknowledged, which on a 40 ms path is every
flush (units would then arrive in bunches of several flushes). Go's net
package, which clients of this kind are often written in, also turns it on
by default. --no-nodelay shows what Nagle does.

UDP: one datagram per flush; a hello datagram before the first flush and
END datagrams after the last (units_wire).
"""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass, field
from pathlib import Path

from linkemu.errors import LinkemuError, UsageError
from linkemu.instruments import units_wire as wire
from linkemu.instruments.units_schedule import Schedule, Timing, generate

END_REPEATS = 3
END_SPACING_S = 0.01
CONNECT_TIMEOUT_S = 10.0


@dataclass
class ClientOptions:
    proto: str = "udp"
    host: str = ""
    port: int = 9400
    schedule: Schedule = field(default_factory=lambda: Schedule(count=10_000))
    cc: str = "cubic"             # TCP and QUIC congestion control
    nodelay: bool = True          # TCP_NODELAY
    run_id: int = 1
    flush_times: Path | None = None   # .npy: each flush's CLOCK_REALTIME send time (ns)

    def validate(self) -> None:
        self.schedule.validate()
        if not 0 <= self.run_id <= wire.MAX_RUN_ID:
            raise UsageError(f"--run-id {self.run_id}: must be 0 .. {wire.MAX_RUN_ID} "
                             f"(the hello carries it in 32 bits)")

    def hello(self) -> wire.Hello:
        s = self.schedule
        return wire.Hello(s.size, s.flush, s.interval_ns, s.count, self.run_id)


def available_tcp_ccs() -> list[str]:
    try:
        with open("/proc/sys/net/ipv4/tcp_available_congestion_control") as f:
            return f.read().split()
    except OSError:
        return []


def run(o: ClientOptions) -> dict:
    """Sends one run; returns the sender's own record (JSON-ready)."""
    o.validate()
    if o.proto == "tcp":
        timing, extra = _run_tcp(o)
    elif o.proto == "udp":
        timing, extra = _run_udp(o)
    elif o.proto == "quic":
        from linkemu.instruments import units_quic
        timing, extra = units_quic.run_client(o)
    else:
        raise UsageError(f"unknown protocol '{o.proto}' (expected tcp, quic or udp)")
    s = o.schedule
    if o.flush_times is not None:
        import numpy as np

        from linkemu.instruments.units_stats import save_npy
        save_npy(o.flush_times, np.asarray(timing.sent_rt_ns, dtype=np.int64))
    return {"proto": o.proto, "count": s.count, "size": s.size, "flush": s.flush,
            "interval_ns": s.interval_ns, "flushes": s.flushes(), "spin_ns": s.spin_ns,
            "timing": timing_summary(timing), **extra}


def timing_summary(t: Timing) -> dict:
    from linkemu.instruments.units_stats import quantiles
    return {"unit_late_ns": quantiles(t.unit_late_ns), "flush_late_ns": quantiles(t.flush_late_ns),
            "send_call_ns": quantiles(t.send_ns), "timer_slack_1ns": t.timer_slack_1ns}


def _addr(o: ClientOptions):
    try:
        info = socket.getaddrinfo(o.host, o.port, type=socket.SOCK_DGRAM)
    except socket.gaierror as e:
        raise UsageError(f"--connect {o.host}: {e.strerror}") from None
    return info[0][0], info[0][4]


def _run_tcp(o: ClientOptions) -> tuple[Timing, dict]:
    fam, addr = _addr(o)
    s = socket.socket(fam, socket.SOCK_STREAM)
    try:
        try:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, o.cc.encode())
        except OSError:
            raise UsageError(f"TCP congestion control '{o.cc}' is not available here "
                             f"(available: {' '.join(available_tcp_ccs()) or '?'})") from None
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1 if o.nodelay else 0)
        s.settimeout(CONNECT_TIMEOUT_S)
        try:
            s.connect(addr)
        except OSError as e:
            raise LinkemuError(f"cannot connect over TCP to {o.host} port {o.port}: "
                               f"{e.strerror or e}") from e
        s.settimeout(None)
        s.sendall(o.hello().pack())
        timing = generate(o.schedule, s.sendall)
        s.shutdown(socket.SHUT_WR)
        # Wait for the server's close, so every unit is in before we report.
        s.settimeout(60)
        while s.recv(4096):
            pass
        cc = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b"\0").decode()
    finally:
        s.close()
    return timing, {"cc": cc, "nodelay": o.nodelay}


def _run_udp(o: ClientOptions) -> tuple[Timing, dict]:
    fam, addr = _addr(o)
    with socket.socket(fam, socket.SOCK_DGRAM) as s:
        s.connect(addr)
        hello = o.hello().pack()
        errors = 0

        def send(b: bytes) -> None:
            nonlocal errors
            try:
                s.send(b)
            except OSError:        # ECONNREFUSED from an earlier ICMP, ENOBUFS: a lost flush
                errors += 1

        send(hello)
        timing = generate(o.schedule, send)
        end = wire.end_marker(o.schedule.count, o.schedule.size) + hello
        for _ in range(END_REPEATS):
            time.sleep(END_SPACING_S)
            try:
                s.send(end)
            except OSError:        # the server may be gone after the first END: fine
                pass
    return timing, {"send_errors": errors}
