"""Per-frame one-way delay for the control tests: a paced UDP sender and a
receiver that keeps (seq, send_ns, recv_ns) for every datagram.

Datagrams use linkemu.instruments.pyprobe's format (magic, run id, seq, send time from
CLOCK_MONOTONIC). The receiver takes the kernel's receive timestamp
(SO_TIMESTAMPNS, taken when the frame enters the namespace's stack, i.e.
right after linkemud transmits it) and converts it from CLOCK_REALTIME to
CLOCK_MONOTONIC, so its own wake-up latency does not count as delay. Both
namespaces share the host's clocks, so recv - send is the one-way delay.

    python owdprobe.py recv --bind ADDR --port P --count N --out FILE   (prints "ready")
    python owdprobe.py send --dst ADDR --port P --count N --rate PPS

The sender paces in ticks of 1 ms (sleep, then the tick's datagrams back to
back), so it costs little CPU at tens of kpps; each datagram is stamped
right before its send.
"""

from __future__ import annotations

import argparse
import array
import json
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "python"))
from linkemu.instruments.pyprobe import HEADER, MAGIC, open_receiver, pack  # noqa: E402

TICK_NS = 1_000_000
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
SCM_TIMESTAMPNS = SO_TIMESTAMPNS


def send(dst: str, port: int, count: int, rate: float, size: int, run_id: int) -> dict:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect((dst, port))
    t0 = time.monotonic_ns()
    interval = 1e9 / rate
    seq = 0
    errors = 0
    while seq < count:
        now = time.monotonic_ns()
        due = int((now - t0) / interval) + 1        # how many should be out by now
        while seq < min(due, count):
            try:
                s.send(pack(run_id, seq, time.monotonic_ns(), size))
            except OSError:
                errors += 1
            seq += 1
        if seq < count:
            next_due = t0 + int(seq * interval)
            left = max(next_due, now + TICK_NS) - time.monotonic_ns()
            left = min(left, TICK_NS)
            if left > 0:
                time.sleep(left / 1e9)
    dur = (time.monotonic_ns() - t0) / 1e9
    return {"sent": seq, "duration_s": dur, "rate_pps": seq / dur if dur else 0.0,
            "send_errors": errors}


def _clock_offset() -> int:
    """CLOCK_REALTIME - CLOCK_MONOTONIC, from the tightest of a few pairs."""
    best = None
    for _ in range(20):
        a = time.monotonic_ns()
        r = time.time_ns()
        b = time.monotonic_ns()
        if best is None or b - a < best[0]:
            best = (b - a, r - (a + b) // 2)
    return best[1]


def recv(bind: str, port: int, count: int, out: str, idle_s: float, start_s: float,
         run_id: int | None) -> dict:
    s = open_receiver(bind, port)
    kernel_ts = True
    try:
        s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    except OSError:
        kernel_ts = False
    offset = _clock_offset()
    seqs, sends, recvs = array.array("q"), array.array("q"), array.array("q")
    seen = bytearray(count)
    dup = foreign = 0
    print(f"ready {bind}:{port}", flush=True)
    first = True
    cmsg_space = socket.CMSG_SPACE(16)
    last = time.monotonic()
    while len(seqs) < count:
        wait = (start_s if first else idle_s) - (time.monotonic() - last)
        if wait <= 0:
            break
        s.settimeout(wait)
        try:
            data, anc, _flags, _addr = s.recvmsg(2048, cmsg_space)
        except socket.timeout:
            break
        now = time.monotonic_ns()
        last = time.monotonic()
        first = False
        rx = now
        for level, typ, val in anc:
            if level == socket.SOL_SOCKET and typ == SCM_TIMESTAMPNS and len(val) >= 16:
                sec, nsec = struct.unpack("qq", val[:16])
                rx = sec * 1_000_000_000 + nsec - offset
        if len(data) < HEADER.size:
            foreign += 1
            continue
        magic, rid, seq, send_ns = HEADER.unpack_from(data)
        if magic != MAGIC or (run_id is not None and rid != run_id) or seq >= count:
            foreign += 1
            continue
        if seen[seq]:
            dup += 1
            continue
        seen[seq] = 1
        seqs.append(seq)
        sends.append(send_ns)
        recvs.append(rx)
    with open(out, "wb") as f:
        f.write(struct.pack("q", len(seqs)))
        seqs.tofile(f)
        sends.tofile(f)
        recvs.tofile(f)
    return {"received": len(seqs), "duplicates": dup, "foreign": foreign,
            "kernel_timestamps": kernel_ts}


def load(path: str) -> list[tuple[int, int, int]]:
    """[(seq, send_ns, recv_ns)] in arrival order."""
    with open(path, "rb") as f:
        n = struct.unpack("q", f.read(8))[0]
        cols = []
        for _ in range(3):
            a = array.array("q")
            a.fromfile(f, n)
            cols.append(a)
    return list(zip(*cols))


def main() -> int:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("send")
    a.add_argument("--dst", required=True)
    a.add_argument("--port", type=int, required=True)
    a.add_argument("--count", type=int, required=True)
    a.add_argument("--rate", type=float, required=True)
    a.add_argument("--size", type=int, default=64)
    a.add_argument("--run-id", type=int, default=1)
    r = sub.add_parser("recv")
    r.add_argument("--bind", required=True)
    r.add_argument("--port", type=int, required=True)
    r.add_argument("--count", type=int, required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--idle", type=float, default=2.0)
    r.add_argument("--start-timeout", type=float, default=15.0)
    r.add_argument("--run-id", type=int, default=None)
    o = ap.parse_args()
    if o.cmd == "send":
        res = send(o.dst, o.port, o.count, o.rate, o.size, o.run_id)
    else:
        res = recv(o.bind, o.port, o.count, o.out, o.idle, o.start_timeout, o.run_id)
    print(json.dumps(res), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
