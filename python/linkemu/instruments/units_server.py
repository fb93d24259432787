"""The unit-latency server: serves one run, then returns what arrived.

TCP: one connection, read until the client closes. UDP: datagrams until the
client's END has come and every unit it announced is in, or until `idle_s`
of silence after the first datagram (lost units and lost ENDs end the run
that way). QUIC: units_quic.serve. Each function prints nothing; `ready()`
is called once the socket listens, so a caller can start the client.

TCP and UDP reads also take the kernel's receive stamp (SO_TIMESTAMPNS,
units_sink): the time the packet reached this host's stack, which the
receiving process's scheduling cannot delay. For TCP the kernel gives the
stamp of the newest segment in the read.
"""

from __future__ import annotations

import socket
import struct
import time
from dataclasses import dataclass
from typing import Callable

from linkemu.errors import LinkemuError
from linkemu.instruments.units_sink import Sink

PROTOS = ("tcp", "quic", "udp")
RCVBUF = 4 << 20
# <asm-generic/socket.h>: SO_TIMESTAMPNS (_OLD: a native struct timespec,
# 64-bit on 64-bit hosts); the control message has the same type number.
# Python's socket module does not export it.
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
_TIMESPEC = struct.Struct("@qq")
ANCBUF = socket.CMSG_SPACE(_TIMESPEC.size)


@dataclass
class ServerOptions:
    proto: str = "udp"
    bind: str = "0.0.0.0"
    port: int = 9400
    size: int = 8                  # UDP only: streams announce theirs
    start_timeout_s: float = 30.0  # wait this long for the client
    idle_s: float = 2.0            # UDP: silence that ends a run


def _family(addr: str) -> int:
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def serve(o: ServerOptions, ready: Callable[[], None]) -> Sink:
    if o.proto == "tcp":
        return serve_tcp(o, ready)
    if o.proto == "udp":
        return serve_udp(o, ready)
    if o.proto == "quic":
        from linkemu.instruments import units_quic
        return units_quic.serve(o, ready)
    raise LinkemuError(f"unknown protocol '{o.proto}' (expected {', '.join(PROTOS)})")


def _bound(kind: int, o: ServerOptions) -> socket.socket:
    s = socket.socket(_family(o.bind), kind)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF)
    try:
        s.bind((o.bind, o.port))
    except OSError as e:
        s.close()
        raise LinkemuError(f"cannot bind {o.proto} {o.bind} port {o.port}: {e.strerror}") from e
    return s


def kernel_stamps(s: socket.socket) -> bool:
    """Asks the kernel to stamp every received packet (False if refused)."""
    try:
        s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        return True
    except OSError:
        return False


def recv_stamped(s: socket.socket, size: int) -> tuple[bytes, int | None]:
    """One read, with its kernel receive stamp in ns (None if it had none)."""
    data, anc, _flags, _addr = s.recvmsg(size, ANCBUF)
    for level, kind, payload in anc:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and \
                len(payload) >= _TIMESPEC.size:
            sec, nsec = _TIMESPEC.unpack_from(payload)
            return data, sec * 1_000_000_000 + nsec
    return data, None


def serve_tcp(o: ServerOptions, ready: Callable[[], None]) -> Sink:
    sink = Sink()
    with _bound(socket.SOCK_STREAM, o) as ls:
        ls.listen(1)
        ls.settimeout(o.start_timeout_s)
        ready()
        try:
            conn, _peer = ls.accept()
        except socket.timeout:
            raise LinkemuError(f"no TCP client within {o.start_timeout_s:g} s") from None
    with conn:
        conn.settimeout(None)
        kernel_stamps(conn)
        while True:
            data, krx = recv_stamped(conn, 1 << 16)
            now = time.time_ns()
            if not data:
                break
            sink.stream(data, now, krx)
    return sink


def serve_udp(o: ServerOptions, ready: Callable[[], None]) -> Sink:
    sink = Sink(size=o.size)
    with _bound(socket.SOCK_DGRAM, o) as s:
        kernel_stamps(s)
        s.settimeout(o.start_timeout_s)
        ready()
        started = False
        while True:
            try:
                data, krx = recv_stamped(s, 1 << 16)
            except socket.timeout:
                if not started:
                    raise LinkemuError(f"no UDP datagram within {o.start_timeout_s:g} s") from None
                break
            now = time.time_ns()
            if not started:
                started = True
                s.settimeout(o.idle_s)
            sink.datagram(data, now, krx)
            if sink.complete():
                break
    return sink
