"""Parsing of the instruments' outputs (no bed): ping's reply lines."""

from __future__ import annotations

from linkemu.instruments import ping

# iputils ping over a link with `duplicate`: sequence 2 came back twice.
PING_WITH_DUP = """\
PING 198.18.0.2 (198.18.0.2) 56(84) bytes of data.
64 bytes from 198.18.0.2: icmp_seq=1 ttl=64 time=10.1 ms
64 bytes from 198.18.0.2: icmp_seq=2 ttl=64 time=10.2 ms
64 bytes from 198.18.0.2: icmp_seq=2 ttl=64 time=10.9 ms (DUP!)
64 bytes from 198.18.0.2: icmp_seq=3 ttl=64 time=10.3 ms

--- 198.18.0.2 ping statistics ---
3 packets transmitted, 3 received, +1 duplicates, 0% packet loss, time 402ms
rtt min/avg/max/mdev = 10.100/10.200/10.300/0.081 ms
"""


def test_ping_duplicates_are_neither_replies_nor_rtts():
    """A "(DUP!)" line is a copy of a reply already counted: ping counts 3
    received and +1 duplicate, so must we (else received > transmitted and
    the copy's RTT moves the median)."""
    r = ping.parse_ping(PING_WITH_DUP)
    assert r.transmitted == 3
    assert r.received == 3
    assert r.rtts_ms == [10.1, 10.2, 10.3]
    assert r.duplicates == 1
    s = r.summary()
    assert s["received"] == 3 and s["duplicates"] == 1 and s["max_ms"] == 10.3


def test_ping_no_reply_at_all():
    out = ("PING 198.18.0.2 (198.18.0.2) 56(84) bytes of data.\n\n"
           "--- 198.18.0.2 ping statistics ---\n"
           "5 packets transmitted, 0 received, 100% packet loss, time 4090ms\n")
    r = ping.parse_ping(out)
    assert (r.transmitted, r.received, r.duplicates) == (5, 0, 0)
    assert r.summary()["median_ms"] is None


# iperf3 3.12 -J, UDP client, end section, over a link that lost half the
# datagrams: "sum" carries the sender's rate (its bytes are the bytes sent),
# "sum_received" the receiver's.
IPERF3_UDP_END_HALF_LOST = {
    "sum": {"start": 0, "end": 1.0, "seconds": 1.0, "bytes": 6_250_000,
            "bits_per_second": 50_000_000.0, "jitter_ms": 0.05, "lost_packets": 2232,
            "packets": 4464, "lost_percent": 50.0, "sender": True},
    "sum_sent": {"start": 0, "end": 1.0, "seconds": 1.0, "bytes": 6_250_000,
                 "bits_per_second": 50_000_000.0, "jitter_ms": 0, "lost_packets": 0,
                 "packets": 4464, "lost_percent": 0, "sender": True},
    "sum_received": {"start": 0, "end": 1.0, "seconds": 1.0, "bytes": 3_125_000,
                     "bits_per_second": 25_000_000.0, "jitter_ms": 0.05,
                     "lost_packets": 2232, "packets": 4464, "lost_percent": 50.0,
                     "sender": False},
}


def test_iperf3_udp_summary_is_what_arrived_not_what_was_sent():
    from linkemu.instruments.iperf3 import iperf3_udp_summary
    s = iperf3_udp_summary({"end": IPERF3_UDP_END_HALF_LOST})
    assert s["mbit_s"] == 25.0 and s["sent_mbit_s"] == 50.0
    assert s["lost_percent"] == 50.0 and s["jitter_ms"] == 0.05


def test_iperf3_udp_summary_of_an_iperf3_without_sum_received():
    from linkemu.instruments.iperf3 import iperf3_udp_summary
    end = {"sum": IPERF3_UDP_END_HALF_LOST["sum"]}
    s = iperf3_udp_summary({"end": end})
    assert s["lost_percent"] == 50.0 and s["jitter_ms"] == 0.05
    # received = sent x (packets - lost) / packets (iperf3's datagrams are all -l bytes)
    assert s["mbit_s"] == 25.0 and s["sent_mbit_s"] == 50.0
