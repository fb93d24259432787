#!/usr/bin/env python3
"""A control-plane process in Python for a punted class (docs/punt.md):
returns every frame linkemud hands it, over the FIFO pair or the shared
memory segment. Standard library only.

    # linkemud with a punted class, e.g.
    linkemu run --a2b '; class ctl match proto udp dport 830 : punt fifo /tmp/ctl delay 1ms'
    python3 examples/punt_echo.py --fifo /tmp/ctl
    python3 examples/punt_echo.py --shm NAME        # for `punt shm NAME`

A record is a 16-byte little-endian header (u32 len, u32 flags = 0, u64
seq) and len frame bytes. Answer a frame with its seq; send seq 0 for a
frame of your own (counted `injected`); skipping a frame drops it
(`punt_dropped`). Exits when linkemud stops.
"""

from __future__ import annotations

import argparse
import fcntl
import mmap
import os
import struct
import sys
import time

HDR = struct.Struct("<IIQ")          # len, flags, seq
FRAME_MAX = 2048


def handle(frame: bytes) -> bytes | None:
    """The control plane: here, return the frame as it is (None drops it)."""
    return frame


def answer(frame: bytes) -> bytes | None:
    """handle(frame), held to the protocol: a frame longer than FRAME_MAX
    would overrun its shared-memory slot into the next record (and the
    FIFO would be dropped as not the protocol), so it is dropped here,
    said on stderr."""
    out = handle(frame)
    if out is not None and len(out) > FRAME_MAX:
        print(f"punt_echo.py: handle() returned {len(out)} bytes, more than {FRAME_MAX}: dropped",
              file=sys.stderr)
        return None
    return out


# --- FIFO: PATH.out (linkemud -> us), PATH.in (us -> linkemud) -------------

def read_exact(f, n: int) -> bytes | None:
    b = f.read(n)
    return b if b is not None and len(b) == n else None


def run_fifo(prefix: str) -> int:
    # PATH.out first: linkemud starts sending once it sees a reader.
    with open(prefix + ".out", "rb", buffering=1 << 16) as rx, \
            open(prefix + ".in", "wb", buffering=0) as tx:
        print(f"punt_echo.py: attached to fifo {prefix}", file=sys.stderr)
        n = 0
        while True:
            head = read_exact(rx, HDR.size)
            if head is None:
                return n              # end of file: linkemud stopped
            length, flags, seq = HDR.unpack(head)
            if flags != 0 or length > FRAME_MAX:
                raise SystemExit(f"not the punt protocol: len {length} flags {flags}")
            frame = read_exact(rx, length)
            if frame is None:
                return n
            out = answer(frame)
            if out is not None:
                tx.write(HDR.pack(len(out), 0, seq) + out)   # one write: one record
            n += 1


# --- shared memory: /dev/shm/NAME ------------------------------------------

SEG = struct.Struct("<IIIIIiiIQQ")   # magic version slots slot_size closed daemon_pid peer_pid pad off0 off1
MAGIC, VERSION, RING_CTL, SLOT = 0x31544E50, 1, 256, 16 + FRAME_MAX
HEAD, TAIL = 0, 64                   # offsets of head and tail in a ring's control block


def run_shm(name: str) -> int:
    fd = os.open(f"/dev/shm/{name}", os.O_RDWR)
    mem = mmap.mmap(fd, os.fstat(fd).st_size)
    magic, version, slots, slot_size, _, _, _, _, off0, off1 = SEG.unpack_from(mem, 0)
    if magic != MAGIC or version != VERSION or slot_size != SLOT:
        raise SystemExit(f"{name} is not a punt segment of version {VERSION}")
    fcntl.lockf(fd, fcntl.LOCK_EX, 1, 0)          # attached while we hold it (blocks briefly)
    struct.pack_into("<i", mem, 24, os.getpid())  # peer_pid
    u32 = struct.Struct("<I")
    get = lambda off: u32.unpack_from(mem, off)[0]              # noqa: E731
    put = lambda off, v: u32.pack_into(mem, off, v & 0xFFFFFFFF)  # noqa: E731
    mask = slots - 1
    # Start where the rings are. Python's loads and stores of aligned u32
    # are single instructions; on x86 their order is the program's, which
    # is what the protocol needs (slot before head, read before tail).
    rtail, whead = get(off0 + TAIL), get(off1 + HEAD)
    print(f"punt_echo.py: attached to shm {name}", file=sys.stderr)
    n = idle = 0
    while not get(16):                                  # `closed`
        if get(off0 + HEAD) == rtail:
            # Polled, not futex-woken (the C peer sleeps in futex): back
            # off from 0 to 1 ms while idle.
            idle = min(idle + 1, 100)
            time.sleep(idle * 1e-5)
            continue
        idle = 0
        slot = off0 + RING_CTL + (rtail & mask) * SLOT
        length, flags, seq = HDR.unpack_from(mem, slot)
        out = answer(bytes(mem[slot + 16:slot + 16 + length])) if flags == 0 else None
        if out is not None:
            while whead - get(off1 + TAIL) > mask:      # ring 1 full: linkemud drains it
                time.sleep(1e-5)
            dst = off1 + RING_CTL + (whead & mask) * SLOT
            HDR.pack_into(mem, dst, len(out), 0, seq)
            mem[dst + 16:dst + 16 + len(out)] = out
            whead += 1
            put(off1 + HEAD, whead)
        rtail += 1
        put(off0 + TAIL, rtail)
        n += 1
    return n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--fifo", metavar="PATH", help="the class's `punt fifo PATH`")
    g.add_argument("--shm", metavar="NAME", help="the class's `punt shm NAME`")
    a = ap.parse_args()
    try:
        n = run_fifo(a.fifo) if a.fifo else run_shm(a.shm)
    except KeyboardInterrupt:
        return 0
    print(f"punt_echo.py: {n} frames", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
