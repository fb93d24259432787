"""Throughput through the serializers: a TCP flow through `rate`, and a
saturating UDP flow through a real Mahimahi trace."""

from __future__ import annotations

from collections import Counter

import pytest

from kit import CpuWatch, require_quiet
from linkemu.instruments import iperf3

from .lmkit import frame_len, pearson, probe, traces_dir


def test_tcp_through_rate_45mbit(bed, run_link):
    # A bottleneck of 45 Mbit/s counted on Ethernet frames (no FCS): a
    # full-size TCP segment is a 1514-byte frame carrying 1448 bytes of
    # payload (MSS 1460 - 12 bytes of timestamps), so a saturated link
    # carries at most 45 x 1448/1514 = 43.04 Mbit/s of goodput, and iperf3's
    # receiver measures goodput. The acceptance window is 40..45:
    # above 45 the rate is not enforced; below 40 the serializer wastes
    # capacity (or the queue makes TCP collapse).
    link = run_link("rate 45mbit", "")
    cpu = CpuWatch(bed).start()
    out = iperf3.iperf3(bed, seconds=5, port=5301)
    cpu.stop()
    final = link.stop()
    got = iperf3.iperf3_tcp_summary(out)["mbit_s"]
    print(f"iperf3 TCP through rate 45mbit: {got:.2f} Mbit/s (receiver)")
    assert got <= 45.0, f"TCP goodput {got:.2f} Mbit/s above the 45 Mbit/s rate"
    # Reaching 40 needs the CPUs: a verdict only on a quiet machine.
    require_quiet(None, 0, "TCP goodput through rate 45mbit", cpu)
    assert 40.0 <= got, f"TCP goodput {got:.2f} Mbit/s below 40"
    a2b = final["directions"]["a2b"]
    # The serializer, not the data plane, bounds the link: nothing may be
    # dropped by the data plane or refused by the output port, and the
    # frames the link sent cannot add up to more than 45 Mbit/s over the
    # daemon's whole uptime.
    assert a2b["dropped"]["ring_full"] == a2b["dropped"]["malformed"] == 0, a2b["dropped"]
    assert a2b["after_tx"]["oerrors"] == 0, a2b["after_tx"]
    assert a2b["tx_bytes"] * 8 <= 45e6 * final["uptime_s"], (a2b["tx_bytes"], final["uptime_s"])


TRACE_WINDOW_S = 30
PAYLOAD = 1500 - 42            # frames of exactly one trace opportunity (1500 bytes)


def _trace_capacity(path, seconds: int) -> list[int]:
    """Delivery opportunities per 1 s bin of a Mahimahi trace (one line per
    1500-byte opportunity, whole-ms timestamps)."""
    per = Counter(int(line) // 1000 for line in path.read_text().split())
    return [per.get(k, 0) for k in range(seconds)]


@pytest.mark.parametrize("name", ["mahimahi_TMobile-LTE-short.up"])
def test_trace_throughput_follows_the_trace(bed, run_link, name):
    d = traces_dir()
    assert (d / name).is_file(), f"trace {name} is missing from {d} (it ships with linkemu)"
    trace = d / name
    cap = _trace_capacity(trace, TRACE_WINDOW_S)
    # Saturate: 1000 frames/s (12 Mbit/s of 1500-byte frames) is above the
    # trace's largest 1 s capacity in the window (max(cap) opportunities/s,
    # 9.4 Mbit/s for the .up trace), so the queue never runs dry and every
    # opportunity carries one frame. limit-queue 100 keeps the queue short:
    # it never empties, and delivery happens at the opportunities, so the
    # queue cannot move bytes from one bin to the next.
    rate = 1000
    assert rate > max(cap), (rate, max(cap))
    link = run_link(f"trace {trace} limit-queue 100", "")
    # (A datagram refused by the sender's own stack, which a 30 s flow of
    # 1500-byte frames occasionally meets, does not matter here: the queue
    # stays full. idle 1.5 s: the receiver waits for the queue to drain.)
    r = probe(bed, count=rate * TRACE_WINDOW_S, rate=rate, size=PAYLOAD, port=9101, idle_s=1.5,
              send_errors_ok=True)
    final = link.stop()
    assert frame_len(PAYLOAD) == 1500
    # The trace's clock starts at the link's first frame, which is the
    # probe's datagram 0 (static ARP, no IPv6: nothing else crosses a2b):
    # bins are aligned on its send time (a few us before its arrival).
    assert 0 in r.first, "datagram 0 did not arrive"
    t0 = r.first_send_ns
    got = [0] * TRACE_WINDOW_S
    for rec in r.records:
        k = (rec[2] - t0) // 1_000_000_000
        if 0 <= k < TRACE_WINDOW_S:
            got[k] += 1
    rho = pearson(cap, got)
    ratio = sum(got) / sum(cap)
    print(f"trace {name}: Pearson rho {rho:.4f} over {TRACE_WINDOW_S} 1-s bins; delivered "
          f"{sum(got)} frames of {sum(cap)} opportunities ({ratio:.4f}); "
          f"per bin (delivered/capacity): {list(zip(got, cap))}; sender retries "
          f"{r.sender['retries']}")
    assert rho >= 0.9, f"rho {rho:.3f} < 0.9: delivered {got} vs capacity {cap}"
    # Saturated, the link uses every opportunity (one 1500-byte frame each)
    # and no more: never above the trace, and the few opportunities lost at
    # the window's edges (the first frame's own ms, the path latency at the
    # last bin's end) are far below 1 %.
    assert 0.99 <= ratio <= 1.0 + 1e-9, f"delivered/capacity {ratio:.4f}"
    a2b = final["directions"]["a2b"]
    assert a2b["dropped"]["queue_full"] > 0, "the flow did not saturate the trace"
    assert a2b["dropped"]["queue_full"] + a2b["tx"] + a2b["dropped"]["shutdown"] == a2b["rx"]
