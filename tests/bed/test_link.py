"""The emulated link measured from outside, on the real data plane.

Every run is stopped through `linkemu stop --json`, and kit.Link.stop()
checks what must hold after any run: conservation in both directions,
nothing in flight, frames caught at shutdown counted under 'shutdown'.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

from kit import CpuWatch, cli_env, linkemu, require_quiet, suite_bed
from linkemu.bed import netns
from linkemu.instruments import owd, ping
from linkemu.instruments.tools import require_tool
from linkemu.instruments.stats import binomial_bound, percentile

BED = suite_bed(__file__)

PINGS = 200
PING_INTERVAL = 0.01
PROBE_COUNT = 5000
PROBE_RATE = 2000.0


def _ping_rtts(bed) -> list[float]:
    r = ping.ping(bed, count=PINGS, interval=PING_INTERVAL)
    assert r.received >= PINGS * 0.99, f"{r.received}/{r.transmitted} replies"
    return r.rtts_ms


def test_delay_5ms_each_way(bed_up, run_link):
    # Baseline: the same path through linkemud with no impairment, in the
    # same run on the same machine. Its median is the path's own forwarding
    # latency (veths, DPDK polling, the kernel's ping handling); p90 - median
    # is that latency's spread.
    base_link = run_link()
    base = _ping_rtts(bed_up)
    base_link.stop()
    base_med, base_p90 = percentile(base, 50), percentile(base, 90)

    link = run_link("delay 5ms", "delay 5ms")
    cpu = CpuWatch(bed_up).start()
    rtts = _ping_rtts(bed_up)
    cpu.stop()
    final = link.stop()
    med = percentile(rtts, 50)
    assert min(rtts) >= 10.0, f"an RTT below the emulated 10 ms: {min(rtts)}"
    for name in ("a2b", "b2a"):
        d = final["directions"][name]
        assert d["config"] == "delay 5ms"
        assert d["rx"] >= PINGS and d["dropped_total"] == 0, d
    # The emulator adds exactly 5 ms each way, so 10 ms per round trip, and a
    # frame never leaves before its deadline: RTT >= 10.0 ms for every ping.
    # What remains above 10 ms is the path's own latency, which the baseline
    # measured: its median plus its spread (p90 - median), plus 0.1 ms, which
    # covers ping's own resolution (it prints RTTs of 10 ms and more with one
    # decimal, i.e. to 0.1 ms) and run-to-run drift of a loaded 2-CPU machine.
    # That holds only if the machine was as quiet as during the baseline.
    require_quiet(None, 0, "median RTT through delay 5ms", cpu)
    lo = 10.0
    hi = 10.0 + base_med + (base_p90 - base_med) + 0.1
    assert lo <= med <= hi, (f"median RTT {med:.3f} ms not in [{lo:.3f}, {hi:.3f}] "
                             f"(baseline median {base_med:.3f}, p90 {base_p90:.3f} ms)")


def test_loss_20_percent_a2b(bed_up, run_link):
    p = 0.20
    link = run_link("loss 20%", "", "--seed", "12345")
    res = owd.probe(bed_up, owd.ProbeSpec(ip_len=64 + owd.IP_UDP_HEADERS, pps=PROBE_RATE,
                                          count=PROBE_COUNT, port=9200, spin_us=50))["receiver"]
    final = link.stop()
    n = res["expected"]
    measured = res["lost"] / n
    # Each datagram is lost independently with probability p, so the number
    # lost is Binomial(n, p), and a correct emulator lands outside its
    # central 99.9 % (exact quantiles, about p +- 3.29 sigma here) in only 1
    # run out of 1000: tight enough to catch a wrong probability (e.g. 0.2 %
    # or 2 %, or loss applied twice), loose enough not to flake.
    lo, hi = binomial_bound(p, n)
    assert lo <= measured <= hi, f"loss {measured:.4f} outside [{lo:.4f}, {hi:.4f}]"
    assert res["duplicates"] == 0 and res["reordered"] == 0, res
    a2b, b2a = final["directions"]["a2b"], final["directions"]["b2a"]
    # The bed has static ARP entries and no IPv6, so nothing but the probe
    # crosses a2b: every probe datagram lost is one frame the loss model
    # dropped, and vice versa. (With dynamic ARP a few ARP frames would also
    # cross and could be lost too; static neighbours make this exact.)
    assert a2b["dropped"]["loss"] == res["lost"], (a2b, res)
    assert a2b["rx"] == n, f"a2b carried {a2b['rx']} frames, probe sent {n}"
    assert a2b["tx"] == res["received"]
    assert b2a["dropped"]["loss"] == 0


def test_stop_json_is_the_daemons_object(bed_up, run_link):
    link = run_link("delay 1ms loss 1%", "delay 2ms")
    final = link.stop()
    for key in ("version", "layout", "lcores", "seed", "tsc_hz", "uptime_s",
                "directions", "conserved"):
        assert key in final, key
    for name, cfg in (("a2b", "delay 1ms loss 1%"), ("b2a", "delay 2ms")):
        d = final["directions"][name]
        assert d["config"] == cfg
        e = d["emulation_error_ns"]
        for key in ("count", "min", "mean", "p50", "p90", "p99", "p999", "max"):
            assert key in e, key


def test_frames_in_flight_at_shutdown_are_counted(bed_up, run_link):
    """Stop while a long delay holds frames: they must show up as
    dropped.shutdown, never vanish (Link.stop checks conservation)."""
    # 60 s: far longer than starting `linkemu stop` can take on a loaded
    # machine (seconds), so the frames are surely still held when it stops.
    link = run_link("delay 60s", "")
    # Five one-way datagrams (no replies to wait for), then stop at once.
    cp = netns.ns_run(bed_up.ns_src, [str(require_tool("owdprobe")), "send", "--dst",
                                      bed_up.addr_dst, "--count", "5", "--pps", "100"])
    assert json.loads(cp.stdout)["sent"] == 5
    final = link.stop()
    a2b = final["directions"]["a2b"]
    assert a2b["rx"] == 5 and a2b["dropped"]["shutdown"] == 5, json.dumps(a2b)


def test_foreground_run_stops_on_sigint(bed_up, linkemud_bin):
    """`linkemu run` without --detach: Ctrl-C stops the daemon and prints the
    final counters."""
    p = subprocess.Popen([sys.executable, "-m", "linkemu", "run", "--bed", BED, "--a2b",
                          "delay 1ms"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=cli_env())
    try:
        deadline = time.monotonic() + 40
        while linkemu("testbed", "status", "--bed", BED, "--json").stdout.find(
                '"running": true') < 0:
            assert p.poll() is None, p.communicate()
            assert time.monotonic() < deadline, "daemon never became ready"
            time.sleep(0.2)
        ping.ping(bed_up, count=3, interval=0.1)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, err
    assert "conservation (rx + dup = tx + dropped + in flight): yes" in out, out
    assert "[delay 1ms]" in out
