"""The published forwarding study that `linkemu lab forwarding` is set beside.

M. Hamamura, Y. Fujino, H. Hara: "Evaluation report of high-speed,
wide-bandwidth data communication technology" (in Japanese): one forwarding
program run three ways with only its packet I/O replaced - SWA on Linux
kernel sockets, SWB on DPDK 19.11 (RX and TX each on a dedicated core), SWC
= SWB plus a split in which control-class frames go through a named pipe to
an ordinary Linux process and back. Xeon D-1577 (16 cores), X552/X557
10GBASE-T; two sender/receiver pairs with 1 GbE NICs made the "2 Gbit/s"
load. iperf 2.0.10, 180 s per payload size sampled every 1 s; ping RTT; a
1,000 s run at 32 B for the latency distribution (Fig. 8).

Table 8 is transcribed exactly as printed: throughput ratio against SWA at
2 Gbit/s. The study marks 1,024 B and above as outside its valid range (each
sender's 1 GbE NIC was saturated there). SWC was measured with UDP only,
since TCP showed no SWA/SWB difference.
"""

from __future__ import annotations

SOURCE = ("M. Hamamura, Y. Fujino, H. Hara: Evaluation report of high-speed, wide-bandwidth "
          "data communication technology (in Japanese): Linux-kernel vs DPDK forwarding of one "
          "program (SWA, SWB) and a control-plane split over a named pipe (SWC); Table 8, "
          "throughput ratio vs SWA at 2 Gbit/s, iperf 2.0.10, 180 s per payload size")

SIZES = (32, 64, 128, 256, 512, 768, 1024, 1280, 1460)

# payload B -> (SWB TCP, SWB UDP, SWC UDP all via IPC, SWC UDP 1 % control via IPC)
TABLE8 = {
    32: (1.01, 7.79, 2.25, 7.58),
    64: (1.00, 5.44, 2.10, 5.44),
    128: (1.00, 6.10, 1.84, 6.01),
    256: (1.00, 4.14, 2.11, 4.14),
    512: (1.00, 2.21, 1.68, 2.19),
    768: (1.00, 1.54, 1.47, 1.53),
    1024: (1.00, 1.24, 1.24, 1.23),
    1280: (1.00, 0.99, 1.00, 0.99),
    1460: (1.00, 1.00, 1.00, 0.99),
}
# Table 8's last column: inside the measurement's valid range (senders' NICs
# below saturation).
VALID = {s: s < 1024 for s in SIZES}

# Table 8's four ratio columns, keyed the way the lab names its ratios.
COLUMNS = (("swb", "tcp"), ("swb", "udp"), ("swc-all", "udp"), ("swc-1pct", "udp"))


def ratio(size: int, path: str, proto: str) -> float | None:
    """The published ratio vs SWA for a column of Table 8, or None when the
    study has no such column (e.g. SWC over TCP, or a shared-memory SWC:
    the study named shared memory as future work)."""
    base = path.replace("-fifo", "").replace("-shm", "")
    if path.endswith("-shm") or (base, proto) not in COLUMNS or size not in TABLE8:
        return None
    return TABLE8[size][COLUMNS.index((base, proto))]


CONTROL_SIZE = 64          # Table 7: control frames carry 64 B of data
CONTROL_SHARE = 0.01       # ... at 1 % of SWB's total rate
UDP_PACKET_RATIO_32_1460 = 27   # "at 32 B the UDP packet rate was ~27x that at 1460 B"

CONCLUSIONS = (
    "DPDK gave 2-7.5x the throughput of kernel sockets for payloads <= 256 B at >= 2 Gbit/s; "
    "no gain at <= 1 Gbit/s; TCP showed no difference (the sender's window coalesces small "
    "writes into 400-2000 B segments). SWC with 1 % control frames through the pipe matched "
    "SWB; all frames through the pipe still gave 1.4-2.2x SWA. SWB's jitter stayed <= 0.006 ms "
    "and its latency <= 0.2 ms; the 32 B latency distribution over 1,000 s was roughly normal "
    "for both the direct connection and SWB, with no periodic bursts (Fig. 8).")
