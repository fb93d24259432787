#!/usr/bin/env python3
"""A stand-in for dpdk-dumpcap 22.11, for the unit tests of `linkemu
capture`: takes its command line, writes a pcapng file (one IDB per port,
EPBs stamped in ns) to -w, says "Packets captured: " on stderr once it
"captures", and on SIGINT writes its statistics block and the received/
dropped line, as dumpcap does, then exits 0.

Like dumpcap, it creates its file readable by its owner only (0600).

Environment: FAKEDUMPCAP_PIDS (a directory: it leaves a file named by its
pid there while it runs), FAKEDUMPCAP_EXIT_DELAY (seconds it takes to
exit after SIGINT), FAKEDUMPCAP_PRIMARY_EXITS (seconds after which it acts
as dumpcap does when linkemud exits: says so, writes no statistics, exits
0)."""

import os
import signal
import struct
import sys
import time


def block(btype, body):
    body += b"\0" * (-len(body) % 4)
    n = len(body) + 12
    return struct.pack("<II", btype, n) + body + struct.pack("<I", n)


def opt(code, value):
    return struct.pack("<HH", code, len(value)) + value + b"\0" * (-len(value) % 4)


def main():
    argv = sys.argv[1:]
    out = argv[argv.index("-w") + 1]
    port = int(argv[argv.index("-i") + 1])
    pids = os.environ.get("FAKEDUMPCAP_PIDS")
    mark = os.path.join(pids, str(os.getpid())) if pids else None
    stop = []
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    if mark:
        open(mark, "w").close()
    primary_exits = os.environ.get("FAKEDUMPCAP_PRIMARY_EXITS")
    with os.fdopen(os.open(out, os.O_WRONLY | os.O_CREAT, 0o600), "wb") as f:
        f.write(block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1) + opt(0, b"")))
        for name in (b"lc-a", b"lc-b"):
            f.write(block(1, struct.pack("<HHI", 1, 0, 0) + opt(2, name) + opt(9, b"\x09")
                          + opt(0, b"")))
        frame = bytes(60)
        for i in range(5):
            t = 1_700_000_000_000_000_000 + i * 1000
            f.write(block(6, struct.pack("<IIIII", port, t >> 32, t & 0xFFFFFFFF, len(frame),
                                         len(frame)) + frame
                          + opt(2, struct.pack("<I", 2 if port else 1)) + opt(0, b"")))
        f.flush()
        sys.stderr.write("Packets captured: 5")
        sys.stderr.flush()
        t0 = time.monotonic()
        orphaned = False
        while not stop and not orphaned:
            orphaned = bool(primary_exits) and time.monotonic() - t0 > float(primary_exits)
            time.sleep(0.01)
        if orphaned:
            sys.stderr.write("\nPrimary process is no longer active, exiting...\n")
        else:
            time.sleep(float(os.environ.get("FAKEDUMPCAP_EXIT_DELAY", "0")))
            f.write(block(5, struct.pack("<III", port, 0, 0) + opt(0, b"")))
    if not orphaned:
        sys.stderr.write(f"\nPackets received/dropped on interface 'net_af_xdp{port}': "
                         f"5/0 (100.0)\n")
    if mark:
        os.unlink(mark)


if __name__ == "__main__":
    main()
