"""Frames the kernel drops before linkemud can receive them are counted.

A descheduled lcore (here: SIGSTOP) stops draining its AF_XDP RX ring; the
kernel then drops what arrives (the socket's rx_ring_full, or rx_dropped
when the fill ring ran dry). DPDK's net_af_xdp reports only the latter, so
before this was read (src/dataplane/xsk_stats.c) those frames vanished
without a counter. The books: every frame the sender's interface sent
either reached linkemud (rx) or is counted before it (before_rx)."""

from __future__ import annotations

import os
import signal
import time

from kit import dpdk_only, suite_bed
from linkemu.bed import netns, testbed

BED = suite_bed(__file__)

SEND = r"""
import socket, sys, time
n, dst = int(sys.argv[1]), sys.argv[2]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(n):
    s.sendto(i.to_bytes(4, "big") * 16, (dst, 9))
    time.sleep(0.0002)   # paced: the kernel's backlog never overflows
"""


def _tx_packets(ns: str, dev: str) -> int:
    cp = netns.ns_run(ns, ["cat", f"/sys/class/net/{dev}/statistics/tx_packets"])
    return int(cp.stdout)


def test_frames_dropped_while_the_lcore_stalls_are_counted(run_link, bed_up):
    dpdk_only("the AF_XDP sockets' counts are the DPDK ports'")
    b = bed_up
    link = run_link("", "")
    pid = testbed.daemon_pid(b)
    # Resolve the neighbour first, so every frame below is the datagrams'.
    netns.ns_run(b.ns_src, ["ping", "-c", "1", "-W", "2", b.addr_dst])
    sent0 = _tx_packets(b.ns_src, b.ns_dev)
    with link.client() as c:
        rx0 = c.stats()["directions"]["a2b"]["rx"]
    n = 3000
    os.kill(pid, signal.SIGSTOP)
    try:
        netns.ns_run(b.ns_src, ["python3", "-c", SEND, str(n), b.addr_dst], timeout=60)
    finally:
        os.kill(pid, signal.SIGCONT)
    time.sleep(0.5)
    sent = _tx_packets(b.ns_src, b.ns_dev) - sent0
    final = link.stop()
    a2b = final["directions"]["a2b"]
    before = a2b["before_rx"]
    print(f"sent {sent}, linkemud received {a2b['rx'] - rx0}, counted before rx {before}, "
          f"xstats {a2b['port_xstats']['in']}")
    assert sent >= n
    # The RX ring (and fill ring) hold at most a few thousand frames: with
    # the lcore stopped, the kernel must have dropped some...
    assert before["total"] > 0, before
    # ...and every frame is accounted for: received, or counted before rx.
    assert a2b["rx"] - rx0 + before["total"] == sent, (sent, a2b["rx"] - rx0, before)
    xs = a2b["port_xstats"]["in"]
    assert xs.get("xsk_rx_ring_full", 0) + xs.get("xsk_rx_dropped", 0) == before["imissed"], xs
