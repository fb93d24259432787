"""Sends every frame of kit.frames REPEAT times from a raw AF_PACKET socket
on IFACE (run inside the bed's src namespace by test_faults.py). Prints a
JSON object: for each frame, how many sends the kernel took and its error
when it refused them (e.g. a runt shorter than an Ethernet header, or a
frame above the interface's MTU).

    python3 rawsend.py IFACE REPEAT
"""

import json
import socket
import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[2] / "python")]
from kit.frames import frames  # noqa: E402


def main() -> int:
    iface, repeat = sys.argv[1], int(sys.argv[2])
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    out = {}
    for what, frame in frames():
        sent, error = 0, None
        for _ in range(repeat):
            try:
                s.send(frame)
                sent += 1
            except OSError as e:
                error = e.strerror
        out[what] = {"len": len(frame), "sent": sent, "error": error}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
