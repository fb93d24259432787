#!/usr/bin/env python3
"""Builds the fuzzers' seed corpora in tests/fuzz/corpus/<target>/ from what
the repository already holds: the grammar's examples (docs/grammar.md),
the unit tests' grammar strings, the profiles' links, the shipped traces
and .dist tables, and hand-built frames of every kind the classifier
reads. Files are named by the SHA-1 of their content, so rerunning adds
nothing twice. Run it after the grammar or its docs change:

    python3 tests/fuzz/make_corpus.py
"""

from __future__ import annotations

import hashlib
import re
import struct
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CORPUS = HERE / "corpus"
WORDS = set((HERE / "grammar.dict").read_text().split('"')[1::2])


def put(target: str, data: bytes) -> None:
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / hashlib.sha1(data).hexdigest()).write_bytes(data)


def looks_like_grammar(s: str) -> bool:
    first = s.strip().split(" ", 1)[0] if s.strip() else ""
    return first in WORDS or s.strip().startswith(";") or " ; class " in s


def portable(s: str) -> str:
    """File names as the repository holds them, relative to its root (the
    fuzzers run there), and small: a trace is read on every parse."""
    s = re.sub(r"\S*traces/\S+", "traces/pantheon_12mbps.trace", s)
    return re.sub(r"\S*/(\w+)\.dist\b", r"profiles/dist/\1.dist", s)


def grammar_seeds() -> set[str]:
    seeds = {""}
    doc = (REPO / "docs" / "grammar.md").read_text()
    for block in re.findall(r"```[a-z]*\n(.*?)```", doc, re.S):
        for line in block.splitlines():
            line = re.sub(r"^\s*(\$ )?(linkemu(d)? .*?--a2b |set a2b |set b2a )", "", line)
            if looks_like_grammar(line):
                seeds.add(line.strip().strip("'\""))
    for code in re.findall(r"`([^`\n]+)`", doc):
        if looks_like_grammar(code):
            seeds.add(code)
    for test in ("test_config.c", "test_path.c"):
        for lit in re.findall(r'"((?:[^"\\\n]|\\.)*)"', (REPO / "tests" / "unit" / test).read_text()):
            lit = lit.encode().decode("unicode_escape")
            if looks_like_grammar(lit):
                seeds.add(lit)
    for prof in (REPO / "profiles").glob("*.toml"):
        data = tomllib.loads(prof.read_text())
        for d in ("a2b", "b2a"):
            link = data.get(d, {}).get("link")
            if isinstance(link, str):
                seeds.add(link)
    return {portable(x) for x in seeds if "%" not in x.replace("%%", "") or "%s" not in x}


def trace_seeds() -> list[bytes]:
    seeds = [b"1\n", b"0\n0\n5\n", b"1\r\n2\r\n", b"3\n3\n3\n10", b"0\n", b"-1\n", b"x\n", b"\n",
             b"10000000000\n", b"5\n4\n"]
    for t in sorted((REPO / "traces").glob("*")):
        if t.suffix == ".md":
            continue
        lines = t.read_bytes().splitlines(keepends=True)[:300]
        seeds.append(b"".join(lines))
    # first byte: bit 0 = trace-us, bit 1 = once (see fuzz_trace.c)
    return [bytes([flags]) + s for s in seeds for flags in (0, 1, 3)]


def dist_seeds() -> list[bytes]:
    seeds = [b"# a comment\n1 2 3\n-4 -5\n", b"32767 -32768\n", b"32768\n", b"\n", b"+7 0x1\n",
             b"1#c\n2", b"0"]
    for t in sorted((REPO / "profiles" / "dist").glob("*.dist")):
        seeds.append(t.read_bytes())
    return seeds


def csum(b: bytes) -> int:
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def eth(ethertype: int, tags: tuple[int, ...] = ()) -> bytes:
    h = bytes.fromhex("020000000002020000000001")
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


def frame_seeds() -> list[bytes]:
    tcp = struct.pack("!HHIIBBHHH", 40000, 443, 1, 0, 0x50, 0x02, 65535, 0, 0)
    udp = struct.pack("!HHHH", 53, 9000, 16, 0) + b"payload!"
    frames = [
        b"", b"\x00" * 13, eth(0x0800)[:14],                                   # runts
        eth(0x0800) + ipv4(6, tcp, tos=0xB8 | 1),                              # TCP, EF, ECT(1)
        eth(0x0800) + ipv4(17, udp, tos=0x88 | 2),                             # UDP, AF41, ECT(0)
        eth(0x0800) + ipv4(17, udp, options=b"\x01\x01\x01\x00"),              # IP options
        eth(0x0800) + ipv4(17, udp, frag=0x2000),                              # first fragment
        eth(0x0800) + ipv4(17, udp, frag=0x0010),                              # later fragment
        eth(0x0800) + ipv4(1, b"\x08\x00\x00\x00\x00\x01\x00\x01"),            # ICMP
        eth(0x0800) + ipv4(6, tcp)[:30],                                       # truncated IPv4
        eth(0x0800) + bytes([0x4F]) + ipv4(6, tcp)[1:],                        # IHL 15 > frame
        eth(0x0800) + bytes([0x43]) + ipv4(6, tcp)[1:],                        # IHL 3 < 5
        eth(0x86DD) + ipv6(6, tcp, tc=0xB9),                                   # IPv6 TCP
        eth(0x86DD) + ipv6(0, bytes([17, 0]) + b"\0" * 6 + udp),               # hop-by-hop, UDP
        eth(0x86DD) + ipv6(44, bytes([17, 0, 0, 8, 0, 0, 0, 1]) + udp),        # fragment header
        eth(0x86DD) + ipv6(60, bytes([60, 0]) + b"\0" * 6) * 1,                # dest-opts chain cut
        eth(0x86DD) + ipv6(6, tcp)[:30],                                       # truncated IPv6
        eth(0x86DD, ((0x8100, 7),)) + ipv6(58, b"\x80\x00\x00\x00"),           # VLAN 7, ICMPv6
        eth(0x0800, ((0x88A8, 100), (0x8100, 7))) + ipv4(17, udp),             # QinQ
        eth(0x0800, ((0x8100, 1), (0x8100, 2), (0x8100, 3))) + ipv4(17, udp),  # three tags
        eth(0x0806) + b"\x00\x01\x08\x00\x06\x04\x00\x01" + b"\0" * 20,        # ARP
        eth(0x88B5) + b"\x55" * 46,                                            # local experimental
        eth(0x0800) + ipv4(132, struct.pack("!HHI", 9, 9, 0)),                 # SCTP port 9
        eth(0x0800) + ipv4(17, udp + b"\xAA" * 8900),                          # above the MTU
    ]
    # first byte: rule set (low bits) and "headers cut short" (0x80); fuzz_frame.c
    return [bytes([sel]) + f for f in frames for sel in (0, 1, 2, 3, 0x81)]


def main() -> int:
    for s in sorted(grammar_seeds()):
        put("grammar", s.encode())
    for s in trace_seeds():
        put("trace", s)
    for s in dist_seeds():
        put("dist", s)
    for s in frame_seeds():
        put("frame", s)
    for d in sorted(CORPUS.iterdir()):
        print(f"{d.name}: {sum(1 for _ in d.iterdir())} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
