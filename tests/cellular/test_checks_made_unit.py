"""The cellular bed tests' reading of `lab cellular --quick`'s check rows
(checks_made.py), on rows made by cellular_quick.checks itself: a check
not made is not a failure, a made check that failed is, and so is a run
that made too few checks to say anything."""

from __future__ import annotations

import numpy as np

from checks_made import problems
from linkemu.lab import cellular_quick as cq

DELIVERY_LEAST_MADE = {"UDP:": 1, "TCP:": 1, "QUIC:": 1}


def _stream(proto, unique=3000):
    return {"id": f"fixed-{proto}", "count": 3000,
            "server": {"unique": unique, "expected": 3000, "in_order": True, "duplicates": 0,
                       "reordered": 0}}


def _rows(lost=0, late_ns=5_000, tcp_unique=3000):
    """A run's check rows: 3,000 flushes 100-200 us beyond 20 ms over the
    delay, 100-190 us over the unimpaired class; late_ns None: linkemud
    reported no lateness (the band is not made)."""
    rng = np.random.default_rng(1)
    path = rng.integers(100_000, 200_000, 3000)
    bpath = rng.integers(100_000, 190_000, 3000)
    fixed = {"path": path, "latency_kernel": path + cq.QUICK_DELAY_NS + cq.MEAN_WAIT_NS,
             "sender": np.zeros(3000), "receiver": np.zeros(3000)}
    base = {"path": bpath, "latency_kernel": bpath + cq.MEAN_WAIT_NS,
            "sender": np.zeros(3000), "receiver": np.zeros(3000)}
    emu = {"a2b": {"max": late_ns, "p99": late_ns}} if late_ns is not None else {"a2b": {}}
    runs = [{"id": "fixed-udp", "daemon_emulation_error_ns": emu, "daemon_cpu_wait_ms": 0.1,
             "server": {"lost": lost, "latency_ns": {"mean": 25.6e6}}},
            _stream("tcp", tcp_unique), _stream("quic")]
    return {c["name"]: c for c in cq.checks(runs, base, fixed)}


def _delivery(c):
    return [n for n in c if n not in cq.TIMING and n != cq.CHECK_BASE_MEAN]


def test_a_check_not_made_is_not_a_failure():
    c = _rows(late_ns=None)
    assert c[cq.CHECK_BAND]["pass"] is None            # linkemud reported no lateness
    assert problems(c, _delivery(c), DELIVERY_LEAST_MADE) == []
    assert problems(c, cq.TIMING, {"UDP:": 1}) == []    # the mean was made, and held


def test_a_made_check_that_failed_fails():
    c = _rows(tcp_unique=2999, lost=3)
    got = problems(c, _delivery(c), DELIVERY_LEAST_MADE)
    assert len(got) == 2 and got[0].startswith("UDP: nothing lost") and got[1].startswith("TCP:")


def test_too_few_checks_made_fails():
    """Every UDP delivery check not made (none of its rows could decide):
    nothing says UDP delivered, so the run does not pass."""
    c = _rows()
    for n in _delivery(c):
        if n.startswith("UDP:"):
            c[n] = dict(c[n], **{"pass": None, "detail": "not checked: no UDP unit received"})
    got = problems(c, _delivery(c), DELIVERY_LEAST_MADE)
    assert got == ["UDP: 0 checks made, at least 1 needed; not made: "
                   + "; ".join(f"{n} (not checked: no UDP unit received)"
                               for n in _delivery(c) if n.startswith("UDP:"))]
    # No timing row made at all.
    t = {n: dict(c[n], **{"pass": None}) for n in cq.TIMING}
    assert problems(t, cq.TIMING, {"UDP:": 1})[0].startswith("UDP: 0 checks made")
    # A report without the rows asked for.
    assert problems({}, cq.TIMING, {"UDP:": 1})[:2] == [f"{n}: not in the report" for n in cq.TIMING]
