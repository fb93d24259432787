"""Published numbers the lab's results are shown beside.

Transcribed from the two DEMU papers digested in shared/REFERENCES.md §A
and §B (originals in shared/papers/). All delays are in microseconds, loss
rates in percent, exactly as printed.

How they were obtained (and why ours differ; see docs/lab.md):
- Delay (§A): a GtrcNET-10p3 FPGA tester (timestamp resolution 25.6 ns,
  values truncated below 10 ns) sends UDP with a timestamp in the payload
  into one 10 GbE NIC of the emulator host and timestamps what comes out of
  the other; ~10 s of traffic near line rate (9.743 Gbit/s at 1500 B,
  6.522 Gbit/s at 46 B) or at 1 Gbit/s. The tester's direct loop measured
  0.98 us; DEMU's own overhead about 10 us. Three busy-polling threads on
  isolated cores (isolcpus).
- Loss (§B): 10,000,000 UDP datagrams of 1500 B through 1 ms of inserted
  delay, per specified loss rate; the latency columns are the papers'
  "ave_latency" (the netem text calls them round-trip times); TCP: iperf3,
  60 s, CUBIC.
"""

from __future__ import annotations

DELAY_SOURCE = ("S. Aketa, T. Hirofuchi, R. Takano: DPDK-based network latency emulator "
                "DEMU (IPSJ technical report, in Japanese; published in English as "
                "\"DEMU: A DPDK-based network latency emulator\", IEEE LANMAN 2017, "
                "doi:10.1109/LANMAN.2017.7972145), Tables 2-6. shared/papers/"
                "001_a1de64c9797421b8.txt; digest: shared/REFERENCES.md §A")
LOSS_SOURCE = ("K. Sasaki, T. Hirofuchi, S. Yamaguchi, R. Takano: Implementation and "
               "evaluation of packet loss in a DPDK-based network emulator (in Japanese), "
               "Table 1 and Figs. 2-4. shared/papers/002_0627cce457aa9f99.txt; digest: "
               "shared/REFERENCES.md §B")

INSERTED_US = (0, 1, 10, 100, 1_000, 10_000, 100_000, 1_000_000)

# name -> {"title", "emulator", "link_gbps", "ip_len", rows: max/min/mean/sd/repro (us)}
DELAY_TABLES: dict[str, dict] = {
    "demu-10g-1500": {
        "title": "Table 2 - DEMU, 10 Gbit/s, 1500 B",
        "emulator": "DEMU", "link_gbps": 10, "ip_len": 1500, "rate_gbps": 9.743,
        "max": (31.6, 31.7, 43.2, 131.2, 1_031.4, 10_030.4, 100_031.9, 1_000_044.9),
        "min": (9.1, 9.8, 18.9, 108.8, 1_008.9, 10_008.8, 100_009.7, 1_000_017.8),
        "mean": (12.1, 12.6, 21.5, 111.6, 1_011.8, 10_011.6, 100_012.8, 1_000_021.2),
        "sd": (2.5, 2.4, 2.3, 2.3, 2.4, 2.5, 2.6, 2.6),
        "repro": (None, 0.5, 0.6, 0.5, 0.3, 0.5, 0.7, 9.1),
    },
    "demu-10g-46": {
        "title": "Table 3 - DEMU, 10 Gbit/s, 46 B",
        "emulator": "DEMU", "link_gbps": 10, "ip_len": 46, "rate_gbps": 6.522,
        "max": (56.7, 56.9, 62.1, 154.4, 1_047.8, 10_042.8, 100_042.1, 1_000_051.2),
        "min": (9.4, 10.0, 18.1, 107.5, 1_007.3, 10_007.1, 100_008.0, 1_000_015.8),
        "mean": (11.3, 12.3, 20.5, 109.6, 1_010.0, 10_010.0, 100_010.2, 1_000_018.2),
        "sd": (2.0, 2.2, 2.2, 2.3, 3.4, 3.3, 2.8, 2.8),
        "repro": (None, 0.0, 0.8, 1.7, 1.3, 1.3, 1.1, 6.9),
    },
    "netem-10g-1500": {
        "title": "Table 4 - Linux netem, 10 Gbit/s, 1500 B",
        "emulator": "netem", "link_gbps": 10, "ip_len": 1500, "rate_gbps": 9.743,
        "max": (1_260.4, 2_139.3, 2_089.2, 2_229.8, 3_237.2, 13_242.0, 104_021.2, 1_004_531.3),
        "min": (79.7, 85.9, 83.5, 185.9, 1_071.2, 10_068.9, 100_074.9, 1_000_090.8),
        "mean": (863.6, 1_745.6, 1_659.3, 1_803.4, 2_784.7, 11_852.1, 101_989.5, 1_001_972.8),
        "sd": (107.8, 216.7, 206.0, 212.7, 223.5, 242.0, 285.9, 431.3),
        "repro": (None, 881.0, 785.7, 839.8, 921.1, 988.5, 1_125.9, 1_109.2),
    },
    "netem-1g-1500": {
        "title": "Table 5 - Linux netem, 1 Gbit/s, 1500 B",
        "emulator": "netem", "link_gbps": 1, "ip_len": 1500, "rate_gbps": 1.0,
        "max": (132.1, 147.7, 152.3, 205.1, 1_128.6, 10_131.6, 100_131.5, 1_000_146.9),
        "min": (8.4, 11.6, 20.0, 109.4, 1_010.3, 10_009.3, 100_010.0, 1_000_017.1),
        "mean": (42.1, 42.1, 58.4, 148.6, 1_048.5, 10_045.8, 100_048.1, 1_000_053.8),
        "sd": (18.9, 17.2, 21.1, 21.3, 21.3, 20.8, 21.0, 20.7),
        "repro": (None, 1.0, 6.3, 6.5, 6.4, 3.7, 6.0, 11.7),
    },
    "netem-1g-46": {
        "title": "Table 6 - Linux netem, 1 Gbit/s, 46 B",
        "emulator": "netem", "link_gbps": 1, "ip_len": 46, "rate_gbps": 1.0,
        "max": (5_484.9, 13_267.4, 11_878.7, 12_737.4, 13_691.8, 23_894.7, 127_789.9, 1_030_244.2),
        "min": (76.3, 83.9, 80.0, 185.1, 1_080.3, 10_085.6, 100_096.5, 1_000_116.0),
        "mean": (3_036.2, 7_295.7, 6_585.1, 7_071.1, 7_938.5, 17_661.1, 108_479.5, 1_008_156.2),
        "sd": (1_383.3, 3_323.6, 2_995.7, 3_176.4, 3_161.2, 3_492.0, 3_881.7, 3_882.2),
        "repro": (None, 4_258.5, 3_538.9, 3_934.9, 3_902.3, 4_624.9, 5_443.3, 5_120.0),
    },
}

# Published tables shown beside ours for each IP length.
DELAY_TABLES_FOR_LEN = {1500: ("demu-10g-1500", "netem-10g-1500", "netem-1g-1500"),
                        46: ("demu-10g-46", "netem-1g-46")}

# Table 1 of §B: specified loss % -> (DEMU loss %, mean us, sd us, netem loss %, mean us, sd us)
LOSS_TABLE_TITLE = "Table 1 - specified vs measured loss (10^7 UDP frames of 1500 B, 1 ms delay)"
LOSS_FRAMES = 10_000_000
LOSS_TABLE: dict[float, tuple] = {
    0.0: (0.0, 1757, 123, 0.03061, 2832, 191),
    0.0001: (0.00012, 1761, 126, 0.23633, 2746, 283),
    0.001: (0.00092, 1748, 126, 0.93112, 2493, 125),
    0.01: (0.01013, 1733, 123, 0.93358, 2432, 269),
    0.1: (0.10028, 1720, 119, 2.53091, 2416, 204),
    1.0: (1.00171, 1711, 119, 3.65741, 2386, 275),
}

# §B's TCP observation at 0.01 % loss over 30 s (Fig. 3 and text).
LOSS_EVENTS_30S = {"DEMU": {"events": 1462, "packets": 1462},
                   "netem": {"events": 94, "packets": 2349}}
TCP_NOTE = ("iperf3, 60 s, CUBIC, loss 0 .. 1 %: up to 0.001 % DEMU and netem give the same "
            "throughput; at 0.01-0.1 % DEMU's is lower, because netem drops in bursts "
            "(30 s at 0.01 %: netem 94 loss events losing 2,349 packets, DEMU 1,462 events "
            "losing 1,462); the sender's cwnd drops far more often with DEMU (Fig. 4). "
            "The papers print the throughput only as a figure (Fig. 2), not as numbers.")


def delay_table(name: str) -> dict:
    return DELAY_TABLES[name]


def loss_row(spec_percent: float) -> tuple | None:
    """Table 1's row for a specified loss in percent (None if not in the table)."""
    for k, row in LOSS_TABLE.items():
        if abs(k - spec_percent) <= 1e-12 + 1e-9 * k:
            return row
    return None


# --- The long-fat-pipe study (REFERENCES.md §D) ------------------------------
# Y. Amagai, K. Murakami, K. Kugimoto, A. Oka, M. Itoh, S. Gotoh, M. Itoh:
# "An analysis of behavior in a high-speed long-distance Internet" (NTT Basic
# Research Laboratories / NTT Software Laboratories, in Japanese). Tokyo-Kyoto,
# ~880 km of fibre, one DS3 (~45 Mbit/s) of an STM-1, hosts on 100 Mbit/s FDDI
# (MTU 4352), one TCP stream with rttcp (~4 KB writes x 20,000, ~80 MB).
LFP_SOURCE = ("Y. Amagai, K. Murakami, K. Kugimoto, A. Oka, M. Itoh, S. Gotoh, M. Itoh: "
              "An analysis of behavior in a high-speed long-distance Internet "
              "(NTT, in Japanese): Table 2, Fig. 3 (window vs throughput), Fig. 4 "
              "(Seq/Ack numbers in the LFP syndrome), section 3.3 (x, y, S)")

# Table 2: 155 Mbit/s fibre, 4 KB (4,096 B, BSD's default) window.
# (distance km, RTT ms, throughput Mbit/s)
LFP_TABLE2 = ((1_000, 9.6, 3.4), (3_000, 28.6, 1.15), (14_000, 133.0, 0.246))
LFP_TABLE2_RATE_BPS = 155e6
LFP_TABLE2_WINDOW = 4096
# "to use 155 Mbit/s up at 1,000 km a window of 190 KB is needed"
LFP_FILL_WINDOW_KB_1000KM = 190

# Fig. 3: three regions of window vs throughput.
LFP_KNEE_KB = 100          # region 1 (slope 1/RTT) ends, line rate reached
LFP_COLLAPSE_KB = 170      # region 3 (the LFP syndrome) starts
LFP_COLLAPSE_MBPS = 8.0    # throughput in the syndrome
LFP_RTT_MS = 12.0          # RTT between the hosts (the dashed theory line)
LFP_BOTTLENECK_MBPS = 45.0
LFP_WINDOWS_KB = (8, 520)  # the range swept

# Fig. 4 (window above 170 KB): 0.2 s of sending, nothing until 1.5 s;
# unacked ~270,000 B at 0.2 s; RTT grown to ~300 ms; Seq slope ~65 Mbit/s,
# Ack slope ~44 Mbit/s.
LFP_FIG4 = {"sending_s": 0.2, "silent_until_s": 1.5, "unacked_bytes": 270_000,
            "rtt_ms": 300.0, "seq_slope_mbps": 65.0, "ack_slope_mbps": 44.0}
