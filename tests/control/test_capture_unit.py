"""`linkemu capture` without DPDK: the pcapng reader on files built here,
the port/direction mapping, dumpcap's command line, and what is done with
the file afterwards."""

from __future__ import annotations

import struct

import pytest

from linkemu.daemon import capture
from linkemu.daemon.capture import INBOUND, OUTBOUND


def _block(btype: int, body: bytes) -> bytes:
    body += b"\0" * (-len(body) % 4)
    n = len(body) + 12
    return struct.pack("<II", btype, n) + body + struct.pack("<I", n)


def _opt(code: int, value: bytes) -> bytes:
    return struct.pack("<HH", code, len(value)) + value + b"\0" * (-len(value) % 4)


def shb() -> bytes:
    return _block(capture.SHB, struct.pack("<IHHq", capture.BYTE_ORDER_MAGIC, 1, 0, -1)
                  + _opt(4, b"dpdk-dumpcap test") + _opt(0, b""))


def idb(name: str, descr: str, tsresol: int = 9) -> bytes:
    return _block(capture.IDB, struct.pack("<HHI", 1, 0, 0) + _opt(2, name.encode())
                  + _opt(3, descr.encode()) + _opt(9, bytes([tsresol])) + _opt(0, b""))


def epb(if_id: int, ts: int, data: bytes, flags: int | None) -> bytes:
    body = struct.pack("<IIIII", if_id, ts >> 32, ts & 0xFFFFFFFF, len(data), len(data))
    body += data + b"\0" * (-len(data) % 4)
    if flags is not None:
        body += _opt(2, struct.pack("<I", flags)) + _opt(0, b"")
    return _block(capture.EPB, body)


def isb(if_id: int) -> bytes:
    return _block(capture.ISB, struct.pack("<III", if_id, 0, 0) + _opt(0, b""))


MAC_SRC = bytes.fromhex("a27a17e41736")
MAC_DST = bytes.fromhex("0a20eeec2a4f")


def icmp_frame(src: str, dst: str, icmp_type: int, smac=MAC_SRC, dmac=MAC_DST) -> bytes:
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 28, 1, 0, 64, 1, 0,
                     bytes(map(int, src.split("."))), bytes(map(int, dst.split("."))))
    return dmac + smac + b"\x08\x00" + ip + bytes([icmp_type, 0, 0, 0, 0, 1, 0, 1])


def dumpcap_file(path, packets) -> None:
    """Like dpdk-dumpcap 22.11: one IDB per port, packets numbered by port."""
    data = shb() + idb("lc-a", "vdev-net_af_xdp0") + idb("lc-b", "vdev-net_af_xdp1")
    for i, (port, flags, frame) in enumerate(packets):
        data += epb(port, 1_700_000_000_000_000_000 + i * 1000, frame, flags)
    data += isb(0) + isb(1)
    path.write_bytes(data)


def test_read_pcapng(tmp_path):
    f = tmp_path / "x.pcapng"
    req = icmp_frame("198.18.0.1", "198.18.0.2", 8)
    rep = icmp_frame("198.18.0.2", "198.18.0.1", 0, MAC_DST, MAC_SRC)
    dumpcap_file(f, [(1, OUTBOUND, req), (1, INBOUND, rep), (0, None, req)])
    pc = capture.read_pcapng(f)
    assert [i.name for i in pc.interfaces] == ["lc-a", "lc-b"]
    assert pc.interfaces[1].description == "vdev-net_af_xdp1"
    assert [(p.interface, p.direction) for p in pc.packets] == [(1, "out"), (1, "in"), (0, None)]
    assert pc.packets[0].data == req and pc.packets[0].origlen == len(req)
    assert pc.packets[1].ts_ns == 1_700_000_000_000_001_000
    assert capture.ipv4_info(req) == {"src": "198.18.0.1", "dst": "198.18.0.2", "proto": 1,
                                      "icmp_type": 8, "icmp_id": 1, "icmp_seq": 1}
    assert capture.ether_src(rep) == "0a:20:ee:ec:2a:4f"


def test_microsecond_resolution_and_big_endian(tmp_path):
    f = tmp_path / "us.pcapng"
    f.write_bytes(shb() + idb("x", "y", tsresol=6) + epb(0, 5, b"\0" * 20, None))
    assert capture.read_pcapng(f).packets[0].ts_ns == 5000
    # The same file written big-endian.
    def be_block(btype, body):
        body += b"\0" * (-len(body) % 4)
        n = len(body) + 12
        return struct.pack(">II", btype, n) + body + struct.pack(">I", n)
    data = be_block(capture.SHB, struct.pack(">IHHq", capture.BYTE_ORDER_MAGIC, 1, 0, -1))
    data += be_block(capture.IDB, struct.pack(">HHI", 1, 0, 0))
    data += be_block(capture.EPB, struct.pack(">IIIII", 0, 0, 7, 4, 4) + b"abcd")
    f.write_bytes(data)
    p = capture.read_pcapng(f).packets[0]
    assert p.data == b"abcd" and p.ts_ns == 7000


@pytest.mark.parametrize("data,msg", [(b"", None),
                                      (b"\x01\x00\x00\x00" + b"\0" * 20, "not a pcapng"),
                                      (None, "truncated|bad block length")])
def test_bad_files(tmp_path, data, msg):
    f = tmp_path / "bad.pcapng"
    if data is None:
        data = shb() + idb("a", "b")[:-6]
    f.write_bytes(data)
    if msg is None:
        assert capture.read_pcapng(f).packets == []
    else:
        with pytest.raises(capture.PcapngError, match=msg):
            capture.read_pcapng(f)


def test_port_plan_maps_direction_and_side():
    assert capture.port_plan("a2b", "in") == [(0, "in")]
    assert capture.port_plan("a2b", "out") == [(1, "out")]
    assert capture.port_plan("b2a", "in") == [(1, "in")]
    assert capture.port_plan("b2a", "out") == [(0, "out")]
    assert capture.port_plan("a2b", "both") == [(0, "in"), (1, "out")]
    with pytest.raises(capture.UsageError):
        capture.port_plan("x2y", "in")


def test_dumpcap_argv(monkeypatch):
    monkeypatch.setattr(capture, "tool_cpus", lambda: "0")
    argv = capture.build_argv("/usr/bin/dpdk-dumpcap", "linkemu-lc", 1, "/tmp/o.pcapng",
                              count=100, snaplen=128,
                              bpf=capture.build_filter("aa:bb:cc:dd:ee:ff", "icmp"))
    assert argv == ["taskset", "-c", "0", "/usr/bin/dpdk-dumpcap", "--file-prefix=linkemu-lc",
                    "-i", "1", "-p", "-n", "-w", "/tmp/o.pcapng", "-c", "100", "-s", "128",
                    "-f", "ether src aa:bb:cc:dd:ee:ff and (icmp)"]


class Cap:
    """What _finish needs of a finished dumpcap."""

    def __init__(self, out, stderr=""):
        self.out, self.stderr, self.argv = out, stderr, ["dpdk-dumpcap"]


def test_finish_cuts_to_count_and_drops_the_other_direction(tmp_path):
    f = tmp_path / "c.port1"
    req = icmp_frame("198.18.0.1", "198.18.0.2", 8)
    rep = icmp_frame("198.18.0.2", "198.18.0.1", 0, MAC_DST, MAC_SRC)
    pkts = [(1, OUTBOUND, req)] * 3 + [(1, INBOUND, rep)] + [(1, OUTBOUND, req)] * 5
    dumpcap_file(f, pkts)
    out = tmp_path / "c.pcapng"
    err = "Packets received/dropped on interface 'net_af_xdp1': 9/2 (81.8)\n"
    res = capture._finish(out, [Cap(f, err)], [(1, "out")], 6, None, 1.0, True)
    assert (res.packets, res.written, res.removed_direction, res.trimmed) == (6, 9, 1, 2)
    assert res.per_port == {1: 6}
    assert res.dumpcap_stats == [{"name": "net_af_xdp1", "received": 9, "dropped": 2}]
    pc = capture.read_pcapng(out)
    assert len(pc.packets) == 6 and all(p.direction == "out" for p in pc.packets)
    # Interfaces and statistics blocks survive the rewrite.
    assert len(pc.interfaces) == 2
    assert sum(1 for b in pc.blocks if b.type == capture.ISB) == 2


def test_finish_merges_two_ports_in_time_order(tmp_path):
    req = icmp_frame("198.18.0.1", "198.18.0.2", 8)
    rep = icmp_frame("198.18.0.2", "198.18.0.1", 0, MAC_DST, MAC_SRC)
    f0, f1 = tmp_path / "m.port0", tmp_path / "m.port1"
    # dumpcap_file stamps packet i at base + i us: interleave the two files.
    dumpcap_file(f0, [(0, INBOUND, req), (0, OUTBOUND, rep)] * 3)
    data = shb() + idb("lc-a", "vdev-net_af_xdp0") + idb("lc-b", "vdev-net_af_xdp1")
    for i in range(3):
        data += epb(1, 1_700_000_000_000_000_000 + i * 2000 + 500, req, OUTBOUND)
    f1.write_bytes(data)
    out = tmp_path / "m.pcapng"
    res = capture._finish(out, [Cap(f0), Cap(f1)], [(0, "in"), (1, "out")], None, None, 1.0,
                          True)
    assert res.per_port == {0: 3, 1: 3} and res.removed_direction == 3
    pc = capture.read_pcapng(out)
    assert len(pc.interfaces) == 2          # the same IDBs in both: shared
    assert [(p.interface, p.direction) for p in pc.packets] == [(0, "in"), (1, "out")] * 3
    assert [p.ts_ns for p in pc.packets] == sorted(p.ts_ns for p in pc.packets)


def test_merge_renumbers_interfaces_that_differ(tmp_path):
    req = icmp_frame("198.18.0.1", "198.18.0.2", 8)
    a, b = tmp_path / "a.pcapng", tmp_path / "b.pcapng"
    a.write_bytes(shb() + idb("lc-a", "x") + epb(0, 1, req, INBOUND) + isb(0))
    b.write_bytes(shb() + idb("lc-b", "y") + epb(0, 2, req, OUTBOUND) + isb(0))
    pa, pb = capture.read_pcapng(a), capture.read_pcapng(b)
    out = tmp_path / "ab.pcapng"
    capture.merge([pa, pb], [pa.packets, pb.packets], out)
    pc = capture.read_pcapng(out)
    assert [i.name for i in pc.interfaces] == ["lc-a", "lc-b"]
    assert [(p.interface, p.direction) for p in pc.packets] == [(0, "in"), (1, "out")]
    isbs = [struct.unpack_from("<I", blk.raw, 8)[0] for blk in pc.blocks if blk.type == capture.ISB]
    assert isbs == [0, 1]


def test_failure_messages():
    m = capture._explain_failure(1, "EAL: Fail to recv reply for request "
                                    "/var/run/dpdk/linkemu-lc/mp_socket:mp_pdump\n", "linkemu-lc")
    assert "does not serve packet capture" in m and "rte_pdump_init" in m
    m = capture._explain_failure(1, "EAL init failed: is primary process running?", "linkemu-lc")
    assert "could not attach" in m and "linkemu-lc" in m
