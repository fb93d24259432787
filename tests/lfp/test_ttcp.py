"""ttcp (src/tools/ttcp.c): bad arguments are refused with the word that is
wrong; over loopback it moves exactly what it says and its figures agree
with each other; through the bed the window it enforces is the window the
sender sees (tcpi_snd_wnd) and bounds the throughput as 8W/RTT does."""

from __future__ import annotations

import subprocess
import time

import pytest

from kit import need
from linkemu.instruments import ttcp as ttcp_mod
from ttcp_pair import loopback_pair as _pair
from linkemu.instruments.tools import find_tool

LO = "127.0.0.1"


@pytest.fixture(scope="module")
def ttcp():
    p = find_tool("ttcp")
    need(p is not None, "ttcp not built (meson setup build && ninja -C build)")
    return str(p)


def run(tool, *args, timeout=60):
    return subprocess.run([tool, *args], capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("args, words", [
    (["send"], ["needs --dst"]),
    (["recv"], ["needs --bind"]),
    (["bogus"], ["'send' or 'recv'"]),
    (["send", "--dst", "1.2.3"], ["--dst '1.2.3'", "IPv4"]),
    (["send", "--dst", LO, "--len", "0"], ["--len '0'"]),
    (["send", "--dst", LO, "--len", "4q"], ["--len '4q'"]),
    (["send", "--dst", LO, "--count", "-1"], ["--count '-1'"]),
    (["send", "--dst", LO, "--count", "5", "--seconds", "1"], ["exclude each other"]),
    (["send", "--dst", LO, "--window", "1k"], ["--window '1k'", "2k .. 1G"]),
    (["send", "--dst", LO, "--window-mode", "big"], ["--window-mode 'big'"]),
    (["send", "--dst", LO, "--mss", "20"], ["--mss '20'"]),
    (["send", "--dst", LO, "--port", "70000"], ["--port '70000'"]),
    (["send", "--dst", LO, "--cc", "x" * 20], ["--cc"]),
    (["send", "--dst", LO, "--sample-ms", "0"], ["--sample-ms '0'"]),
    (["send", "--dst", LO, "--quickack"], ["--quickack is an option of 'recv'"]),
    (["recv", "--bind", LO, "--nodelay"], ["--nodelay is an option of 'send'"]),
    (["recv", "--bind", LO, "--cc", "reno"], ["options of 'send'"]),
    # the other side's options, which the old code took and never used
    (["send", "--dst", LO, "--port", "9", "--timeout", "5"], ["--timeout is an option of 'recv'"]),
    (["recv", "--bind", LO, "--port", "15309", "--timeout", "0.5", "--sample-ms", "1"],
     ["--sample-ms is an option of 'send'"]),
    (["send", "--dst", LO, "--port"], ["--port needs a value"]),
    (["send", "--dst", LO, "--frobnicate", "1"], ["unknown option '--frobnicate'"]),
])
def test_bad_arguments_are_refused(ttcp, args, words):
    cp = run(ttcp, *args)
    assert cp.returncode == 2, cp.stderr
    for w in words:
        assert w in cp.stderr, (w, cp.stderr)


def test_unknown_congestion_control_names_the_available_ones(ttcp):
    cp = run(ttcp, "send", "--dst", LO, "--port", "1", "--cc", "nosuchcc")
    assert cp.returncode == 1
    assert "congestion control 'nosuchcc'" in cp.stderr
    assert "available here:" in cp.stderr and "reno" in cp.stderr


def test_loopback_moves_exactly_count_times_len(ttcp, tmp_path):
    samples = tmp_path / "s.csv"
    s, r = _pair(ttcp, 15301, [], ["--len", "1000", "--count", "3000", "--samples",
                                   str(samples), "--sample-ms", "1"])
    assert s["bytes"] == r["bytes"] == 3_000_000
    assert s["calls"] == 3000
    # the figures agree with each other
    assert s["mbps"] == pytest.approx(s["bytes"] * 8 / s["real_s"] / 1e6, rel=1e-3)
    assert s["calls_per_s"] > 0 and s["cpu_s"] >= 0
    cols = ttcp_mod.read_samples(samples)
    assert tuple(cols) == ttcp_mod.SAMPLE_COLUMNS
    assert len(cols["t_us"]) == s["samples"] >= 1
    assert cols["t_us"] == sorted(cols["t_us"])
    # nothing is acknowledged beyond what was written (+ 1 each for SYN and FIN)
    assert max(cols["bytes_acked"]) <= s["bytes"] + 2
    assert min(cols["in_flight_bytes"]) >= 0


@pytest.mark.parametrize("last", ["5000,10,2147", "5000,10,x,0,0,0,0,0,0,0,0,0,0,0,0,0,0",
                                  ",".join(["1"] * 19)])
def test_a_cut_or_garbled_samples_line_is_named_not_a_traceback(tmp_path, last):
    # A sender killed mid-run (the wrapper's timeout) leaves its buffered CSV
    # cut wherever stdio's buffer ended: TypeError / ValueError before.
    from linkemu.errors import LinkemuError
    p = tmp_path / "s.csv"
    p.write_text(",".join(ttcp_mod.SAMPLE_COLUMNS) + "\n" + ",".join(["0"] * 17) + "\n"
                 + last + "\n")
    with pytest.raises(LinkemuError, match=r"s\.csv line 3: .*ttcp samples"):
        ttcp_mod.read_samples(p)


def test_duration_mode_runs_for_the_time_asked(ttcp):
    t0 = time.monotonic()
    s, r = _pair(ttcp, 15302, [], ["--seconds", "1", "--len", "4k"])
    took = time.monotonic() - t0
    # the write loop stops at 1 s; delivery of what the buffers hold follows
    assert 1.0 <= s["real_s"] < 10, s
    assert took >= 1.0
    assert s["bytes"] == r["bytes"] == s["calls"] * 4096


def test_text_output_has_the_rttcp_lines(ttcp):
    recv = subprocess.Popen([ttcp, "recv", "--bind", LO, "--port", "15303", "--timeout", "20"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert recv.stdout.readline().startswith("ready")
        cp = run(ttcp, "send", "--dst", LO, "--port", "15303", "--count", "100")
        recv.communicate(timeout=30)
    finally:
        if recv.poll() is None:
            recv.kill()
            recv.wait()
    assert cp.returncode == 0, cp.stderr
    for w in ("409600 bytes in", "real seconds", "Mbit/sec", "CPU seconds", "I/O calls",
              "calls/sec"):
        assert w in cp.stdout, (w, cp.stdout)


@pytest.mark.parametrize("kb", [32, 64])
def test_window_is_enforced_and_bounds_throughput(run_link, bed_up, ttcp, kb):
    """Through `delay 5ms` (no rate limit) the window alone limits: the
    largest window the receiver advertised is W (rounded to the window-scale
    unit; up to ~1.2 W in the instant the kernel resets the clamp, see
    ttcp.c), and the throughput cannot beat 8 x window / min RTT."""
    link = run_link("delay 5ms", "delay 5ms")
    w = kb * 1024
    out = ttcp_mod.run(bed_up, ttcp_mod.TtcpSpec(window=w, seconds=2, cc="reno",
                                                  nodelay=True, quickack=True))
    link.stop()
    s = out["sender"]
    assert s["bytes"] == out["receiver"]["bytes"] > 0
    assert 0.9 * w <= s["snd_wnd_max"] <= 1.25 * w, s
    bound = 8 * s["snd_wnd_max"] / (s["min_rtt_us"] / 1e6) / 1e6
    assert s["mbps"] <= 1.05 * bound, (s["mbps"], bound)
    assert s["min_rtt_us"] >= 10_000      # 2 x 5 ms: the link's delay is there
