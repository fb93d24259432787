"""The C instruments: clear errors for bad arguments, and real runs of
owdprobe (over loopback in a private namespace) and noisefloor."""

from __future__ import annotations

import json
import socket
import struct
import subprocess
import time

import pytest

from kit import bed_usable, need, require_quiet
from linkemu.bed import netns

NS = "lb-lo"
ADDR = "198.18.7.1"


def run(tool, *args, timeout=30):
    return subprocess.run([str(tool), *args], capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("args, words", [
    (["send", "--dst", "198.18.0.2", "--ip-len", "45", "--pps", "10", "--count", "1"],
     ["--ip-len 45", "minimum 46", "18 B probe header"]),
    (["send", "--dst", "198.18.0.2", "--ip-len", "70000", "--pps", "10", "--count", "1"],
     ["--ip-len 70000", "65535"]),
    (["send", "--dst", "198.18.0.2", "--ip-len", "abc", "--pps", "10", "--count", "1"],
     ["--ip-len 'abc'"]),
    (["send", "--dst", "198.18.0.2", "--pps", "10", "--max", "--count", "1"],
     ["exactly one of --pps, --bitrate, --max"]),
    (["send", "--dst", "198.18.0.2", "--count", "1"], ["exactly one of --pps, --bitrate, --max"]),
    (["send", "--dst", "198.18.0.2", "--pps", "10"], ["exactly one of --count, --duration"]),
    (["send", "--dst", "198.18.0.2", "--pps", "10", "--count", "0"], ["--count '0'"]),
    (["send", "--dst", "198.18.0.2", "--pps", "-5", "--count", "1"], ["--pps '-5'"]),
    (["send", "--dst", "198.18.0.2", "--bitrate", "10X", "--count", "1"], ["--bitrate '10X'"]),
    # a bit rate is a frame rate at the frame size: the same bounds as --pps (1e-9 bit/s
    # made a 1.2e22 ns interval, cast past int64: both frames went at once, exit 0)
    (["send", "--dst", "127.0.0.1", "--port", "9", "--ip-len", "100", "--bitrate", "1e-9",
      "--count", "2"], ["--bitrate '1e-9'", "--ip-len 100", "0.001 .. 1e9 frames/s"]),
    (["send", "--dst", "127.0.0.1", "--port", "9", "--bitrate", "900G", "--ip-len", "46",
      "--count", "2"], ["--bitrate '900G'", "--ip-len 46", "0.001 .. 1e9 frames/s"]),
    (["send", "--dst", "not-an-ip", "--pps", "10", "--count", "1"], ["--dst 'not-an-ip'"]),
    (["send", "--pps", "10", "--count", "1"], ["--dst ADDR is required"]),
    (["send", "--dst", "198.18.0.2", "--pps", "10", "--count", "1", "--batch", "0"],
     ["--batch '0'"]),
    (["send", "--dst", "198.18.0.2", "--pps", "10", "--count", "1", "--spin-us", "x"],
     ["--spin-us 'x'"]),
    (["send", "--dst", "198.18.0.2", "--pps", "10", "--count", "1", "--port"],
     ["--port needs a value"]),
    (["send", "--dst", "198.18.0.2", "--pps", "10", "--count", "1", "--sport", "0"],
     ["--sport '0'", "1 .. 65535"]),
    (["send", "--dst", "198.18.0.2", "--pps", "10", "--count", "1", "--frobnicate", "1"],
     ["unknown option '--frobnicate'"]),
    (["recv", "--bind", "198.18.0.2", "--samples-format", "xml"], ["'xml'", "bin or csv"]),
    (["recv", "--bind", "198.18.0.2", "--rx-clock", "tai"], ["'tai'", "kernel or user"]),
    (["recv", "--port", "9000"], ["--bind ADDR is required"]),
    (["recv", "--bind", "198.18.0.2", "--idle", "0"], ["--idle '0'"]),
    (["bounce"], ["unknown mode 'bounce'"]),
])
def test_owdprobe_bad_arguments(tools, args, words):
    cp = run(tools["owdprobe"], *args)
    assert cp.returncode == 2, (cp.returncode, cp.stdout, cp.stderr)
    assert cp.stdout == ""
    assert cp.stderr.startswith("owdprobe: ")
    for w in words:
        assert w in cp.stderr, cp.stderr


def test_owdprobe_help(tools):
    cp = run(tools["owdprobe"], "--help")
    assert cp.returncode == 0 and "--ip-len" in cp.stdout and "--rx-clock" in cp.stdout


@pytest.mark.parametrize("args, words", [
    ([], ["--cpu is required"]),
    (["--cpu", "x"], ["--cpu 'x'"]),
    (["--cpu", "0", "--seconds", "0"], ["--seconds '0'"]),
    (["--cpu", "0", "--bogus"], ["unknown argument '--bogus'"]),
])
def test_noisefloor_bad_arguments(tools, args, words):
    cp = run(tools["noisefloor"], *args)
    assert cp.returncode == 2
    for w in words:
        assert w in cp.stderr


def test_noisefloor_runs(tools):
    cp = run(tools["noisefloor"], "--cpu", "0", "--seconds", "0.2")
    assert cp.returncode == 0, cp.stderr
    out = json.loads(cp.stdout)
    assert out["cpu"] == 0 and out["ran_on_cpu"] == 0
    assert out["reads"] > 100_000                    # a clock read is tens of ns
    g = out["gap_ns"]
    assert 0 < g["min"] <= g["p50"] <= g["p99"] <= g["p999"] <= g["max"]
    assert g["p50"] < 1000
    assert sum(c for _lo, _hi, c in out["histogram"]) == out["reads"]
    over = out["gaps_over"]
    assert over["10us"] >= over["100us"] >= over["1ms"] >= 0


@pytest.fixture
def udp_sink():
    """A plain UDP socket on 127.0.0.1 that takes whatever owdprobe sends
    (so its connected socket gets no ICMP refusal); yields the port."""
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sink.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        sink.bind(("127.0.0.1", 0))
        yield sink.getsockname()[1]
    finally:
        sink.close()


def _send_to_sink(tool, port, *args):
    cp = run(tool, "send", "--dst", "127.0.0.1", "--port", str(port), "--ip-len", "64", *args)
    assert cp.returncode == 0, cp.stderr
    return json.loads(cp.stdout)


def test_owdprobe_achieved_rate_of_two_batches(tools, udp_sink):
    """--max, 128 frames in two calls of 64. The achieved rate is the 64
    frames of the first call over the span from the first call's start
    to the second's (owdprobe.c, achieved_rate()). That span holds the
    whole first call, at least as long as the shorter of the two calls
    (call_ns.min), and lies within the run (duration_s, from the schedule's
    start to the end of the last call), so
        64 / duration_s  <=  achieved_pps  <=  64 / call_ns.min.
    Counting all 127 intervals against that span (the old rate) reported
    about twice the upper bound: 2 calls of ~150 us each, 850 kpps against
    a bound of 430 kpps. Hard inequalities from the definition, not a
    timing tolerance: +0.05 for the printed rounding of the rate."""
    s = _send_to_sink(tools["owdprobe"], udp_sink, "--max", "--count", "128", "--batch", "64")
    assert s["sent"] == 128 and s["calls"] == 2 and s["mean_batch"] == 64, s
    frames_before_last_call = 64
    rate = s["achieved_pps"]
    assert rate <= frames_before_last_call * 1e9 / s["call_ns"]["min"] + 0.05, s
    assert rate >= frames_before_last_call / s["duration_s"] - 0.05, s
    # The rates in bits are the same rate, per IP and per Ethernet (L1)
    # frame (to the 0.05 pps the printed rate is rounded to).
    assert s["achieved_ip_bps"] == pytest.approx(rate * 8 * 64, abs=0.05 * 8 * 64 + 1)
    assert s["achieved_l1_bps"] == pytest.approx(rate * 8 * (64 + 38), abs=0.05 * 8 * 102 + 1)


@pytest.mark.parametrize("args", [
    ["--pps", "1000", "--count", "1"],                   # a single frame
    ["--max", "--count", "64", "--batch", "64"],         # a single batch
])
def test_owdprobe_achieved_rate_of_one_call_is_zero(tools, udp_sink, args):
    """One send call has no span between call starts to measure a rate
    over: achieved_pps (and the rates in bits) are 0, not a division by
    zero nor the rate of a span that holds no frame's departure."""
    s = _send_to_sink(tools["owdprobe"], udp_sink, *args)
    assert s["calls"] == 1 and s["send_span_s"] == 0, s
    assert s["achieved_pps"] == 0 and s["achieved_ip_bps"] == 0 and s["achieved_l1_bps"] == 0


def test_owdprobe_achieved_rate_of_paced_single_frames(tools, udp_sink):
    """Paced, one frame per call: the rate is (sent - 1) / span, the
    requested 100 pps within the schedule's lateness (frame i is due at
    t0 + i/100: the span is 0.02 s within the first and last call's
    lateness, lateness_ns.max; +1 us for the printed span)."""
    s = _send_to_sink(tools["owdprobe"], udp_sink, "--pps", "100", "--count", "3")
    assert s["calls"] == 3 and s["sent"] == 3, s
    assert s["achieved_pps"] == pytest.approx(2 / s["send_span_s"], rel=1e-3)
    assert abs(s["send_span_s"] - 0.02) <= s["lateness_ns"]["max"] / 1e9 + 1e-6, s


def _free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _probe_frame(run_id: int, seq: int) -> bytes:
    """owdprobe's 18-byte probe header: run id, sequence, send time."""
    return struct.pack("<HQQ", run_id, seq, time.clock_gettime_ns(time.CLOCK_REALTIME))


STRAY = [_probe_frame(6, 0),          # another run
         b"\x05\x00\x01",              # this run's id, too short for a probe header
         None]                        # this run, sequence out of --count's range (filled below)


@pytest.mark.parametrize("own_frames", [0, 3])
def test_owdprobe_recv_ends_despite_stray_traffic(tools, own_frames):
    """A receiver of run 5 (--count 10) gets own_frames frames of its run,
    then stray datagrams every 20 ms: another run's frame, a short one, one
    of run 5 past --count. Only its own frames restart its clock, so it
    ends --start-timeout (0.5 s) after it started (no frame of its run) or
    --idle (0.3 s) after its last frame, while the stray traffic goes on
    for 5 s. A receiver whose clock any datagram restarted (gaps of 20 ms)
    could not end before the stray traffic stops."""
    port = _free_udp_port()
    recv = subprocess.Popen([str(tools["owdprobe"]), "recv", "--bind", "127.0.0.1", "--port",
                             str(port), "--run-id", "5", "--count", "10", "--idle", "0.3",
                             "--start-timeout", "0.5"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        assert recv.stdout.readline().startswith("ready")
        for seq in range(own_frames):
            tx.sendto(_probe_frame(5, seq), ("127.0.0.1", port))
        stray_sent, stray_until = 0, time.monotonic() + 5.0
        while recv.poll() is None and time.monotonic() < stray_until:
            for frame in STRAY:
                tx.sendto(frame or _probe_frame(5, 1000), ("127.0.0.1", port))
                stray_sent += 1
            time.sleep(0.02)
        assert recv.poll() is not None, "the receiver outlived 5 s of stray traffic"
        out, err = recv.communicate(timeout=5)
    finally:
        tx.close()
        if recv.poll() is None:
            recv.kill()
            recv.wait()
    assert recv.returncode == 0, err
    r = json.loads(out)
    assert r["received"] == own_frames and r["lost"] == 10 - own_frames
    # the stray frames it read (those still queued at its end were not)
    assert 0 < r["foreign"] + r["out_of_range"] <= stray_sent


@pytest.fixture
def loopback_ns():
    """A private namespace with 198.18.7.1 on lo (MTU 1500), removed after."""
    need(*bed_usable())
    netns.ns_del(NS)
    netns.ns_add(NS)
    try:
        netns.ns_run(NS, ["ip", "link", "set", "lo", "mtu", "1500", "up"])
        netns.ns_run(NS, ["ip", "addr", "add", f"{ADDR}/32", "dev", "lo"])
        yield NS
    finally:
        for p in netns.ns_pids(NS):
            subprocess.run(["kill", str(p)], check=False)
        netns.ns_del(NS)


def _pair(tool, ns, recv_args, send_args, timeout=30):
    recv = subprocess.Popen(netns.ns_exec_argv(ns, [str(tool), "recv", "--bind", ADDR,
                                                    "--idle", "0.5", *recv_args]),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert recv.stdout.readline().startswith("ready")
        time.sleep(0.05)
        snd = subprocess.run(netns.ns_exec_argv(ns, [str(tool), "send", "--dst", ADDR,
                                                     *send_args]),
                             capture_output=True, text=True, timeout=timeout)
        out, err = recv.communicate(timeout=timeout)
        return snd, json.loads(out) if out.strip() else None, err
    finally:
        if recv.poll() is None:
            recv.kill()
            recv.wait()


@pytest.mark.needs_root
def test_owdprobe_loopback_46_and_samples(tools, loopback_ns, tmp_path):
    """46-byte frames (18 B of payload carry the whole header), paced at
    20 kpps: every frame arrives once, in order, with a kernel timestamp;
    the binary samples hold exactly what the summary counted."""
    from linkemu.instruments.owd import read_samples
    samples = tmp_path / "s.owd"
    snd, rcv, err = _pair(tools["owdprobe"], loopback_ns,
                          ["--count", "4000", "--run-id", "9", "--samples", str(samples)],
                          ["--ip-len", "46", "--pps", "20000", "--count", "4000", "--run-id", "9"])
    assert snd.returncode == 0, snd.stderr
    s = json.loads(snd.stdout)
    assert s["sent"] == 4000 and s["udp_payload"] == 18
    assert rcv["received"] == 4000 and rcv["lost"] == 0 and rcv["duplicates"] == 0
    assert rcv["rx_timestamp"].startswith("kernel")
    assert rcv["clock"] == "CLOCK_REALTIME" and s["clock"] == "CLOCK_REALTIME"
    assert rcv["negative_delays"] == 0
    d = rcv["delay_ns"]
    assert 0 < d["min"] <= d["p50"] <= d["p99"] <= d["max"] and d["p50"] < 1_000_000
    a = read_samples(samples)
    assert a.size == 4000 and sorted(a["seq"].tolist()) == list(range(4000))
    delays = a["rx_ns"] - a["send_ns"]
    assert int(delays.min()) == d["min"] and int(delays.max()) == d["max"]
    # Pacing, judged by the sender's own lateness (each call's delay past
    # its first frame's due time). The schedule is absolute, frame i due
    # at t0 + i/pps: a late first call shortens the span, a late last call
    # lengthens it, and a batch takes only frames already due, so the span
    # is 3999/20000 s within the worst lateness, however long the
    # machine's stalls (one of 15 ms once made this 7 % "slow"); +1 us for
    # the span's printed resolution. A pacer that timed each wait from the
    # previous send would add every frame's lateness to the span instead.
    late = s["lateness_ns"]
    assert abs(s["send_span_s"] - 3999 / 20000) <= late["max"] / 1e9 + 1e-6, (s["send_span_s"], late)
    # Most frames on time: at 20 kpps each frame is due within the 50 us
    # the sender spins before a frame, so its median lateness is the spin
    # loop's exit (tens of ns here). (A 1 % slower schedule fails the
    # check above; the 2 % rate tolerance this replaced let it pass.) A
    # timing check: a verdict only without another daemon.
    if late["p50"] >= 50_000:
        require_quiet(None, 0, "owdprobe pacing")
    assert late["p50"] < 50_000, late


@pytest.mark.needs_root
def test_owdprobe_loss_reorder_dup_accounting(tools, loopback_ns, tmp_path):
    """Expected 3000 but only 2000 sent: 1000 lost at the tail (the final
    run is censored, so no loss run is counted); CSV samples."""
    samples = tmp_path / "s.csv"
    snd, rcv, err = _pair(tools["owdprobe"], loopback_ns,
                          ["--count", "3000", "--samples", str(samples),
                           "--samples-format", "csv"],
                          ["--ip-len", "1500", "--bitrate", "120M", "--count", "2000"])
    assert snd.returncode == 0, snd.stderr
    assert json.loads(snd.stdout)["requested"]["pps"] == pytest.approx(10000)
    assert rcv["received"] == 2000 and rcv["lost"] == 1000 and rcv["loss_rate"] == pytest.approx(1 / 3)
    assert rcv["loss_runs"] == [] and rcv["good_runs"] == []
    lines = samples.read_text().splitlines()
    assert lines[0] == "seq,send_ns,rx_ns,delay_ns,tos,dup" and len(lines) == 2001
    seq, sent, rx, delay, tos, dup = map(int, lines[1].split(","))
    assert rx - sent == delay and tos == 0 and dup == 0


@pytest.mark.needs_root
def test_owdprobe_tos_source_port_and_samples_v2(tools, loopback_ns, tmp_path):
    """--tos marks every frame, the receiver records the TOS byte it got;
    --sport is accepted and the frames arrive."""
    from linkemu.instruments.owd import read_samples
    samples = tmp_path / "t.owd"
    snd, rcv, err = _pair(tools["owdprobe"], loopback_ns, ["--count", "300", "--samples", str(samples)],
                          ["--ip-len", "64", "--pps", "10000", "--count", "300", "--tos", "184",
                           "--sport", "40123"])
    assert snd.returncode == 0, snd.stderr
    assert rcv["received"] == 300 and rcv["duplicates"] == 0
    a = read_samples(samples, duplicates=True)
    assert a.size == 300 and set(a["tos"].tolist()) == {184} and not a["flags"].any()
    head = samples.read_bytes()[:16]
    assert head[:8] == b"LEOWD001" and head[8] == 2 and head[12] == 32   # version 2, 32 B records


@pytest.mark.needs_root
def test_owdprobe_refuses_frames_above_mtu(tools, loopback_ns):
    cp = subprocess.run(netns.ns_exec_argv(loopback_ns, [str(tools["owdprobe"]), "send", "--dst",
                                                         ADDR, "--ip-len", "9000", "--pps", "10",
                                                         "--count", "1"]),
                        capture_output=True, text=True, timeout=10)
    assert cp.returncode == 2
    assert "exceeds the path MTU 1500" in cp.stderr and "jumbo" in cp.stderr


@pytest.mark.needs_root
def test_owdprobe_max_rate_duration(tools, loopback_ns):
    """--max --duration: as fast as it can for 0.3 s, and says how fast that was."""
    snd, rcv, err = _pair(tools["owdprobe"], loopback_ns, [],
                          ["--ip-len", "64", "--max", "--duration", "0.3"])
    assert snd.returncode == 0, snd.stderr
    s = json.loads(snd.stdout)
    assert s["requested"] == {"mode": "max"}
    assert s["sent"] > 1000 and s["achieved_pps"] > 10_000 and s["mean_batch"] > 1
    assert rcv["expected_from"] == "max_seq" and rcv["received"] <= s["sent"]
