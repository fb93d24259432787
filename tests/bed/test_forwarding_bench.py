"""bench/forwarding.py refuses what it cannot measure, before it starts
anything: at --seconds below 2 testpmd reports only its start-up second,
and without a round there is nothing to take a median of. With --frames
udp4 its ports loop UDP/IPv4 frames that class rules really read."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

FORWARDING = Path(__file__).resolve().parents[2] / "bench" / "forwarding.py"

# Runs DPDK programs (hugepages, root, a busy lcore): not for `make quick`,
# which runs what needs neither root nor a bed; the bed suite runs it.
RUNS_DPDK = pytest.mark.live


@pytest.mark.parametrize("args, named", [
    (["--seconds", "1"], "--seconds must be at least 2"),
    (["--rounds", "0"], "--rounds must be at least 1"),
    (["--lcore", "99"], "--lcore 99: not a CPU this benchmark may run on"),
    (["--lcore", "-1"], "--lcore -1: not a CPU this benchmark may run on"),
])
def test_refuses_what_it_cannot_measure(args, named):
    r = subprocess.run([sys.executable, str(FORWARDING), *args], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2
    assert named in r.stderr
    assert "[round" not in r.stderr  # nothing was started


# --- --frames udp4: the class rows on frames that are IP -----------------------

sys.path.insert(0, str(FORWARDING.parent))
import udp4_pcap  # noqa: E402
from children import eal_prefix, running, wait_ready  # noqa: E402
from forwarding import CLASS16_HIT, EAL_NULL, eal_pcap  # noqa: E402

LINKEMUD = FORWARDING.parents[1] / "build" / "src" / "dataplane" / "linkemud"


def _eal_lcores(argv: list) -> set[int]:
    """The lcores an EAL program forwards on from its argv: those of -l
    (lists and ranges) but, for testpmd, its main lcore (--main-lcore, or
    the lowest of -l)."""
    words = [str(w) for w in argv]
    cores: set[int] = set()
    for part in words[words.index("-l") + 1].split(","):
        lo, _, hi = part.partition("-")
        cores |= set(range(int(lo), int(hi or lo) + 1))
    if "testpmd" in words[0]:
        main = int(words[words.index("--main-lcore") + 1]) if "--main-lcore" in words else min(cores)
        cores.discard(main)
    return cores


class _Started(Exception):
    pass


@pytest.mark.parametrize("lcore", [0, 1])
def test_every_program_forwards_on_the_lcore_asked_for(monkeypatch, lcore):
    """testpmd, holdfwd and linkemud forward on --lcore, so the ratios set
    like against like. With --lcore 0 testpmd got `-l 0-1` and forwarded
    on CPU 1 (EAL's main lcore is the lowest, and testpmd does not forward
    on it) while the others forwarded on CPU 0."""
    import argparse
    import forwarding as fw
    started = []

    def running(argv, *a, **kw):
        started.append(argv)
        raise _Started

    monkeypatch.setattr(fw, "running", running)
    a = argparse.Namespace(rounds=1, seconds=2.0, lcore=lcore, compare=None)
    # Each program in turn: the ones before it stand in with a figure.
    stand_ins = [("run_testpmd", {"tx_pps": 1.0}), ("run_noisefloor", {}), ("run_holdfwd", {})]
    for k in range(len(stand_ins) + 1):
        if k:
            name, value = stand_ins[k - 1]
            monkeypatch.setattr(fw, name, lambda *a, _v=value, **kw: _v)
        if k == 1:
            continue                  # noisefloor starts no EAL program
        with pytest.raises(_Started):
            fw.run_rounds(a, ["delay 1ms"], fw.EAL_NULL)
    assert [os.path.basename(str(argv[0])) for argv in started] == ["dpdk-testpmd", "holdfwd", "linkemud"]
    for argv in started:
        assert _eal_lcores(argv) == {lcore}, argv


def test_testpmd_lcores_name_another_cpu_its_main():
    from lcores import lcore_problem, testpmd_lcores
    assert testpmd_lcores(0, [0, 1]) == ["-l", "0,1", "--main-lcore", "1"]
    assert testpmd_lcores(1, [0, 1]) == ["-l", "0,1", "--main-lcore", "0"]
    assert testpmd_lcores(3, [1, 2, 3]) == ["-l", "1,3", "--main-lcore", "1"]
    with pytest.raises(ValueError, match="no CPU other than 0"):
        testpmd_lcores(0, [0])
    assert lcore_problem(1, [0, 1]) is None
    assert "not a CPU this benchmark may run on (usable: 0, 1)" in lcore_problem(5, [0, 1])
    assert "the only usable CPU" in lcore_problem(0, [0])


@RUNS_DPDK
def test_testpmd_forwards_on_lcore_0(tmp_path):
    """What testpmd itself says it forwards on, given testpmd_lcores(0)."""
    from lcores import testpmd_lcores
    prefix = eal_prefix("letpl")
    cmd = ["dpdk-testpmd", *testpmd_lcores(0), *EAL_NULL, "--file-prefix", prefix, "--",
           "--forward-mode=io", "--auto-start"]
    with running(cmd, prefix, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                 text=True) as p:
        out, _ = p.communicate("quit\n", timeout=60)
    assert "Logical Core 0 (socket 0) forwards packets" in out, out[-2000:]
    assert "Logical Core 1 " not in out



def test_udp4_frames_are_what_the_rows_say(tmp_path):
    """64 bytes on the wire, IPv4 with a valid header checksum, UDP from
    port 5000 to 5000 + k mod 64: the main class sets of the rows (ports
    6000 and up, TCP 830) match none of them."""
    for k in (0, 1, 63, 64, 1023):
        b = udp4_pcap.frame(k)
        assert len(b) == 60 and b[12:14] == b"\x08\x00" and b[14] == 0x45 and b[23] == 17
        words = [int.from_bytes(b[i:i + 2], "big") for i in range(14, 34, 2)]
        s = sum(words)
        assert (s & 0xFFFF) + (s >> 16) == 0xFFFF, "IPv4 header checksum"
        assert int.from_bytes(b[34:36], "big") == 5000 and int.from_bytes(b[36:38], "big") == 5000 + k % 64
    path = tmp_path / "f.pcap"
    udp4_pcap.write(str(path), count=10)
    data = path.read_bytes()
    assert data[:4] == (0xA1B2C3D4).to_bytes(4, "little") and len(data) == 24 + 10 * (16 + 60)


def _report_on_udp4(tmp_path, name: str, link: str) -> dict:
    """linkemud's stats report after a second on net_pcap ports that
    replay the udp4 frames, `link` both ways."""
    pcap = tmp_path / "f.pcap"
    udp4_pcap.write(str(pcap))
    stats = tmp_path / "stats.json"
    prefix = eal_prefix(name)
    cmd = [str(LINKEMUD), "-l", "1", *eal_pcap(pcap), "--file-prefix", prefix, "--", "--a2b", link, "--b2a",
           link, "--stats-file", str(stats)]
    with running(cmd, prefix, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as p:
        wait_ready(p)
        time.sleep(1)
        p.send_signal(signal.SIGINT)
        p.communicate(timeout=30)
    assert p.returncode == 0
    r = json.loads(stats.read_text())
    assert r["conserved"]
    return r


@RUNS_DPDK
def test_linkemud_classifies_the_udp4_frames(tmp_path):
    """On the ports --frames udp4 uses, a rule on UDP ports sees every
    frame (on net_null it would see none): the class rows read headers."""
    r = _report_on_udp4(tmp_path, "leu4", "delay 1ms limit 100000 ; "
                        "class u match proto udp dport 5000-5063 : delay 100us limit 100000")
    for d in r["directions"].values():
        default, u = d["classes"][0], d["classes"][1]
        assert u["rx"] > 100_000 and default["rx"] == 0, (default["rx"], u["rx"])


@RUNS_DPDK
def test_port_filter_passes_exactly_the_matching_frames(tmp_path):
    """CLASS16_HIT (rules on ports 5000 .. 5015, one hashed group with a
    port filter) on the udp4 frames, which net_pcap replays in order with
    ports 5000 + k mod 64: of a direction's N frames, class h_k takes
    frame k of every 64, so N // 64 or one more, and the default class
    the rest. A filter that refused a rule's port, or let a frame of
    the default class through to the wrong class, breaks the count."""
    r = _report_on_udp4(tmp_path, "leu4h", f"delay 10us limit 100000 ; {CLASS16_HIT}")
    for d in r["directions"].values():
        classes = d["classes"]
        n = sum(c["rx"] for c in classes)
        assert n > 100_000 and len(classes) == 17
        for k in range(1, 17):
            assert classes[k]["rx"] in (n // 64, n // 64 + 1), (k, classes[k]["rx"], n)
        assert classes[0]["rx"] == n - sum(c["rx"] for c in classes[1:])


@RUNS_DPDK
def test_udp4_rows_run():
    """forwarding.py --frames udp4 --quick: testpmd, the floors and the two
    quick class rows on net_pcap ports, each with a rate."""
    r = subprocess.run([sys.executable, str(FORWARDING), "--frames", "udp4", "--quick", "--json"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout)
    assert out["frames"] == "udp4" and out["testpmd_tx_pps"] > 0
    assert [row["link"] for row in out["linkemud"]][1].endswith("class ctl match proto tcp port 830 : delay 0")
    assert all(row["tx_pps"] > 0 for row in out["linkemud"] + out["floors"])
    # The on-time bound from the polls' spacing, beside each row's error.
    assert all(0 <= row["gap_p99_ns"] <= row["gap_p999_ns"] for row in out["linkemud"] + [out["machine"]])


def test_machine_gaps_read_as_lateness_like_linkemuds():
    """The machine's row reads noisefloor's gaps as linkemud reads its
    polls' (src/plane/poll_gaps.c): a deadline at a random moment in 1 ms
    with one 10 us gap is late by more than x with probability
    (10 us - x) / 1 ms, and gaps under 1 us are the loop idling."""
    from linkemu.instruments.noisefloor import lateness, lateness_quantile
    one = [(10_000, 1)]
    assert lateness_quantile(one, 1e6, 0.99) == 0          # 1 % of the time is exactly the gap
    assert abs(lateness_quantile(one, 1e6, 0.999) - 9_000) <= 1
    assert abs(lateness_quantile(one, 1e6, 0.9999) - 9_900) <= 1
    # A thousand 900 ns gaps (0.9 of the millisecond) count for nothing.
    assert abs(lateness_quantile(one + [(900, 1000)], 1e6, 0.999) - 9_000) <= 1
    assert lateness_quantile([], 1e6, 0.99) == 0
    # A noisefloor result: buckets [lo, hi, count] read at their middle.
    nf = {"seconds": 0.001, "histogram": [[20, 20, 40_000], [9_990, 10_010, 1]]}
    assert abs(lateness(nf, 0.999) - 9_000) <= 1


# --- bench/forwarding_linerate.py: linkemud's own paced source -----------------

LINERATE = FORWARDING.parent / "forwarding_linerate.py"


@pytest.mark.parametrize("args, named", [
    (["--rounds", "0"], "--rounds must be at least 1"),
    (["--ring", "0"], "--ring must be at least 1"),
    (["--ladder", "7.44,fast"], "--ladder: '7.44,fast' is not a comma-separated list"),
    (["--ladder", "0"], "every rung must be above 0"),
    (["--lcore", "99"], "--lcore 99: not a CPU this benchmark may run on"),
])
def test_linerate_refuses_what_it_cannot_measure(args, named):
    r = subprocess.run([sys.executable, str(LINERATE), *args], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and named in r.stderr, r.stderr
    assert "[round" not in r.stderr


def test_linerate_tells_stalls_from_overload():
    import forwarding_linerate as lr
    # 7.44 Mpps (3.72 a port): a ring of 4096 lasts 1.1 ms.
    base = {"rx_pps": 7.44e6, "missed": 0, "bad_drops": {}, "conserved": True, "err_p99_ns": 5e3,
            "wait_p99_ns": 2e3, "longest_gap_ns": 3e6}
    assert lr.verdict(base, 7.44e6, 10e3, 4096) == ([], [])
    # Missed while the ring was mostly not full: the machine's stalls, run again.
    stalled = dict(base, missed=5000)
    lost, late = lr.verdict(stalled, 7.44e6, 10e3, 4096)
    assert lost == ["5000 missed (in stalls, the longest 3.00 ms)"] and late == []
    assert lr.stalled_only(dict(stalled, lost=lost))
    # Missed with the ring full at p99 (an overload): the rate is not carried.
    over = dict(base, missed=5000, wait_p99_ns=1.0e6, rx_pps=7.0e6, err_p99_ns=20e3)
    lost, late = lr.verdict(over, 7.44e6, 10e3, 4096)
    assert lost == ["received 7.00 Mpps", "5000 missed"] and late == ["error p99 20.0 us"]
    assert not lr.stalled_only(dict(over, lost=lost))
    # The figures climb from the bottom and stop at the first failure.
    rungs = [{"lost": [], "fail": []}, {"lost": [], "fail": ["late"]}, {"lost": ["x"], "fail": ["x"]},
             {"lost": [], "fail": []}]
    assert lr.highest([1, 2, 3, 4], rungs, "lost") == 2
    assert lr.highest([1, 2, 3, 4], rungs, "fail") == 1


PACED = FORWARDING.parent / "forwarding_paced.py"


@pytest.mark.parametrize("args, named", [
    (["--rounds", "0"], "--rounds must be at least 1"),
    (["--seconds", "0"], "--seconds must be above 0"),
    (["--retries", "-1"], "--retries must be at least 0"),
    (["--ladder", "1,fast"], "--ladder: '1,fast' is not a comma-separated list"),
    (["--burst", "0"], "--burst must be 1 .. 256"),
    (["--lcore", "99"], "--lcore 99: not a CPU this benchmark may run on"),
])
def test_paced_refuses_what_it_cannot_measure(args, named):
    """Refused before pacegen or a program under test starts: a bad ladder
    was a traceback from inside the first round, and --lcore 0 put pacegen
    (always CPU 0) on the forwarding lcore's CPU."""
    r = subprocess.run([sys.executable, str(PACED), *args], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and named in r.stderr, r.stderr
    assert "[round" not in r.stderr


@pytest.mark.needs_root
def test_linerate_runs_a_row_on_the_paced_source():
    r = subprocess.run([sys.executable, str(LINERATE), "--quick", "--row", "unimpaired", "--ladder", "1",
                        "--seconds", "0.5", "--warmup", "0.2", "--json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    (row,) = res["rows"]
    (run,) = row["runs"]["1"]
    # 1 Mpps asked, half into each port: what the ports received over the window.
    assert 0.9e6 <= run["rx_pps"] <= 1.1e6, run
    assert run["conserved"] and run["err_p50_ns"] < 1e6
