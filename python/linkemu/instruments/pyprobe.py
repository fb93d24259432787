"""A sequenced UDP probe for loss, reordering and one-way delay.

Each datagram carries: magic, run id, 64-bit sequence number, and the send
time from CLOCK_MONOTONIC in ns. Sender and receiver run in two namespaces
of the same host, which share one monotonic clock, so receive time minus
send time is the exact one-way delay (plus the receiver's wake-up latency).

    python -m linkemu.instruments.pyprobe recv --port 9000 --count 5000    (in dst; prints "ready", then JSON)
    python -m linkemu.instruments.pyprobe send --dst 198.18.0.2 --port 9000 --count 5000 --rate 2000

Start the receiver first and wait for its "ready" line.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import struct
import sys
import subprocess
import time
from dataclasses import dataclass, field

from linkemu.bed import netns, paths
from linkemu.bed.cpus import tool_cpus
from linkemu.bed.testbed import Bed
from linkemu.errors import LinkemuError
from linkemu.instruments.stats import percentile

MAGIC = b"LEP1"
HEADER = struct.Struct("!4sQQQ")   # magic, run id, sequence, send time (ns)
MIN_SIZE = HEADER.size
# Below this much time to the next send we spin instead of sleeping: a
# Linux sleep overshoots by ~50-100 us (timer slack + wake-up).
SPIN_NS = 200_000


@dataclass
class SendResult:
    sent: int
    duration_s: float
    rate_pps: float


@dataclass
class RecvState:
    """Everything the receiver tracks, so that summarise() is pure."""

    count: int
    run_id: int | None
    seen: bytearray = field(init=False)
    received: int = 0
    duplicates: int = 0
    reordered: int = 0
    out_of_range: int = 0
    foreign: int = 0
    max_seq: int = -1
    owd_ns: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.seen = bytearray(self.count)


def pack(run_id: int, seq: int, send_ns: int, size: int) -> bytes:
    return HEADER.pack(MAGIC, run_id, seq, send_ns).ljust(size, b"\0")


def send(dst: str, port: int, count: int, rate: float, size: int = 64,
         run_id: int = 0) -> SendResult:
    """Send count datagrams at rate pkts/s, paced against an absolute
    schedule (send i at t0 + i/rate) so that a late send does not push all
    later ones back."""
    if size < MIN_SIZE:
        raise ValueError(f"size must be >= {MIN_SIZE} bytes")
    interval = int(1e9 / rate) if rate > 0 else 0
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.connect((dst, port))
    t0 = time.monotonic_ns()
    for seq in range(count):
        due = t0 + seq * interval
        while True:
            left = due - time.monotonic_ns()
            if left <= 0:
                break
            if left > SPIN_NS:
                time.sleep((left - SPIN_NS // 2) / 1e9)
        # The timestamp is taken right before the send, not at `due`, so a
        # late send does not show up as extra one-way delay.
        sock.send(pack(run_id, seq, time.monotonic_ns(), size))
    dur = (time.monotonic_ns() - t0) / 1e9
    sock.close()
    return SendResult(count, dur, count / dur if dur > 0 else float("inf"))


def receive(st: RecvState, data: bytes, now_ns: int) -> None:
    """Account one datagram into st."""
    if len(data) < MIN_SIZE:
        st.foreign += 1
        return
    magic, run_id, seq, send_ns = HEADER.unpack_from(data)
    if magic != MAGIC:
        st.foreign += 1
        return
    if st.run_id is None:
        st.run_id = run_id            # lock on to the first run we hear
    elif run_id != st.run_id:
        st.foreign += 1
        return
    if seq >= st.count:
        st.out_of_range += 1
        return
    if st.seen[seq]:
        st.duplicates += 1
        return
    st.seen[seq] = 1
    st.received += 1
    if seq < st.max_seq:
        st.reordered += 1             # arrived after a later-sent datagram
    else:
        st.max_seq = seq
    st.owd_ns.append(now_ns - send_ns)


def summarise(st: RecvState) -> dict:
    lost = st.count - st.received
    owd = st.owd_ns
    return {
        "sent_expected": st.count,
        "received": st.received,
        "lost": lost,
        "duplicates": st.duplicates,
        "reordered": st.reordered,
        "loss_rate": lost / st.count if st.count else 0.0,
        "owd_ns": {
            "min": min(owd) if owd else None,
            "p50": round(percentile(owd, 50)) if owd else None,
            "p99": round(percentile(owd, 99)) if owd else None,
            "max": max(owd) if owd else None,
        },
        "run_id": st.run_id,
        "ignored": {"foreign": st.foreign, "out_of_range": st.out_of_range},
    }


def open_receiver(bind: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    # A big receive buffer so a slow Python wake-up never drops datagrams in
    # the socket: a socket drop would count as link loss. FORCE ignores
    # rmem_max (we are root); fall back to the capped option otherwise.
    for opt in (getattr(socket, "SO_RCVBUFFORCE", 33), socket.SO_RCVBUF):
        try:
            sock.setsockopt(socket.SOL_SOCKET, opt, 8 << 20)
            break
        except OSError:
            continue
    sock.bind((bind, port))
    return sock


def recv_loop(sock: socket.socket, count: int, idle_s: float, start_timeout_s: float,
              run_id: int | None = None, ready=None) -> dict:
    """Collect until count distinct datagrams arrived, or idle_s passed since
    the last one (start_timeout_s before the first)."""
    st = RecvState(count, run_id)
    buf = bytearray(65536)
    if ready:
        ready()
    last = time.monotonic()
    first = True
    while st.received < count:
        wait = (start_timeout_s if first else idle_s) - (time.monotonic() - last)
        if wait <= 0:
            break
        sock.settimeout(wait)
        try:
            n = sock.recv_into(buf)
        except socket.timeout:
            break
        now = time.monotonic_ns()
        receive(st, bytes(buf[:n]), now)
        last = time.monotonic()
        first = False
    return summarise(st)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m linkemu.instruments.pyprobe", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("send", help="send sequenced datagrams")
    s.add_argument("--dst", required=True)
    s.add_argument("--port", type=int, default=9000)
    s.add_argument("--count", type=int, default=1000)
    s.add_argument("--rate", type=float, default=1000.0, help="datagrams per second")
    s.add_argument("--size", type=int, default=64, help=f"UDP payload bytes (>= {MIN_SIZE})")
    s.add_argument("--run-id", type=int, default=None)
    r = sub.add_parser("recv", help="receive and report JSON")
    r.add_argument("--bind", default="0.0.0.0")
    r.add_argument("--port", type=int, default=9000)
    r.add_argument("--count", type=int, default=1000)
    r.add_argument("--idle", type=float, default=2.0, help="s of silence after the last datagram")
    r.add_argument("--start-timeout", type=float, default=10.0,
                   help="s to wait for the first datagram")
    r.add_argument("--run-id", type=int, default=None, help="accept only this run")
    a = ap.parse_args(argv)
    if a.cmd == "send":
        run_id = a.run_id if a.run_id is not None else int.from_bytes(os.urandom(8), "big") >> 1
        try:
            res = send(a.dst, a.port, a.count, a.rate, a.size, run_id)
        except (OSError, ValueError) as e:
            print(f"probe send: {e}", file=sys.stderr)
            return 1
        print(json.dumps({"sent": res.sent, "duration_s": round(res.duration_s, 6),
                          "rate_pps": round(res.rate_pps, 1), "run_id": run_id}))
        return 0
    try:
        sock = open_receiver(a.bind, a.port)
    except OSError as e:
        print(f"probe recv: cannot bind {a.bind}:{a.port}: {e}", file=sys.stderr)
        return 1

    def ready() -> None:
        print(f"ready {a.bind}:{a.port}", flush=True)

    out = recv_loop(sock, a.count, a.idle, a.start_timeout, a.run_id, ready)
    print(json.dumps(out), flush=True)
    return 0


# --- running both sides across a bed ----------------------------------------------

def probe(bed: Bed, count: int = 1000, rate: float = 1000.0, size: int = 64,
          port: int = 9000, idle_s: float = 2.0, reverse: bool = False) -> dict:
    """Sequenced UDP probe src -> dst (dst -> src with reverse). Returns the
    receiver's JSON plus a "sender" entry with the sender's own report."""
    tx_ns, rx_ns = (bed.ns_dst, bed.ns_src) if reverse else (bed.ns_src, bed.ns_dst)
    rx_addr = bed.addr_src if reverse else bed.addr_dst
    run_id = int.from_bytes(os.urandom(8), "big") >> 1
    py = [sys.executable, "-m", "linkemu.instruments.pyprobe"]
    env = paths.child_python_env()
    recv = subprocess.Popen(
        netns.ns_exec_argv(rx_ns, cpus=tool_cpus(), cmd=py + ["recv", "--bind", rx_addr, "--port", str(port),
                                        "--count", str(count), "--idle", str(idle_s),
                                        "--run-id", str(run_id)]),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = recv.stdout.readline()   # blocks until "ready" or the receiver dies
        if not line.startswith("ready"):
            recv.wait(5)
            raise LinkemuError(f"probe receiver did not start: {recv.stderr.read().strip()}")
        expected_s = count / rate if rate > 0 else 0
        cp = netns.ns_run(tx_ns, cpus=tool_cpus(), cmd=py + ["send", "--dst", rx_addr, "--port", str(port),
                                       "--count", str(count), "--rate", str(rate),
                                       "--size", str(size), "--run-id", str(run_id)],
                          check=False, timeout=expected_s + 60, env=env)
        if cp.returncode != 0:
            raise LinkemuError(f"probe sender failed: {cp.stderr.strip()}")
        out, err = recv.communicate(timeout=idle_s + 30)
        if recv.returncode != 0:
            raise LinkemuError(f"probe receiver failed: {err.strip()}")
        result = json.loads(out.strip().splitlines()[-1])
        result["sender"] = json.loads(cp.stdout)
        return result
    finally:
        if recv.poll() is None:
            recv.kill()
            recv.wait()


if __name__ == "__main__":
    sys.exit(main())
