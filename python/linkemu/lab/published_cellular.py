"""The published 4G/5G study that `linkemu lab cellular` is set beside.

Sakai (@neko_suki), "5Gでのトランスポートプロトコルの評価" (Evaluating
transport protocols over 5G), aptpod Tech Blog, aptpod Advent Calendar
2020, day 14 (December 2020). Client: Raspberry Pi 4 (Ubuntu 20.04) behind
a docomo Wi-Fi STATION SH-52A mobile router (4G or 5G mode); server: an AWS
EC2 m5.xlarge (Ubuntu 18.04). Measured on Dec 4, 2020 near the east gate
of Nissan Stadium; the "Dec 2" columns repeat the authors' previous post,
whose 4G used another router (L-01G).

Numbers are transcribed exactly as printed (ms, Mbit/s). The unit-latency
results were published only as figures; the text's ranges are kept here as
the authors wrote them.
"""

from __future__ import annotations

SOURCE = ("Sakai (@neko_suki): \"5Gでのトランスポートプロトコルの評価\" (Evaluating transport "
          "protocols over 5G), aptpod Tech Blog, Advent Calendar 2020 day 14; ping, iperf3 "
          "and TCP/QUIC/UDP unit-latency measurements over docomo 4G and 5G")

# profile name -> the study's column
LINKS = {
    "cell-4g-dec4": {"label": "4G (Dec 4)", "net": "4G",
                     "ping_ms": {"mean": 40.3, "p10": 31.7, "p50": 40.5, "p90": 47.9},
                     "udp_mbit": (20.9, 21.2, 20.7), "udp_offered": "25M",
                     "tcp_bbr_mbit": (10.3, 13.6, 16.2)},
    "cell-5g-dec4": {"label": "5G (Dec 4)", "net": "5G",
                     "ping_ms": {"mean": 43.3, "p10": 32.9, "p50": 44.0, "p90": 52.12},
                     "udp_mbit": (45.2, 18.4, 39.4), "udp_offered": "50M",
                     "tcp_bbr_mbit": (40.3, 43.4, 34.2)},
    "cell-4g-dec2": {"label": "4G (Dec 2, L-01G)", "net": "4G",
                     "ping_ms": {"mean": 74.5, "p10": 65.2, "p50": 75.6, "p90": 83.9},
                     "udp_mbit": (17.4, 24.6, 25.0), "udp_offered": "25M",
                     "tcp_bbr_mbit": (9.33, 11.1, 12.3)},
    "cell-5g-dec2": {"label": "5G (Dec 2)", "net": "5G",
                     "ping_ms": {"mean": 38.5, "p10": 30.4, "p50": 39.15, "p90": 46.09},
                     "udp_mbit": (45.2, 47.0, 47.0), "udp_offered": "50M",
                     "tcp_bbr_mbit": (15.9, 17.8, 34.4)},
}

UDP_NOTE = ("UDP: the rate raised until saturation (4G sent at 25 Mbit/s, 5G at 50 Mbit/s); "
            "the 5G Dec 4 18.4 Mbit/s run had heavy loss.")

# The unit-latency experiment: 8-byte units every 1 ms, flushes of 10, 5 runs of
# 10,000 units per protocol and network (Dec 4). (lo, hi) ms as the text says.
UNITS = {
    ("tcp", "5G"): {"range_ms": (19, 36), "text": "within ~20 ms of spread, 19-36 ms"},
    ("tcp", "4G"): {"range_ms": (10, 50), "text": "spread ~40 ms, mostly 10-50 ms"},
    ("quic", "5G"): {"range_ms": (18, 38), "text": "18-38 ms"},
    ("quic", "4G"): {"range_ms": (15, 45),
                     "text": "two modes: 18-34 ms and 15-45 ms (two paths, the authors suspect)"},
    ("udp", "5G"): {"range_ms": None, "text": "range unstable over time (wider than 4G)"},
    ("udp", "4G"): {"range_ms": (19, 29), "text": "wide for the first 2 s, then mostly 19-29 ms"},
}
UNITS_CONCLUSION = ("More than 10 units arrive together, so something on the path queues "
                    "unexpectedly; path changes affect latency; no clear 4G/5G difference.")
UNIT_LINKS = ("cell-4g-dec4", "cell-5g-dec4")
