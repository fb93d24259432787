"""Ethernet frames built by hand, good and bad, for the fuzzers' seed corpus
(tests/fuzz/make_corpus.py) and the bad-frame fault test (tests/faults):
runts, truncated IPv4 and IPv6 headers, a bad IHL, VLAN and QinQ tags, IP
options, fragments, extension headers, frames above the MTU, checksums
that are wrong."""

from __future__ import annotations

import struct

SRC_MAC, DST_MAC = bytes.fromhex("020000000001"), bytes.fromhex("020000000002")


def csum(b: bytes) -> int:
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def eth(ethertype: int, tags: tuple[int, ...] = ()) -> bytes:
    h = DST_MAC + SRC_MAC
    for tpid, vid in tags:
        h += struct.pack("!HH", tpid, vid)
    return h + struct.pack("!H", ethertype)


def ipv4(proto: int, payload: bytes, tos: int = 0, options: bytes = b"", frag: int = 0) -> bytes:
    ihl = 5 + len(options) // 4
    h = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, tos, 4 * ihl + len(payload), 1, frag, 64, proto, 0,
                    bytes([198, 18, 0, 1]), bytes([198, 18, 0, 2])) + options
    h = h[:10] + struct.pack("!H", csum(h)) + h[12:]
    return h + payload


def ipv6(nh: int, payload: bytes, tc: int = 0) -> bytes:
    src = bytes.fromhex("20010db8000000000000000000000001")
    dst = bytes.fromhex("20010db8000000000000000000000002")
    return struct.pack("!IHBB", 0x60000000 | tc << 20, len(payload), nh, 64) + src + dst + payload


def frames() -> list[tuple[str, bytes]]:
    """(what it is, the frame) for every kind the classifier must survive."""
    tcp = struct.pack("!HHIIBBHHH", 40000, 443, 1, 0, 0x50, 0x02, 65535, 0, 0)
    udp = struct.pack("!HHHH", 53, 9000, 16, 0) + b"payload!"
    good4 = ipv4(17, udp)
    return [
        ("empty", b""), ("runt 13 B", b"\x00" * 13), ("Ethernet header only", eth(0x0800)[:14]),
        ("TCP, EF, ECT(1)", eth(0x0800) + ipv4(6, tcp, tos=0xB8 | 1)),
        ("UDP, AF41, ECT(0)", eth(0x0800) + ipv4(17, udp, tos=0x88 | 2)),
        ("IPv4 options", eth(0x0800) + ipv4(17, udp, options=b"\x01\x01\x01\x00")),
        ("first fragment", eth(0x0800) + ipv4(17, udp, frag=0x2000)),
        ("later fragment", eth(0x0800) + ipv4(17, udp, frag=0x0010)),
        ("ICMP", eth(0x0800) + ipv4(1, b"\x08\x00\x00\x00\x00\x01\x00\x01")),
        ("truncated IPv4", eth(0x0800) + ipv4(6, tcp)[:30]),
        ("IHL 15 beyond the frame", eth(0x0800) + bytes([0x4F]) + ipv4(6, tcp)[1:]),
        ("IHL 3 below 5", eth(0x0800) + bytes([0x43]) + ipv4(6, tcp)[1:]),
        ("wrong IPv4 checksum", eth(0x0800) + good4[:10] + b"\xde\xad" + good4[12:]),
        ("IPv6 TCP", eth(0x86DD) + ipv6(6, tcp, tc=0xB9)),
        ("IPv6 hop-by-hop, UDP", eth(0x86DD) + ipv6(0, bytes([17, 0]) + b"\0" * 6 + udp)),
        ("IPv6 fragment header", eth(0x86DD) + ipv6(44, bytes([17, 0, 0, 8, 0, 0, 0, 1]) + udp)),
        ("IPv6 options chain cut", eth(0x86DD) + ipv6(60, bytes([60, 0]) + b"\0" * 6)),
        ("truncated IPv6", eth(0x86DD) + ipv6(6, tcp)[:30]),
        ("VLAN 7, ICMPv6", eth(0x86DD, ((0x8100, 7),)) + ipv6(58, b"\x80\x00\x00\x00")),
        ("QinQ", eth(0x0800, ((0x88A8, 100), (0x8100, 7))) + ipv4(17, udp)),
        ("three VLAN tags", eth(0x0800, ((0x8100, 1), (0x8100, 2), (0x8100, 3))) + ipv4(17, udp)),
        ("ARP", eth(0x0806) + b"\x00\x01\x08\x00\x06\x04\x00\x01" + b"\0" * 20),
        ("local experimental EtherType", eth(0x88B5) + b"\x55" * 46),
        ("SCTP", eth(0x0800) + ipv4(132, struct.pack("!HHI", 9, 9, 0))),
        ("above the MTU", eth(0x0800) + ipv4(17, udp + b"\xAA" * 2000)),
        ("jumbo", eth(0x0800) + ipv4(17, udp + b"\xAA" * 8900)),
    ]
