"""The lfp lab's analysis, pure: the link's physics from a profile, knee and
collapse, the physics checks, stalls from ACK progress, and a synthetic
results file that validates and renders."""

from __future__ import annotations

import pytest

from linkemu.lab import lfp, published, results
from linkemu.profiles import find
from linkemu.report import render

KB = 1024
PAY = 42.79e6


def test_profile_physics():
    p = find(lfp.PROFILE)
    ph = lfp.link_physics(p.a2b, p.b2a)
    assert ph["rate_bps"] == 44_736_000
    assert ph["base_rtt_s"] == pytest.approx(0.012)
    assert ph["limit_frames"] == 90
    assert lfp.payload_bps(44_736_000, 1448) == pytest.approx(44_736_000 * 1448 / 1514)


def test_path_rtt_adds_each_hops_serialization():
    # the RTT a full-size segment and its ACK see: 12 ms of delay, a
    # 1514-byte frame through 100 and 44.736 Mbit/s, a 66-byte ACK back
    p = find(lfp.PROFILE)
    data, ack = 1514 * 8, 66 * 8
    want = 0.012 + data / 100e6 + data / 44.736e6 + ack / 100e6 + ack / 44.736e6
    assert lfp.path_rtt_s(p.a2b, p.b2a, 1448) == pytest.approx(want)
    assert lfp.path_rtt_s(p.a2b, p.b2a, 1448) == pytest.approx(0.012409, abs=1e-6)
    # a hop without a rate adds its delay only; no delay at all adds nothing
    assert lfp.path_rtt_s("delay 5ms", "delay 5ms", 1448) == pytest.approx(0.010)
    assert lfp.path_rtt_s("rate 1mbit", "", 934) == pytest.approx(8e-3)


def test_window_in_flight_is_whole_segments():
    assert lfp.window_in_flight(32_104, 1448) == 22 * 1448
    assert lfp.window_in_flight(22 * 1448, 1448) == 22 * 1448
    assert lfp.window_in_flight(1000, 1448) == 0
    assert lfp.window_in_flight(5000, 0) == 5000


def test_theory_uses_the_window_in_flight():
    runs = [{"sender": "s", "window": 32 * KB, "mbps": 20.0, "total_retrans": 0,
             "snd_wnd_max": 32 * KB, "window_in_flight": 31_856 + k} for k in (0, 10, 20)]
    pt = lfp.summarize_sender(runs, 0.012409, PAY)["points"][0]
    assert pt["window_in_flight"] == 31_866
    assert pt["theory_mbps"] == pytest.approx(8 * 31_866 / 0.012409 / 1e6)
    c = lfp.physics_checks(runs, 0.012409, PAY, 90, 1448)[0]
    assert c["expected_mbps"] == pytest.approx(pt["theory_mbps"])


@pytest.mark.parametrize("rate, delay", [
    ("44736kbit", "6ms"), ("44.736mbit", "6000us"), ("44.736Mbit", "6msec"),
    ("5592kbps", "6ms"),           # bytes per second (x 8), docs/grammar.md RATE
    ("5.592mbps", "6000000ns"), ("44736000", "6000"),   # no unit: bit/s; us
    ("44736000bit", "0.006s")])
def test_physics_reads_every_unit_of_the_grammar(rate, delay):
    """The same Tokyo-Kyoto link in the grammar's other spellings gives the
    same physics. `rate 5592kbps` is 5,592,000 bytes/s = 44.736 Mbit/s;
    the parser knew only bit/kbit/mbit/gbit and took the 100 Mbit/s
    access as the bottleneck (the plateau checks then expect 95.6 Mbit/s
    of a 44.7 Mbit/s link), and missed delays in ns, tc's msec or no unit."""
    link = f"rate 100mbit >> delay {delay} rate {rate} limit 90"
    ph = lfp.link_physics(link, link)
    assert ph["rate_bps"] == pytest.approx(44_736_000)
    assert ph["base_rtt_s"] == pytest.approx(0.012)
    assert lfp.path_rtt_s(link, link, 1448) == pytest.approx(0.012409, abs=1e-6)


def test_physics_binary_rate_units():
    # kibit .. are powers of 1024; kibps .. bytes x 8 x 1024^k
    assert lfp.link_physics("delay 1ms rate 2mibit", "delay 1ms")["rate_bps"] == 2 * 1024 ** 2
    assert lfp.link_physics("delay 1ms rate 1kibps", "delay 1ms")["rate_bps"] == 8 * 1024
    with pytest.raises(Exception, match="rate"):
        lfp.link_physics("delay 1ms rate 5furlongs", "delay 1ms")


def test_physics_needs_rate_and_delay():
    with pytest.raises(Exception, match="needs a rate and a delay"):
        lfp.link_physics("delay 6ms", "delay 6ms")


def _runs(curve):
    return [{"sender": "s", "window": w * KB, "mbps": m, "total_retrans": 0,
             "snd_wnd_max": w * KB} for w, m in curve]


def test_knee_and_collapse():
    curve = [(16, 10.0), (32, 20.0), (64, 37.0), (96, 42.0), (128, 42.5), (192, 8.0),
             (256, 7.0)]
    s = lfp.summarize_sender(_runs(curve), 0.012, PAY)
    assert s["knee_window"] == 96 * KB          # first >= 90 % of 42.79
    assert s["collapse_window"] == 192 * KB     # first above the knee < 80 %
    assert s["collapse_mbps"] == pytest.approx(7.5)
    assert s["plateau_mbps"] == 42.5
    # against its own best (42.5 at 128 KB): the same windows here
    assert s["best_window"] == 128 * KB
    assert s["knee_rel_window"] == 96 * KB and s["collapse_rel_window"] == 192 * KB


def test_relative_regions_when_the_payload_rate_is_out_of_reach():
    curve = [(32, 6.0), (64, 11.0), (112, 22.5), (128, 23.0), (160, 15.6), (192, 7.8),
             (256, 8.0)]
    s = lfp.summarize_sender(_runs(curve), 0.012, PAY)
    assert s["knee_window"] is None and s["collapse_window"] is None
    assert s["knee_rel_window"] == 112 * KB          # 22.5 >= 0.9 x 23
    assert s["collapse_rel_window"] == 160 * KB      # 15.6 < 0.8 x 23
    assert s["collapse_rel_mbps"] == pytest.approx(8.0)


def test_no_collapse_when_it_holds():
    s = lfp.summarize_sender(_runs([(32, 20.0), (128, 42.0), (256, 41.0)]), 0.012, PAY)
    assert s["collapse_window"] is None and s["collapse_mbps"] is None


def test_physics_checks_regions():
    rtt = 0.0125
    runs = _runs([(32, 8 * 32 * KB / rtt / 1e6 * 0.95), (48, 8 * 48 * KB / rtt / 1e6 * 0.7),
                  (96, PAY / 1e6 * 0.97), (160, 5.0)])
    checks = {c["window"]: c for c in lfp.physics_checks(runs, rtt, PAY, 90, 1448)}
    assert checks[32 * KB]["ok"] and checks[32 * KB]["region"].startswith("region 1")
    assert not checks[48 * KB]["ok"]
    assert checks[96 * KB]["ok"] and checks[96 * KB]["region"].startswith("plateau")
    assert 160 * KB not in checks      # above limit x MSS: loss is due, nothing fixed


def test_stalls_from_ack_progress():
    t = [i * 2000 for i in range(1000)]          # 2 s every 2 ms
    acked, v = [], 0
    for i in range(1000):
        if not 200 <= i < 500:                   # 0.4 .. 1.0 s: nothing acknowledged
            v += 5000
        acked.append(v)
    longest, start, share = lfp.stalls(t, acked, PAY)
    assert longest == pytest.approx(0.6)
    assert start == pytest.approx(0.4)
    assert share == pytest.approx(12 / 39)


def _synthetic_doc():
    res = results.new("lfp", True, 1, {"profile": lfp.PROFILE})
    runs = []
    for i, (w, m) in enumerate([(32, 16.0), (96, 41.0), (192, 8.5)]):
        runs.append({"id": i, "sender": "reno-1992", "cc": "reno", "stack": "1992",
                     "window": w * KB, "mbps": m, "bytes": 10**6, "real_s": 1.0, "cpu_s": 0.1,
                     "calls_per_s": 100.0, "mss": 1448, "min_rtt_us": 12500,
                     "total_retrans": 0, "snd_wnd_max": w * KB, "received_bytes": 10**6,
                     "problems": []})
    res["runs"] = runs
    res["bpf"] = []
    res["summary"] = {"rtt_s": 0.0125, "payload_mbps": PAY / 1e6, "mss": 1448,
                      "senders": {"reno-1992": lfp.summarize_sender(runs, 0.0125, PAY)},
                      "checks": lfp.physics_checks(runs, 0.0125, PAY, 90, 1448),
                      "published": {"knee_kb": 100, "collapse_kb": 170, "collapse_mbps": 8.0,
                                    "rtt_ms": 12.0, "fig4": published.LFP_FIG4}}
    res["table2"] = [{"distance_km": km, "rtt_ms": rtt, "published_mbps": pub,
                      "theory_mbps": 8 * 4096 / (rtt / 1e3) / 1e6, "measured_mbps": pub,
                      "min_rtt_us": int(rtt * 1000), "fill_window_bytes": 155e6 / 8 * rtt / 1e3}
                     for km, rtt, pub in published.LFP_TABLE2]
    cols = {c: [] for c in ("t_us", "bytes_sent", "bytes_retrans", "bytes_acked",
                            "in_flight_bytes", "rtt_us", "cwnd", "mss")}
    for i in range(500):
        for c, v in (("t_us", i * 2000), ("bytes_sent", i * 10_000), ("bytes_retrans", 0),
                     ("bytes_acked", max(0, i - 10) * 10_000), ("in_flight_bytes", 100_000),
                     ("rtt_us", 12_500), ("cwnd", 70), ("mss", 1448)):
            cols[c].append(v)
    res["anatomy"] = lfp.anatomy(cols, runs[2], PAY)
    return res


def test_synthetic_results_validate_and_render(tmp_path):
    res = _synthetic_doc()
    p = tmp_path / "lfp.json"
    results.write(res, p)
    back = results.load(p)
    html = render.render([p])
    assert "Knee and collapse windows" in html and "Table 2" in html
    assert html.count("<img") == 2          # the sweep and the anatomy
    assert back["summary"]["senders"]["reno-1992"]["knee_window"] == 96 * KB


def test_schema_refuses_a_run_without_throughput(tmp_path):
    res = _synthetic_doc()
    del res["runs"][0]["mbps"]
    with pytest.raises(results.ResultsError, match="runs/0"):
        results.write(res, tmp_path / "bad.json")


def test_published_table2_is_the_window_law():
    # the study's Table 2 is min(8W/RTT, B) with W = 4,096 B
    for _km, rtt, pub in published.LFP_TABLE2:
        assert 8 * 4096 / (rtt / 1e3) / 1e6 == pytest.approx(pub, rel=0.01)
