"""`linkemu ctl stats` / `linkemu stop` text: the ports' driver counts
(port_xstats) appear when a driver counted drops, and only then."""

from __future__ import annotations

from linkemu.daemon import summary


def _direction(xstats: dict) -> dict:
    return {"config": "delay 1ms", "rx": 10, "tx": 10, "rx_bytes": 640, "tx_bytes": 640,
            "in_flight": 0, "dropped": {}, "dropped_total": 0, "conserved": True,
            "before_rx": {"imissed": 5, "ierrors": 0, "rx_nombuf": 0, "total": 5},
            "after_tx": {"oerrors": 0}, "port_xstats": xstats}


def test_driver_counts_line():
    lines = summary.fmt_direction("a2b", _direction(
        {"in": {"rx_missed_errors": 5, "rx_q0_errors": 2}, "out": {}, "not_shown": 0}))
    got = [l for l in lines if "driver counts" in l]
    assert got == ["    input port driver counts: rx_missed_errors 5, rx_q0_errors 2"], lines


def test_no_line_without_driver_drops():
    for xs in ({"in": {}, "out": {}, "not_shown": 0}, None):
        d = _direction(xs)
        if xs is None:
            del d["port_xstats"]       # a kernel-plane or older daemon's report
        assert not [l for l in summary.fmt_direction("b2a", d) if "driver counts" in l]


def test_counters_past_the_limit_are_said():
    lines = summary.fmt_direction("a2b", _direction(
        {"in": {"rx_q0_errors": 1}, "out": {"tx_errors": 3}, "not_shown": 4}))
    assert "    output port driver counts: tx_errors 3" in lines
    assert "    (4 more driver drop counters not shown)" in lines


def _ended(**kw) -> dict:
    e = {"rx": 0, "tx": 0, "dup": 0, "in_flight": 0, "in_flight_at_reset": 0, "dropped": {}, "events": {}}
    e.update(kw)
    return e


def test_removed_classes_line_only_when_they_counted():
    quiet = dict(_direction(None), ended_classes=_ended())
    assert not [l for l in summary.fmt_direction("a2b", quiet) if "removed" in l]
    busy = dict(_direction(None), ended_classes=_ended(rx=7, tx=4, in_flight=2, dropped={"loss": 1}))
    got = [l for l in summary.fmt_direction("a2b", busy) if "removed" in l]
    assert got == ["    classes removed by a live change: in 7, out 4, dropped 1, held 2"], got
    # The typed counters carry it too.
    from linkemu.daemon.counters import DirectionCounters
    d = DirectionCounters.from_json(busy)
    assert d.ended_classes is not None and (d.ended_classes.rx, d.ended_classes.tx) == (7, 4)
    assert DirectionCounters.from_json(_direction(None)).ended_classes is None


def _final(d: dict) -> dict:
    return {"version": "0.1.0", "layout": "single", "lcores": 1, "seed": 1, "uptime_s": 2.0,
            "directions": {"a2b": d, "b2a": dict(_direction(None), in_flight_at_reset=0)},
            "conserved": True}


def test_frames_in_flight_at_a_reset_keep_the_books():
    """After `reset stats` with 30 frames held by a 100 ms delay, those 30
    leave (tx) without having been received since the reset: the daemon's
    law is rx + dup + injected + in_flight_at_reset == tx + dropped +
    in_flight (docs/control.md, "The books"), and it says conserved."""
    d = dict(_direction(None), rx=100, tx=130, in_flight=0, in_flight_at_reset=30)
    assert summary.conservation_problems(_final(d)) == []
    assert "conservation (rx + dup = tx + dropped + in flight): yes" in summary.format_final(_final(d))
    from linkemu.daemon.counters import FinalReport
    assert FinalReport.from_final(_final(d)).ok
    # A frame really missing is still found, with the reset's frames in the sum.
    bad = dict(d, tx=129)
    assert summary.conservation_problems(_final(bad)) == [
        "a2b: rx 100 + dup 0 + injected 0 + in flight at reset 30 != tx 129 + dropped 0 "
        "+ in_flight 0 (off by 1)"]
