"""The capture reader: a pcap written here by hand, with a SYN, data, a
retransmission, ACKs and a sequence number that wraps past 2^32."""

from __future__ import annotations

import struct

import pytest

from linkemu.errors import LinkemuError
from linkemu.instruments import tcpcap

SND, RCV = "198.18.0.1", "198.18.0.2"


def _ip(a: str) -> bytes:
    return bytes(int(x) for x in a.split("."))


def _frame(src, dst, sport, dport, seq, ack, flags, plen):
    tcp = struct.pack(">HHIIBBHHH", sport, dport, seq, ack, 5 << 4, flags, 65535, 0, 0)
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + 20 + plen, 0, 0, 64, 6, 0, _ip(src),
                     _ip(dst))
    return b"\x00" * 12 + b"\x08\x00" + ip + tcp       # payload not captured (snaplen)


def _pcap(path, frames):
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 96, 1)
    for i, f in enumerate(frames):
        out += struct.pack("<IIII", 100, i * 1000, len(f), len(f)) + f
    path.write_bytes(out)


def test_reads_seq_ack_and_retransmissions(tmp_path):
    isn = 0xFFFFF000                          # the relative sequence wraps at 4,096
    fr = [_frame(SND, RCV, 40000, 5001, isn - 1, 0, 0x02, 0),             # SYN
          _frame(RCV, SND, 5001, 40000, 7, isn, 0x12, 0),                  # SYN-ACK
          _frame(SND, RCV, 40000, 5001, isn, 1, 0x10, 1448),
          _frame(SND, RCV, 40000, 5001, isn + 1448, 1, 0x10, 1448),
          _frame(SND, RCV, 40000, 5001, (isn + 2896) % 2**32, 1, 0x10, 1448),
          _frame(SND, RCV, 40000, 5001, isn + 1448, 1, 0x10, 1448),        # again
          _frame(RCV, SND, 5001, 40000, 1, (isn + 4344) % 2**32, 0x10, 0)]
    p = tmp_path / "c.pcap"
    _pcap(p, fr)
    t = tcpcap.read_tcp(p, SND, 5001)
    assert t["packets"] == 7
    assert t["seq_bytes"] == [1448, 2896, 4344]
    assert t["retrans_seq"] == [2896]
    assert t["ack_bytes"][-1] == 4344
    assert t["t_s"] == pytest.approx([0.002, 0.003, 0.004])


def test_refuses_what_is_not_a_pcap(tmp_path):
    p = tmp_path / "x.pcap"
    p.write_bytes(b"hello, world" * 4)
    with pytest.raises(LinkemuError, match="not a pcap file"):
        tcpcap.read_tcp(p, SND, 5001)


def test_a_retransmission_from_before_the_4_gib_wrap_stays_there(tmp_path):
    """The relative sequence passes 2^32 (4 GiB sent; a capture sees it in
    steps well under 2^31); then a segment sent
    just before that point is sent again. It is a retransmission ending at
    2^32, not new data 4 GiB further on."""
    isn = 1000
    wire = lambda rel: (isn + rel) % 2**32                         # noqa: E731
    fr = [_frame(SND, RCV, 40000, 5001, isn - 1, 0, 0x02, 0),                   # SYN
          _frame(SND, RCV, 40000, 5001, wire(0), 1, 0x10, 1448),
          *(_frame(SND, RCV, 40000, 5001, wire(k << 30), 1, 0x10, 1448) for k in (1, 2, 3)),
          _frame(SND, RCV, 40000, 5001, wire(2**32 - 1448), 1, 0x10, 1448),
          _frame(SND, RCV, 40000, 5001, wire(2**32), 1, 0x10, 1448),           # wrapped
          _frame(SND, RCV, 40000, 5001, wire(2**32 - 1448), 1, 0x10, 1448),    # again
          _frame(SND, RCV, 40000, 5001, wire(2**32 + 1448), 1, 0x10, 1448),
          _frame(RCV, SND, 5001, 40000, 1, wire((3 << 30) + 1448), 0x10, 0),
          _frame(RCV, SND, 5001, 40000, 1, wire(2**32 + 1448), 0x10, 0),
          _frame(RCV, SND, 5001, 40000, 1, wire(2**32), 0x10, 0)]              # an old ACK, late
    p = tmp_path / "w.pcap"
    _pcap(p, fr)
    t = tcpcap.read_tcp(p, SND, 5001)
    assert t["seq_bytes"] == [1448, *((k << 30) + 1448 for k in (1, 2, 3)), 2**32,
                              2**32 + 1448, 2**32 + 2896]
    assert t["retrans_seq"] == [2**32]
    assert t["ack_bytes"] == [(3 << 30) + 1448, 2**32 + 1448, 2**32]
