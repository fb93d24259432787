"""The benchmarks' figures computed from synthetic samples: what each
script prints is computed by a function of its runs, tested here without
running linkemud, testpmd or pacegen (so without the quiet lock)."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))


# --- the ladders: a row's rate is a rung some round passed ---------------------

def _paced_run(p99_ns, fail=()):
    return {"fail": list(fail), "p50_ns": 1e3, "p99_ns": p99_ns, "p999_ns": 2 * p99_ns,
            "gen": {"burst_lateness_ns": {"p99": 5e3, "p999": 9e3}, "oneway_ns": {"p99": 7e3}}}


def test_paced_claims_a_rung_with_an_even_number_of_rounds():
    """Two rounds, one passing up to 4 Mpps and one up to 7: the row's rate
    is a rung passed in half the rounds (4), with that rung's error; the
    mean of the two (5.5 Mpps) is on no ladder, passed by no round, and
    finds no run to take the error from."""
    import forwarding_paced as fp
    ladder = [1e6, 4e6, 7e6, 10e6]
    results = {1e6: [_paced_run(2e3), _paced_run(2e3)], 4e6: [_paced_run(4e3), _paced_run(6e3)],
               7e6: [_paced_run(20e3, ["p99 20.0 us"]), _paced_run(8e3)],
               10e6: [_paced_run(30e3, ["p99 30.0 us"])]}
    row = fp.row_summary("delay 1ms", "delay 1ms", [4e6, 7e6], results, ladder)
    assert row["claimed_pps"] in ladder and row["claimed_pps"] == 4e6
    assert row["p99_ns"] == 5e3
    assert row["first_failure"] == ["p99 20.0 us"]
    # An odd number of rounds: the middle one, as before.
    assert fp.row_summary("x", "x", [1e6, 7e6, 4e6], results, ladder)["claimed_pps"] == 4e6


def test_linerate_figures_are_rungs_with_an_even_number_of_rounds():
    import forwarding_linerate as lr
    row = lr.row_summary("delay 1ms", "delay 1ms", [14.88e6, 20e6], [7.44e6, 10e6], {})
    assert (row["carried_pps"], row["on_time_pps"]) == (14.88e6, 7.44e6)
    row = lr.row_summary("x", "x", [7.44e6, 20e6, 14.88e6, 29.76e6], [0.0, 0.0, 7.44e6, 7.44e6], {})
    assert (row["carried_pps"], row["on_time_pps"]) == (14.88e6, 0.0)


# --- forwarding.py: testpmd's rate as linkemud's and holdfwd's are taken ---------

def _testpmd_out(per_port_pps):
    """testpmd's --stats-period output: a block per port per period."""
    blocks = []
    for pps in per_port_pps:
        for port in (0, 1):
            blocks.append(f"""
  ######################## NIC statistics for port {port}  ########################
  RX-packets: 1234567    RX-missed: 0          RX-bytes:  79012288
  RX-errors: 0
  RX-nombuf:  0
  TX-packets: 1234567    TX-errors: 0          TX-bytes:  79012288

  Throughput (since last show)
  Rx-pps:     {pps:>12}          Rx-bps:  {pps * 512:>12}
  Tx-pps:     {pps:>12}          Tx-bps:  {pps * 512:>12}
  ############################################################################""")
    return "\n".join(blocks)


def test_testpmd_rate_is_the_windows_like_the_others():
    """linkemud's rate is its frames sent over its whole run, holdfwd's over
    its window: a second in which the VM took the lcore's CPU for half
    counts in theirs. testpmd's must count it too, or the ratio compares
    a run's typical second with another's whole window: 4 s at 150 Mpps
    and one at 75 after the start-up period are 135 Mpps, not 150."""
    import forwarding as fw
    out = _testpmd_out([0, 75_000_000, 75_000_000, 37_500_000, 75_000_000, 75_000_000])
    assert fw.testpmd_rate(out) == 135_000_000
    # The start-up period (rate 0: no previous sample) is not counted.
    assert fw.testpmd_rate(_testpmd_out([0, 60_000_000])) == 120_000_000
    assert fw.testpmd_rate(_testpmd_out([0])) is None
    assert fw.testpmd_rate("EAL: Cannot get hugepage information.\n") is None


# --- forwarding_linerate.py: counters and clock from the same reports -----------

def _stats(time_ns, rx_each):
    return {"time_ns": time_ns, "directions": {x: {"rx": rx_each} for x in ("a2b", "b2a")}}


def test_linerate_rate_counts_frames_over_the_time_they_were_counted_in():
    """The counters restart at `reset stats`; the window's clock started
    at the first `stats` after it, a control round trip later (here 20
    ms, a scheduler tick or a few on this VM). Frames counted in those 20
    ms must not be divided by a window that leaves them out: at 9.85
    Mpps received of 10 asked, 2 s, the rate must stay 9.85 (a failed
    rung), not read 9.95 (a pass at the 0.99 bar)."""
    import forwarding_linerate as lr
    rate = 9.85e6
    first = _stats(1_020_000_000, rate * 0.020 / 2)          # 20 ms after the reset at 1.000 s
    window = _stats(3_020_000_000, rate * 2.020 / 2)         # 2 s later
    pps, seconds = lr.window_rate(first, window)
    assert seconds == 2.0
    assert abs(pps - rate) < 1
    base = {"rx_pps": pps, "missed": 0, "bad_drops": {}, "conserved": True, "err_p99_ns": 5e3,
            "wait_p99_ns": 2e3, "longest_gap_ns": 3e6}
    assert lr.verdict(base, 10e6, 10e3, 4096)[0] == ["received 9.85 Mpps"]


# --- delay_line_1s.py: the figures of the full line, after the reset -------------

def _dl_sample(t, tx, since_reset, p99):
    return {"t": t, "time_ns": int(t * 1e9), "tx": tx, "since_reset": since_reset, "error_p99_ns": p99}


def test_delay_line_error_is_the_windows_not_the_whole_runs():
    """The script resets linkemud's stats at 1.5 s so that the error is
    that of the full line; the final report (--stats-file) is the whole
    run's, filling included. The figure is the last report's after the
    reset."""
    import delay_line_1s as dl
    rate = 10e6
    samples = [_dl_sample(1.5, int(0.5 * rate), False, 900_000)]
    samples += [_dl_sample(t, int((t - 1.5) * rate), True, 40_000) for t in (1.75, 2.0, 2.25, 2.5)]
    final = {"directions": {"a2b": {"emulation_error_ns": {"p99": 900_000}}}}
    pps, p99 = dl.sustained(samples, final)
    assert abs(pps - rate) < 1 and p99 == 40_000


def test_delay_line_rate_does_not_span_the_reset():
    """A sampling stall (0.6 s here) puts the last sample before the reset
    past 2 s: its tx counts from the start, the next ones from the reset.
    The rate is taken over samples after the reset only (old: negative)."""
    import delay_line_1s as dl
    rate = 10e6
    samples = [_dl_sample(1.4, int(0.4 * rate), False, 0), _dl_sample(2.05, int(1.05 * rate), False, 0)]
    samples += [_dl_sample(t, int((t - 2.05) * rate), True, 40_000) for t in (2.3, 2.55, 2.8, 3.05)]
    final = {"directions": {"a2b": {"emulation_error_ns": {"p99": 900_000}}}}
    pps, p99 = dl.sustained(samples, final)
    assert abs(pps - rate) < 1 and p99 == 40_000


# --- tail_wait.py, bed_attach.py: SIGTERM unwinds like Ctrl-C ---------------------

def _term_handler_raises() -> bool:
    h = signal.getsignal(signal.SIGTERM)
    if not callable(h):
        return False
    try:
        h(signal.SIGTERM, None)
    except KeyboardInterrupt:
        return True
    return False


def test_tail_wait_unwinds_on_sigterm(monkeypatch):
    """Without --isolate-lcore too: a SIGTERM while the bed and a daemon
    are up must unwind (bed.down(), link.stop()) as Ctrl-C does, not kill
    the script and leave a busy-polling linkemud and the bed behind."""
    import tail_wait
    seen = []
    monkeypatch.setattr(tail_wait.os, "geteuid", lambda: 0)
    monkeypatch.setattr(tail_wait, "measure", lambda o, moved: seen.append(_term_handler_raises()) or 0)
    monkeypatch.setattr(sys, "argv", ["tail_wait.py", "--quick"])
    assert tail_wait.main() == 0
    assert seen == [True]


def test_bed_attach_unwinds_on_sigterm(monkeypatch):
    """bed_attach brings beds up and starts linkemud and testpmd (testpmd
    in a session of its own): a SIGTERM must reach its finally (aux_down,
    bed.down) and the forwarder's stop, as Ctrl-C does."""
    import bed_attach
    seen = []

    class Stop(Exception):
        pass

    class Bed:
        def __init__(self, name):
            pass

        def up(self):
            seen.append(_term_handler_raises())
            raise Stop

        def down(self):
            seen.append("down")

    monkeypatch.setattr(bed_attach.os, "geteuid", lambda: 0)
    monkeypatch.setattr(bed_attach.sp, "run", lambda *a, **k: bed_attach.sp.CompletedProcess(a, 0, "", ""))
    monkeypatch.setattr(bed_attach.api, "Bed", Bed)
    monkeypatch.setattr(bed_attach, "aux_down", lambda: None)
    monkeypatch.setattr(sys, "argv", ["bed_attach.py", "--quick"])
    with pytest.raises(Stop):
        bed_attach.main()
    assert seen == [True]


# --- pacegen's histogram (bench/pace_hist.h): quantiles as linkemud's ----------

_PACE_HIST_MAIN = r"""
#include <stdlib.h>
#include "pace_hist.h"
static struct hist h;
int main(int argc, char **argv)
{
    double q = atof(argv[1]);
    for (int i = 2; i < argc; i++)
        hist_add(&h, strtoull(argv[i], NULL, 10));
    printf("%llu\n", (unsigned long long)hist_q(&h, q));
    return 0;
}
"""


@pytest.fixture(scope="module")
def pace_hist(tmp_path_factory):
    import shutil
    import subprocess
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.fail("no C compiler")
    d = tmp_path_factory.mktemp("pace_hist")
    (d / "main.c").write_text(_PACE_HIST_MAIN)
    subprocess.run([cc, "-O1", "-I", str(BENCH), "-o", str(d / "q"), str(d / "main.c")], check=True)

    def q(quantile, values):
        out = subprocess.run([str(d / "q"), str(quantile), *map(str, values)], capture_output=True, text=True,
                             check=True).stdout
        return int(out)
    return q


def test_pacegen_quantile_is_the_nearest_rank(pace_hist):
    """The q-quantile of n values is the ceil(q n)-th smallest (nearest
    rank), read as its bin's upper edge: linkemud's le_hist_quantile, so
    that pacegen's lateness and one-way time read like linkemud's error.
    100 values one per 100 ns bin, 50 .. 9,950 ns: p99 is the 99th
    (9,850 ns, bin edge 9,900), not the maximum; p50 the 50th."""
    values = [50 + 100 * i for i in range(100)]
    assert pace_hist(0.99, values) == 9_900
    assert pace_hist(0.5, values) == 5_000
    # Where q n is not a whole number both conventions agree: 0.99 of 150 -> the 149th.
    assert pace_hist(0.99, [50 + 100 * i for i in range(150)]) == 14_900
    assert pace_hist(0.99, [7]) == 7 and pace_hist(0.999, []) == 0


def test_pacegen_quantile_past_the_histogram_is_the_maximum(pace_hist):
    """Values past the last bin (20 ms) share it with the bin's own: a
    quantile that falls there lies somewhere up to the maximum, and its
    upper edge is the maximum. Reading it as the bin's 20 ms edge said a
    burst 50 ms late (a vCPU taken away) was 20 ms late."""
    assert pace_hist(0.5, [50_000_000]) == 50_000_000
    # The 99th of 100 is 30 ms, in that bin: read as its edge, the maximum
    # (an upper bound, like every bin's edge), never as 20 ms.
    assert pace_hist(0.99, [100] * 98 + [30_000_000, 50_000_000]) == 50_000_000
    # A value in the last bin's own range, none past it: still its value.
    assert pace_hist(0.5, [19_999_950]) == 19_999_950
