"""linkemud measures the gaps between its polls while it runs
(src/plane/poll_gaps.h), so that a report can set the emulation error
beside what the machine allowed in the same seconds.

The test stops the daemon with SIGSTOP for 200 ms: that gap must show at
its length, and the lateness it implies for a deadline falling at a random
moment must follow from the formula. With one gap G far longer than all
the others over an observed time T, P(late > x) = (G - x) / T, so the
p99 is G - 0.01 T and the p99.9 is G - 0.001 T. The histogram takes G at
its bucket's middle, within 0.4 % of G."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

from kit.vdev import run_on_vdevs

# Needs root and hugepages, not a bed.
pytestmark = pytest.mark.needs_root

STOP_S = 0.2


def test_a_stopped_lcore_shows_in_the_poll_gaps(linkemud_bin, tmp_path):
    stats = tmp_path / "final.json"
    stopped = []

    def stall(pid):
        time.sleep(0.5)
        t0 = time.monotonic()
        os.kill(pid, signal.SIGSTOP)
        time.sleep(STOP_S)
        os.kill(pid, signal.SIGCONT)
        stopped.append(time.monotonic() - t0)

    rc, err = run_on_vdevs(linkemud_bin, ["net_null0", "net_null1"],
                           ["--a2b", "delay 1ms limit 10000", "--b2a", "delay 1ms limit 10000",
                            "--seed", "1", "--no-control", "--stats-file", str(stats)],
                           1.0, name="gaps", during=stall)
    assert rc == 0, err
    rep = json.loads(stats.read_text())
    assert rep["conserved"]  # a stopped lcore loses no frame
    for name, d in rep["directions"].items():
        g = d["poll_gaps"]
        gap_ns, t_ns = g["over_1us"]["max"], g["observed_s"] * 1e9
        # The lcore was stopped for at least STOP_S (the signals' own
        # latency only lengthens it), and not much more than we waited.
        assert STOP_S * 1e9 <= gap_ns <= (stopped[0] + 0.05) * 1e9, (name, gap_ns, stopped)
        # Measured from the first poll to the last: within the run.
        assert 1.5 <= g["observed_s"] <= rep["uptime_s"], (name, g["observed_s"], rep["uptime_s"])
        for q, share in (("p99", 0.01), ("p999", 0.001)):
            want = gap_ns - share * t_ns
            assert abs(g["lateness_ns"][q] - want) <= 0.004 * gap_ns + 1000, (name, q, g, want)
