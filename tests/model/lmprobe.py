"""The model tests' instrument: a sequenced UDP sender and a receiver that
keeps every datagram (sequence number, send time, kernel receive time, TOS).

linkemu.instruments.pyprobe reports counts; the model tests need each datagram: which
sequence numbers were lost (seed, drop-head vs drop-tail), when each one
arrived (slots, rate, traces) and the IP TOS byte it arrived with (ECN).

Datagram: magic "LMP1", run id, sequence number, send time (CLOCK_REALTIME
ns, taken right before the send), then zero padding up to --size bytes of
UDP payload. The receiver takes the kernel's receive timestamp
(SO_TIMESTAMPNS, CLOCK_REALTIME): with the default netdev_tstamp_prequeue it
is taken when the veth hands the frame to the namespace's stack, i.e. inside
linkemud's transmit, so the receiver's own wake-up latency never counts as
delay. Both namespaces share the host's clocks, so receive - send is the
one-way delay. The TOS byte comes from IP_RECVTOS.

    python lmprobe.py recv --bind ADDR --port P --count N   (prints "ready", then JSON)
    python lmprobe.py send --dst ADDR --port P --count N --rate PPS [--tos T] [--sport S]
    python lmprobe.py raw --dev eth0 --dst-mac M --src ADDR --dst ADDR --port P --count N
                          [--tags 0x88a8:100,0x8100:42]   (VLAN-tagged frames, AF_PACKET)

--rate 0 sends back to back (a burst). The sender prints JSON with the send
time of the first and last datagram.
"""

from __future__ import annotations

import argparse
import errno
import json
import socket
import struct
import sys
import time

MAGIC = b"LMP1"
HEADER = struct.Struct("!4sQQq")      # magic, run id, seq, send time (ns, realtime)
MIN_SIZE = HEADER.size
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
SCM_TIMESTAMPNS = SO_TIMESTAMPNS
IP_RECVTOS = getattr(socket, "IP_RECVTOS", 13)
TIMESPEC = struct.Struct("@qq")
SPIN_NS = 200_000   # below this much time to the next send: spin, not sleep


def now_ns() -> int:
    return time.clock_gettime_ns(time.CLOCK_REALTIME)


def send(dst: str, port: int, count: int, rate: float, size: int, run_id: int,
         tos: int = 0, sport: int = 0) -> dict:
    """count datagrams at rate per second on an absolute schedule (a late
    send does not push the later ones back); rate 0: back to back."""
    if size < MIN_SIZE:
        raise ValueError(f"size must be >= {MIN_SIZE}")
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    if tos:
        s.setsockopt(socket.IPPROTO_IP, socket.IP_TOS, tos)
    if sport:
        s.bind(("0.0.0.0", sport))
    s.connect((dst, port))
    pad = b"\0" * (size - MIN_SIZE)
    interval = int(1e9 / rate) if rate > 0 else 0
    t0 = time.monotonic_ns()
    first = last = 0
    errors: dict[str, int] = {}
    for seq in range(count):
        if interval:
            due = t0 + seq * interval
            while True:
                left = due - time.monotonic_ns()
                if left <= 0:
                    break
                if left > SPIN_NS:
                    time.sleep((left - SPIN_NS // 2) / 1e9)
        t = now_ns()
        try:
            s.send(HEADER.pack(MAGIC, run_id, seq, t) + pad)
        except OSError as e:     # counted by errno; the receiver sees a gap
            name = errno.errorcode.get(e.errno, str(e.errno))
            errors[name] = errors.get(name, 0) + 1
        if seq == 0:
            first = t
        last = t
    s.close()
    return {"sent": count, "errors": sum(errors.values()), "errnos": errors,
            "first_ns": first, "last_ns": last,
            "run_id": run_id}


def _csum(b: bytes) -> int:
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def raw_send(dev: str, dst_mac: str, src: str, dst: str, port: int, count: int,
             tags: list[tuple[int, int]], size: int = 64) -> dict:
    """count IPv4/UDP frames (valid checksums) with the given VLAN tags,
    outermost first, written straight to dev (the kernel has no VLAN
    devices here, so a UDP socket cannot tag). Sent back to back."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((dev, 0))
    src_mac = s.getsockname()[4]
    dmac = bytes.fromhex(dst_mac.replace(":", ""))
    vlan = b"".join(struct.pack("!HH", tpid, vid) for tpid, vid in tags)
    sip, dip = socket.inet_aton(src), socket.inet_aton(dst)
    for seq in range(count):
        payload = HEADER.pack(MAGIC, 0, seq, now_ns()).ljust(size, b"\0")
        udp = struct.pack("!HHHH", 40000, port, 8 + len(payload), 0) + payload
        pseudo = sip + dip + struct.pack("!BBH", 0, socket.IPPROTO_UDP, len(udp))
        c = _csum(pseudo + udp) or 0xFFFF
        udp = udp[:6] + struct.pack("!H", c) + udp[8:]
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), seq & 0xFFFF, 0x4000, 64,
                         socket.IPPROTO_UDP, 0, sip, dip)
        ip = ip[:10] + struct.pack("!H", _csum(ip)) + ip[12:]
        s.send(dmac + src_mac + vlan + b"\x08\x00" + ip + udp)
    s.close()
    return {"sent": count}


def receive(bind: str, port: int, count: int, idle_s: float, start_timeout_s: float,
            run_id: int | None) -> dict:
    """Every datagram of the run until count distinct ones arrived (copies
    included in the records), or idle_s of silence (start_timeout_s before
    the first)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_RCVBUFFORCE", 33), 16 << 20)
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    s.setsockopt(socket.IPPROTO_IP, IP_RECVTOS, 1)
    s.bind((bind, port))
    print(f"ready {bind}:{port}", flush=True)
    records = []          # [seq, send_ns, recv_ns, tos]
    seen = set()
    foreign = 0
    last = time.monotonic()
    first = True
    cmsg_space = socket.CMSG_SPACE(TIMESPEC.size) + socket.CMSG_SPACE(4)
    while len(seen) < count:
        wait = (start_timeout_s if first else idle_s) - (time.monotonic() - last)
        if wait <= 0:
            break
        s.settimeout(wait)
        try:
            data, anc, _flags, _addr = s.recvmsg(65536, cmsg_space)
        except socket.timeout:
            break
        rx = None
        tos = -1
        for level, typ, cdata in anc:
            if level == socket.SOL_SOCKET and typ == SCM_TIMESTAMPNS:
                sec, nsec = TIMESPEC.unpack_from(cdata)
                rx = sec * 1_000_000_000 + nsec
            elif level == socket.IPPROTO_IP and typ == socket.IP_TOS:
                tos = cdata[0]
        if rx is None:
            rx = now_ns()
        if len(data) < MIN_SIZE:
            foreign += 1
            continue
        magic, rid, seq, sent = HEADER.unpack_from(data)
        if magic != MAGIC or (run_id is not None and rid != run_id):
            foreign += 1
            continue
        records.append([seq, sent, rx, tos])
        seen.add(seq)
        last = time.monotonic()
        first = False
    return {"records": records, "foreign": foreign}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("send")
    s.add_argument("--dst", required=True)
    s.add_argument("--port", type=int, required=True)
    s.add_argument("--count", type=int, required=True)
    s.add_argument("--rate", type=float, default=1000.0, help="datagrams/s; 0 = back to back")
    s.add_argument("--size", type=int, default=64, help="UDP payload bytes")
    s.add_argument("--run-id", type=int, required=True)
    s.add_argument("--tos", type=int, default=0, help="IP TOS byte (DSCP << 2 | ECN)")
    s.add_argument("--sport", type=int, default=0)
    w = sub.add_parser("raw")
    w.add_argument("--dev", required=True)
    w.add_argument("--dst-mac", required=True)
    w.add_argument("--src", required=True)
    w.add_argument("--dst", required=True)
    w.add_argument("--port", type=int, required=True)
    w.add_argument("--count", type=int, required=True)
    w.add_argument("--tags", default="", help="TPID:VID,... outermost first")
    r = sub.add_parser("recv")
    r.add_argument("--bind", required=True)
    r.add_argument("--port", type=int, required=True)
    r.add_argument("--count", type=int, required=True)
    r.add_argument("--idle", type=float, default=1.0)
    r.add_argument("--start-timeout", type=float, default=10.0)
    r.add_argument("--run-id", type=int, default=None)
    a = ap.parse_args(argv)
    if a.cmd == "raw":
        tags = [(int(t.split(":")[0], 0), int(t.split(":")[1])) for t in a.tags.split(",") if t]
        out = raw_send(a.dev, a.dst_mac, a.src, a.dst, a.port, a.count, tags)
    elif a.cmd == "send":
        out = send(a.dst, a.port, a.count, a.rate, a.size, a.run_id, a.tos, a.sport)
    else:
        out = receive(a.bind, a.port, a.count, a.idle, a.start_timeout, a.run_id)
    sys.stdout.write(json.dumps(out, separators=(",", ":")) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
