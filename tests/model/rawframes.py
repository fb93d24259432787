"""VLAN-tagged IPv4/UDP frames written straight to a device (AF_PACKET),
for the class tests: the bed's namespaces have no VLAN devices, so a UDP
socket cannot tag. Not a delay probe (that is owdprobe); the frames carry
a sequence number only so that each is distinct.

    python rawframes.py --dev eth0 --dst-mac M --src ADDR --dst ADDR --port P --count N
                        [--tags 0x88a8:100,0x8100:42]   (outermost first)
"""

from __future__ import annotations

import argparse
import json
import socket
import struct
import sys


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
    outermost first, written to dev back to back."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((dev, 0))
    src_mac = s.getsockname()[4]
    dmac = bytes.fromhex(dst_mac.replace(":", ""))
    vlan = b"".join(struct.pack("!HH", tpid, vid) for tpid, vid in tags)
    sip, dip = socket.inet_aton(src), socket.inet_aton(dst)
    for seq in range(count):
        payload = struct.pack("!Q", seq).ljust(size, b"\0")
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dev", required=True)
    ap.add_argument("--dst-mac", required=True)
    ap.add_argument("--src", required=True)
    ap.add_argument("--dst", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--tags", default="", help="TPID:VID,... outermost first")
    a = ap.parse_args(argv)
    tags = [(int(t.split(":")[0], 0), int(t.split(":")[1])) for t in a.tags.split(",") if t]
    out = raw_send(a.dev, a.dst_mac, a.src, a.dst, a.port, a.count, tags)
    sys.stdout.write(json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
