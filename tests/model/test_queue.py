"""The serializer and its queue: rate (with its overhead arguments), limit,
limit-bytes, limit-queue, drop-head vs drop-tail, and CoDel."""

from __future__ import annotations

import math
import re
import threading

import pytest

from kit import CpuWatch, on_time, require_quiet

from .lmkit import frame_len, iperf3, probe

from linkemu.bed import netns
from linkemu.bed.cpus import tool_cpus
from linkemu.instruments.iperf3 import iperf3_tcp_summary
from linkemu.instruments.stats import percentile

PAYLOAD = 1000                 # 1042-byte frames
FRAME = frame_len(PAYLOAD)


@pytest.mark.parametrize("grammar,wire_bytes", [
    ("rate 1mbit", FRAME),                                   # 1042 bytes
    ("rate 1mbit 200", FRAME + 200),                         # PACKETOVERHEAD
    ("rate 1mbit -42", FRAME - 42),                          # a negative overhead
    ("rate 1mbit 0 100 20", math.ceil(FRAME / 100) * 120),   # CELLSIZE 100, CELLOVERHEAD 20
])
def test_rate_serialization_time(bed, run_link, path_owd, grammar, wire_bytes):
    # A burst of back-to-back frames leaves exactly one serialization time
    # apart: floor(bytes x 8 x 1e9 / rate) ns, bytes = length + overhead,
    # or with cells ceil(bytes / CELLSIZE) x (CELLSIZE + CELLOVERHEAD).
    k = 25
    t_ns = wire_bytes * 8 * 10 ** 9 // 10 ** 6
    link = run_link(grammar, "")
    r = probe(bed, count=k, rate=0, size=PAYLOAD, port=9130)
    final = link.stop()
    err = on_time(final, p99_us=None)
    assert r.received == k, r.lost_seqs
    arr = r.arrivals_ns()
    gaps = sorted(b - a for a, b in zip(arr, arr[1:]))
    med = gaps[len(gaps) // 2]
    # A gap is T plus the difference of two frames' lateness (emulation
    # error) plus the path's spread (~10 us). Most frames are on time, so
    # the median gap is within twice the median lateness plus 50 us of T
    # (0.5 % of T here; the overheads tested change T by 3 % or more). A
    # VM hiccup that delays one frame moves two gaps, not the median.
    tol = 2 * err["p50"] + 50_000
    print(f"{grammar}: median gap {med / 1e6:.4f} ms (want {t_ns / 1e6:.4f} +- {tol / 1e6:.4f}),"
          f" span {(arr[-1] - arr[0]) / (k - 1) / 1e6:.4f} ms per frame")
    assert abs(med - t_ns) <= tol, f"{med} ns between frames, want {t_ns} +- {tol}"
    # Frames never leave before their deadlines, so the burst cannot
    # finish early: the last frame is at least (k-1) T after the first,
    # less the first frame's own lateness: the emulator's (at most the max
    # error) and the path's on the receiving side (the bed's p99 plus the
    # kit's 0.1 ms host allowance; 0.1 ms late receive stamps happen, see
    # test_slot_with_budget). Either is far below the 3 % of (k-1) T that
    # a wrong overhead would take off.
    late_first = err["max"] + (path_owd["p99"] + 0.1) * 1e6
    assert arr[-1] - arr[0] >= (k - 1) * t_ns - late_first, (arr[-1] - arr[0], late_first)
    a2b = final["directions"]["a2b"]
    assert a2b["tx"] == k and a2b["tx_bytes"] == k * FRAME and a2b["dropped_total"] == 0


def _burst(bed, run_link, grammar: str, n: int, port: int):
    link = run_link(grammar, "")
    r = probe(bed, count=n, rate=0, size=PAYLOAD, port=port, idle_s=1.5)
    final = link.stop()
    got = sorted(r.first)
    print(f"{grammar}: burst of {n}, received {got}")
    return got, final["directions"]["a2b"]


def test_limit_counts_frames_in_flight(bed, run_link):
    # netem's limit: every frame the link holds counts, also those in the
    # delay. A burst of 50 (well under 1 ms) into `delay 100ms limit 20`:
    # the first 20 are held for 100 ms, the other 30 find the link full.
    got, a2b = _burst(bed, run_link, "delay 100ms limit 20", 50, 9131)
    assert got == list(range(20))
    assert a2b["dropped"]["queue_full"] == 30 and a2b["dropped_total"] == 30, a2b["dropped"]


# A burst of 30 frames (1042 bytes) into rate 100kbit: each takes 83.4 ms, so
# the whole burst (< 1 ms) is in before the first frame is out. Frame 0 goes
# straight to the idle serializer; the queue in front of it holds 4 more
# (limit-queue 4, or limit-bytes 4200: 4 x 1042 = 4168 <= 4200 < 5 x 1042).
BURST = 30


@pytest.mark.parametrize("grammar", ["rate 100kbit limit-queue 4",
                                     "rate 100kbit limit-queue 4 drop-tail",
                                     "rate 100kbit limit-bytes 4200"])
def test_queue_limits_drop_tail(bed, run_link, grammar):
    got, a2b = _burst(bed, run_link, grammar, BURST, 9132)
    # drop-tail: the arrivals that find the queue full are refused.
    assert got == [0, 1, 2, 3, 4], got
    assert a2b["dropped"]["queue_full"] == BURST - 5, a2b["dropped"]
    assert a2b["dropped"]["queue_head"] == 0


def test_drop_head_loses_the_oldest(bed, run_link):
    got, a2b = _burst(bed, run_link, "rate 100kbit limit-queue 4 drop-head", BURST, 9133)
    # drop-head: each arrival at a full queue pushes out the oldest waiting
    # frame, so the last four survive behind frame 0 (already being sent).
    assert got == [0, BURST - 4, BURST - 3, BURST - 2, BURST - 1], got
    assert a2b["dropped"]["queue_head"] == BURST - 5, a2b["dropped"]
    assert a2b["dropped"]["queue_full"] == 0


def _tcp_with_ping(bed, seconds: int = 6, ping_start: float = 2.5, pings: int = 60):
    """iperf3 TCP (cubic) src -> dst for `seconds`, and meanwhile ping
    (0.05 s apart) from 2.5 s on, once TCP has built whatever queue it
    builds. Returns (Mbit/s, RTTs in ms, the CpuWatch of linkemud over it)."""
    res: dict = {}

    def tcp():
        try:
            _tcp()
        except Exception as e:      # noqa: BLE001 (re-raised in the test's thread)
            res["error"] = e

    def _tcp():
        # cubic, a loss-based controller that fills buffers (the machine's
        # default may be BBR, which keeps queues short by itself), and -w 4M:
        # windows large enough at both ends to fill the 1000-frame buffer.
        res["iperf"] = iperf3(bed, seconds, 5302, "-w", "4M", "-C", "cubic")

    cpu = CpuWatch(bed).start()
    t = threading.Thread(target=tcp)
    t.start()
    try:
        threading.Event().wait(ping_start)
        cp = netns.ns_run(bed.ns_src, ["ping", "-n", "-c", str(pings), "-i", "0.05", "-W", "3",
                                       bed.addr_dst], cpus=tool_cpus(), check=False, timeout=60)
    finally:
        t.join()
        cpu.stop()
    if "error" in res:
        raise res["error"]
    rtts = [float(m) for m in re.findall(r"time=([0-9.]+) ms", cp.stdout)]
    assert len(rtts) >= pings // 2, cp.stdout[-500:]
    return iperf3_tcp_summary(res["iperf"])["mbit_s"], rtts, cpu


def test_codel_bounds_the_queueing_delay(bed, run_link):
    # One TCP flow through a 20 Mbit/s bottleneck with a 1000-frame buffer.
    # Drop-tail: cubic fills the buffer, and a ping behind it waits up to
    # 1000 x 1514 x 8 / 20e6 = 606 ms. CoDel (target 5 ms, interval 100 ms)
    # drops at the head until the sojourn time stays near the target, so
    # the ping's RTT stays within a few targets (TCP's sawtooth around it).
    link = run_link("rate 20mbit limit-queue 1000", "")
    tail_mbit, tail_rtt, tail_cpu = _tcp_with_ping(bed)
    tail = link.stop()["directions"]["a2b"]
    link = run_link("rate 20mbit limit-queue 1000 codel", "")
    codel_mbit, codel_rtt, codel_cpu = _tcp_with_ping(bed)
    codel = link.stop()["directions"]["a2b"]
    tail_med, codel_med = percentile(tail_rtt, 50), percentile(codel_rtt, 50)
    print(f"drop-tail: {tail_mbit:.1f} Mbit/s, ping median {tail_med:.1f} ms, drops "
          f"{tail['dropped']['queue_full']}; codel: {codel_mbit:.1f} Mbit/s, ping median "
          f"{codel_med:.1f} ms, p90 {percentile(codel_rtt, 90):.1f} ms, codel drops "
          f"{codel['dropped']['codel']}")
    assert tail["dropped"]["codel"] == 0
    assert codel["dropped"]["codel"] > 0, codel["dropped"]
    assert codel["dropped"]["queue_full"] == 0, "codel left the buffer to overflow"
    # A standing queue under drop-tail (cubic's window is well past 100 ms
    # of buffer by 2.5 s: measured ~210 ms), none under CoDel. CoDel lets
    # the sojourn time sit above target for a whole interval before it
    # drops, and a single loss-based flow saw-tooths around that, so the
    # ping sees a few targets (measured medians 10-15 ms): the bound is
    # 6 targets, and at least 8 times below drop-tail's.
    assert tail_med >= 100, f"drop-tail median RTT {tail_med} ms: TCP did not fill the buffer"
    for cpu in (tail_cpu, codel_cpu):       # RTTs of a few ms: a quiet machine's verdict
        require_quiet(None, 0, "RTT under codel", cpu)
    assert codel_med <= 30, f"codel median RTT {codel_med} ms, target 5 ms"
    assert codel_med * 8 <= tail_med, (codel_med, tail_med)
    # CoDel must not starve the flow: the link stays busy (above 80 %).
    assert codel_mbit >= 16, codel_mbit


def test_codel_ecn_marks_instead_of_dropping(bed, run_link):
    # With `codel ... ecn` and an ECN-capable TCP flow (tcp_ecn = 1 in the
    # sender's namespace), CoDel marks data segments CE rather than
    # dropping them; only non-ECT frames (the SYN, the pings) can still be
    # dropped. Also exercises CoDel's target and interval arguments.
    before = netns.ns_run(bed.ns_src, ["sysctl", "-n", "net.ipv4.tcp_ecn"]).stdout.strip()
    netns.ns_run(bed.ns_src, ["sysctl", "-q", "-w", "net.ipv4.tcp_ecn=1"])
    try:
        link = run_link("rate 20mbit limit-queue 1000 codel target 2ms interval 50ms ecn", "")
        mbit, rtts, cpu = _tcp_with_ping(bed)
        final = link.stop()
    finally:
        netns.ns_run(bed.ns_src, ["sysctl", "-q", "-w", f"net.ipv4.tcp_ecn={before}"])
    a2b = final["directions"]["a2b"]
    med = percentile(rtts, 50)
    print(f"codel ecn: {mbit:.1f} Mbit/s, ping median {med:.1f} ms, marked "
          f"{a2b['events']['codel_marked']}, dropped {a2b['dropped']['codel']}")
    assert a2b["events"]["codel_marked"] > 0, a2b["events"]
    assert a2b["dropped"]["codel"] < a2b["events"]["codel_marked"], a2b
    assert a2b["dropped"]["queue_full"] == 0
    # As above, a few targets plus an interval's worth of sawtooth
    # (measured medians 6-10 ms): 10 targets, on a quiet machine.
    require_quiet(None, 0, "RTT under codel ecn", cpu)
    assert med <= 20, f"median RTT {med} ms with a 2 ms target"
    assert mbit >= 16, mbit
