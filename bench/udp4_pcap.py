"""A pcap file of 64-byte UDP/IPv4 frames, for DPDK's net_pcap to loop.

net_null's frames are never written: all zeros, ethertype 0, not IP. A
class rule on `proto`, ports or addresses then fails at the first field
and never reaches a hash probe, so the class rows on net_null measure
the cheapest case. `net_pcap,rx_pcap=FILE,infinite_rx=1` replays these
frames from memory instead (copying each into its mbuf, for testpmd as
for linkemud), so the rules read real headers.

The frames go 198.18.0.1 -> 198.19.0.1 (RFC 2544's range), source port
5000, destination ports 5000 .. 5063 in turn: no rule of the main class
sets (destination ports 6000 and up, TCP 830) matches, the default
class's case (a hashed group's port filter refuses such frames at once,
src/core/class_set.h); the set of rules on 5000 .. 5015 (forwarding.py's
CLASS16_HIT) takes a quarter of them, each through its group's hash.
"""

from __future__ import annotations

import struct

FRAME_BYTES = 60  # 64 on the wire with the FCS
SRC = bytes([198, 18, 0, 1])
DST = bytes([198, 19, 0, 1])
DPORTS = 64


def _checksum(header: bytes) -> int:
    s = sum(struct.unpack(f"!{len(header) // 2}H", header))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def frame(k: int) -> bytes:
    """The k-th frame: Ethernet, IPv4 (20-byte header), UDP, zero payload."""
    eth = bytes([2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1]) + b"\x08\x00"
    udp_len = FRAME_BYTES - len(eth) - 20
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + udp_len, k & 0xFFFF, 0, 64, 17, 0, SRC, DST)
    ip = ip[:10] + struct.pack("!H", _checksum(ip)) + ip[12:]
    udp = struct.pack("!HHHH", 5000, 5000 + k % DPORTS, udp_len, 0)
    return eth + ip + udp + bytes(udp_len - 8)


def write(path: str, count: int = 1024) -> None:
    """count frames into a classic pcap file (Ethernet link type)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for k in range(count):
            b = frame(k)
            f.write(struct.pack("<IIII", 0, 0, len(b), len(b)))
            f.write(b)
