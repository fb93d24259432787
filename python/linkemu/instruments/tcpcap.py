"""A packet capture of one TCP connection inside a bed namespace (tcpdump),
and its reading: per packet, the sequence numbers sent and acknowledged.

    with tcpcap.capture(bed.ns_src, bed.ns_dev, path, port=5001):
        ... traffic ...
    trace = tcpcap.read_tcp(path, sender=bed.addr_src, port=5001)

The reader parses classic pcap (tcpdump -w) of Ethernet/IPv4/TCP itself,
headers only (snap length 96), so it needs nothing beyond the standard
library. Sequence and ACK numbers are relative to the sender's initial
sequence number (mod 2^32, unwrapped), like the study's Fig. 4.
"""

from __future__ import annotations

import contextlib
import shutil
import struct
import subprocess
from pathlib import Path

from linkemu.bed import netns, procs
from linkemu.bed.cpus import tool_cpus
from linkemu.errors import LinkemuError

SNAPLEN = 96
_MAGIC = {b"\xd4\xc3\xb2\xa1": ("<", 1e-6), b"\xa1\xb2\xc3\xd4": (">", 1e-6),
          b"\x4d\x3c\xb2\xa1": ("<", 1e-9), b"\xa1\xb2\x3c\x4d": (">", 1e-9)}
LINKTYPE_ETHERNET = 1


def available() -> str | None:
    """None, or why no capture can be taken."""
    return None if shutil.which("tcpdump") else "tcpdump not found (Debian package tcpdump)"


@contextlib.contextmanager
def capture(ns: str, dev: str, path: Path, port: int):
    why = available()
    if why:
        raise LinkemuError(f"cannot capture: {why}")
    cmd = ["tcpdump", "-i", dev, "-n", "-s", str(SNAPLEN), "-U", "-w", str(path),
           "tcp", "port", str(port)]
    p = subprocess.Popen(netns.ns_exec_argv(ns, cmd, cpus=tool_cpus()),
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        line = p.stderr.readline()          # "listening on eth0, ..." once it captures
        if "listening on" not in line:
            p.wait(5)
            raise LinkemuError(f"tcpdump did not start: {line.strip()} "
                               f"{p.stderr.read().strip()}")
        yield p
    finally:
        procs.terminate(p.pid, 5.0, p)
        p.stderr.close()


def _packets(data: bytes):
    if len(data) < 24 or data[:4] not in _MAGIC:
        raise LinkemuError("not a pcap file (tcpdump -w)")
    end, unit = _MAGIC[data[:4]]
    if struct.unpack(end + "I", data[20:24])[0] != LINKTYPE_ETHERNET:
        raise LinkemuError("pcap link type is not Ethernet")
    off = 24
    while off + 16 <= len(data):
        sec, frac, incl, _orig = struct.unpack(end + "IIII", data[off:off + 16])
        yield sec + frac * unit, data[off + 16:off + 16 + incl]
        off += 16 + incl


def read_tcp(path: Path, sender: str, port: int) -> dict:
    """Data segments of the sender and ACKs of the receiver, in time order."""
    src = bytes(int(x) for x in sender.split("."))
    isn = t0 = None
    hi = 0                     # highest sequence end sent (unwrapped)
    last_seq = last_ack = 0
    out = {"t_s": [], "seq_bytes": [], "retrans_t_s": [], "retrans_seq": [],
           "ack_t_s": [], "ack_bytes": [], "packets": 0}

    def unwrap(v: int, last: int) -> int:
        """The number whose low 32 bits are v nearest to last, before or
        after it (a retransmission or a late ACK is before), but never
        before the ISN (0)."""
        d = (v - last) % (1 << 32)
        if d >= 1 << 31 and last + d >= 1 << 32:
            return last + d - (1 << 32)
        return last + d

    for ts, pkt in _packets(Path(path).read_bytes()):
        if len(pkt) < 14 + 20 or pkt[12:14] != b"\x08\x00":
            continue
        ip = pkt[14:]
        ihl = (ip[0] & 0x0F) * 4
        if ip[9] != 6 or len(ip) < ihl + 20:
            continue
        total = struct.unpack(">H", ip[2:4])[0]
        tcp = ip[ihl:]
        sport, dport, seq, ack = struct.unpack(">HHII", tcp[:12])
        if port not in (sport, dport):
            continue
        thl = (tcp[12] >> 4) * 4
        flags = tcp[13]
        plen = total - ihl - thl
        out["packets"] += 1
        if t0 is None:
            t0 = ts
        t = ts - t0
        if ip[12:16] == src:
            if flags & 0x02:                       # SYN: the sender's ISN
                isn = (seq + 1) % (1 << 32)
                continue
            if isn is None or plen <= 0:
                continue
            rel = unwrap((seq - isn) % (1 << 32), last_seq)
            last_seq = rel
            e = rel + plen
            if e <= hi:
                out["retrans_t_s"].append(t)
                out["retrans_seq"].append(e)
            else:
                hi = e
                out["t_s"].append(t)
                out["seq_bytes"].append(e)
        elif isn is not None and flags & 0x10:
            rel = unwrap((ack - isn) % (1 << 32), last_ack)
            last_ack = rel
            out["ack_t_s"].append(t)
            out["ack_bytes"].append(rel)
    return out
