"""The `stats --watch` view, rendered from two stats snapshots."""

from __future__ import annotations

import io
import json

from fakedaemon import stats_object
from linkemu.daemon import watch


def snapshots():
    prev = stats_object(rx=1000, tx=990, t_ns=10_000_000_000, config="delay 10ms loss 1%",
                        in_flight=5, loss=5, rx_bytes=100_000, tx_bytes=99_000)
    cur = stats_object(rx=3000, tx=2960, t_ns=12_000_000_000, config="delay 10ms loss 1%",
                       in_flight=20, loss=20, rx_bytes=1_350_000, tx_bytes=1_349_000,
                       extra={"mempool_in_use": 1234})
    return prev, cur


def test_rates_from_deltas():
    prev, cur = snapshots()
    r = watch.rates(prev, cur)
    assert r["interval_s"] == 2.0                 # from the daemon's time_ns
    a = r["directions"]["a2b"]
    assert a["rx_fps"] == 1000.0 and a["tx_fps"] == 985.0
    assert a["rx_mbps"] == 1_250_000 * 8 / 1e6 / 2 == 5.0
    assert a["tx_mbps"] == 1_250_000 * 8 / 1e6 / 2
    assert a["dropped"]["loss"] == {"per_s": 7.5, "delta": 15, "total": 20}
    assert a["dropped"]["queue_full"]["per_s"] == 0.0
    assert a["in_flight"] == 20 and a["error_p99_ns"] == 11000


def test_counter_reset_counts_from_zero():
    prev, cur = snapshots()
    after_reset = stats_object(rx=100, tx=100, t_ns=13_000_000_000)
    a = watch.rates(cur, after_reset)["directions"]["a2b"]
    assert a["rx_fps"] == 100.0 and a["dropped"]["loss"]["delta"] == 0


def test_elapsed_falls_back_to_uptime_then_read_time():
    a, b = {"uptime_s": 1.0}, {"uptime_s": 3.5}
    assert watch.elapsed_s(a, b) == 2.5
    assert watch.elapsed_s({"_read_ns": 0}, {"_read_ns": 500_000_000}) == 0.5
    assert watch.elapsed_s({}, {}) is None
    r = watch.rates(stats_object(t_ns=5), stats_object(t_ns=5))
    assert r["directions"]["a2b"]["rx_fps"] is None        # no time passed: no rate


def test_render():
    prev, cur = snapshots()
    text = watch.render(prev, cur, bed="lc")
    lines = text.split("\n")
    assert lines[0].startswith("linkemu stats  bed lc  linkemud 0.1.0  layout single")
    assert "rates over the last 2.00 s" in lines[1] and "mbufs in use 1,234" in lines[1]
    body = "\n".join(lines[2:])
    for want in ("delay 10ms loss 1%", "in   frames/s", "1,000", "out  frames/s", "985",
                 "5.00", "in flight (queue)", "  loss", "8  (20)", "  p50", "250 ns",
                 "  p99", "11.0 us", "  max", "90.0 us"):
        assert want in body, (want, text)
    # Two columns, a2b then b2a, every line within 80 columns.
    header = next(l for l in lines if l.strip().startswith("a2b"))
    assert header.index("a2b") < header.index("b2a")
    assert max(len(l) for l in lines) <= 80


def test_long_config_is_cut_to_the_column():
    prev, cur = snapshots()
    cur["directions"]["a2b"]["config"] = "delay 10ms loss 0.0000001% limit 100000 seed 12345"
    text = watch.render(prev, cur)
    assert "..." in text and max(len(l) for l in text.split("\n")) <= 80


class FakeClient:
    def __init__(self):
        self.n = 0

    def stats(self):
        self.n += 1
        return stats_object(rx=1000 * self.n, tx=1000 * self.n)


def test_watch_prints_count_frames_plain_when_not_a_tty():
    out = io.StringIO()
    watch.watch(FakeClient(), "lc", interval=0.02, count=3, out=out, tty=False)
    text = out.getvalue()
    assert text.count("linkemu stats  bed lc") == 3 and "\x1b[" not in text
    assert "Ctrl-C" not in text


def test_watch_redraws_in_place_on_a_tty():
    out = io.StringIO()
    watch.watch(FakeClient(), "lc", interval=0.02, count=2, out=out, tty=True)
    text = out.getvalue()
    assert text.startswith(watch.HIDE_CURSOR + watch.HOME + watch.EOS)
    assert text.count(watch.HOME) == 3 and text.endswith(watch.SHOW_CURSOR)
    assert "Ctrl-C quits" in text


def test_watch_json_lines():
    out = io.StringIO()
    watch.watch(FakeClient(), interval=0.02, count=2, out=out, as_json=True)
    rows = [json.loads(l) for l in out.getvalue().splitlines()]
    assert len(rows) == 2 and rows[0]["directions"]["a2b"]["rx"] == 2000


def test_watch_stops_cleanly_on_ctrl_c():
    class Interrupting(FakeClient):
        def stats(self):
            if self.n == 2:
                raise KeyboardInterrupt
            return super().stats()

    out = io.StringIO()
    assert watch.watch(Interrupting(), interval=0.01, out=out, tty=True) == 0
    assert out.getvalue().endswith(watch.SHOW_CURSOR)


def test_port_counters_outside_the_books():
    """Frames lost before linkemud saw them (port counters) are shown apart
    from the drops, with their rate; an old daemon without them shows '-'."""
    prev, cur = snapshots()
    for st, lost in ((prev, 10), (cur, 30)):
        for d in st["directions"].values():
            d["before_rx"] = {"imissed": lost, "ierrors": 0, "rx_nombuf": 0, "total": lost}
            d["after_tx"] = {"oerrors": 2}
    a = watch.rates(prev, cur)["directions"]["a2b"]
    assert a["lost_before_rx"] == 30 and a["lost_before_rx_per_s"] == 10.0
    assert a["port_send_errors"] == 2 and a["conserved"] is True   # 3000 == 2960 + 20 + 20
    text = watch.render(prev, cur)
    assert "lost before rx" in text and "10  (30)" in text and "NOT CONSERVED" not in text
    old_prev, old_cur = snapshots()
    text = watch.render(old_prev, old_cur)
    assert any(l.startswith("  lost before rx") and l.split()[-1] == "-" for l in text.splitlines())
