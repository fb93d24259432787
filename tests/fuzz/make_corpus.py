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
sys.path[:0] = [str(HERE.parent), str(REPO / "python")]   # the kit (tests/) and linkemu
from kit.frames import frames  # noqa: E402
CORPUS = HERE / "corpus"
CONTROL_WORDS = {"help", "show", "set", "stats", "reset", "a2b", "b2a", "at", " at +"}
WORDS = set((HERE / "grammar.dict").read_text().split('"')[1::2]) - CONTROL_WORDS


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


def frame_seeds() -> list[bytes]:
    # first byte: rule set (low bits) and "headers cut short" (0x80); fuzz_frame.c
    return [bytes([sel]) + f for _what, f in frames() for sel in (0, 1, 2, 3, 0x81)]


def classify_hits() -> list[bytes]:
    """Frames that match fuzz_classify.c's rules (ports 5000-5015, 198.19.0.1,
    VLAN 100, sport 53, dport 1000-2000), so mutations start next to a
    hash group's entries instead of having to find them."""
    from kit.frames import eth, ipv4, ipv6

    def to_19(f: bytes) -> bytes:  # destination 198.19.0.1
        return f[:30] + bytes([198, 19, 0, 1]) + f[34:]

    out = []
    for port in (5000, 5003, 5011, 5012, 5015, 1500):
        udp = struct.pack("!HHHH", 5000, port, 8, 0)
        tcp = struct.pack("!HHIIBBHHH", 5000, port, 1, 0, 0x50, 0x02, 65535, 0, 0)
        out += [to_19(eth(0x0800) + ipv4(17, udp)), to_19(eth(0x0800) + ipv4(6, tcp))]
    out += [eth(0x0800, ((0x8100, 100),)) + ipv4(17, struct.pack("!HHHH", 53, 9, 8, 0)),
            eth(0x86DD) + ipv6(6, struct.pack("!HHIIBBHHH", 1, 80, 1, 0, 0x50, 0x02, 1, 0, 0)),
            eth(0x0800) + ipv4(1, b"\x08\x00\x00\x00\x00\x01\x00\x01", tos=0x88)]
    # TCP behind an IPv6 AH (24 bytes: Payload Len 4), and IPv4's AH
    ah = bytes([6, 4, 0, 0]) + b"\xa5" * 20
    tcp80 = struct.pack("!HHIIBBHHH", 40000, 80, 1, 0, 0x50, 0x02, 1, 0, 0)
    out += [eth(0x86DD) + ipv6(51, ah + tcp80), eth(0x0800) + ipv4(51, ah + tcp80)]
    return out


def classify_seeds() -> list[bytes]:
    # first byte: rule set (fuzz_classify.c has five); frames of at most 256 bytes
    fs = [f for _what, f in frames() if len(f) <= 256] + classify_hits()
    return [bytes([sel]) + f for f in fs for sel in range(5)]


def control_seeds(grammars: list[str]) -> list[bytes]:
    """Request lines (docs/control.md), good and bad, and `set` with a
    sample of the grammar seeds, untimed and timed."""
    lines = ["help", "show", "stats", "reset stats", "set a2b delay 5ms", "set b2a at +1ms loss 1%",
             "set a2b at 2.5s rate 10mbit delay 20ms", "set b2a at 0 delay 1ms", "  show\r", "",
             "bogus", "show me", "set", "set c2d delay 1ms", "set a2b at", "set a2b at +x delay 1ms",
             "set a2b at +1ms", "set a2b delay", "set a2b limit 999999999", "reset", "reset stats now",
             "help\x00", "stats\xff"]
    for i, g in enumerate(grammars[::max(1, len(grammars) // 40)]):
        lines.append(f"set {'a2b' if i % 2 == 0 else 'b2a'}{' at +3ms' if i % 3 == 0 else ''} {g}")
    return [s.encode("latin-1") for s in lines if "\n" not in s]


def main() -> int:
    for s in sorted(grammar_seeds()):
        put("grammar", s.encode())
    for s in trace_seeds():
        put("trace", s)
    for s in dist_seeds():
        put("dist", s)
    for s in frame_seeds():
        put("frame", s)
    for s in classify_seeds():
        put("classify", s)
    for s in control_seeds(sorted(grammar_seeds())):
        put("control", s)
    for d in sorted(CORPUS.iterdir()):
        print(f"{d.name}: {sum(1 for _ in d.iterdir())} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
