"""--wait: the option, and an adaptive lcore on a real bed.

The bed test checks what holds on any machine, busy or quiet: every frame
arrives and none early (the model's deadline is a floor, never shifted by
a sleep), the books balance (kit.Link.stop), the lcore wakes on frames
(not a blind timer), and at idle it uses a fraction of the CPU a busy
lcore burns. The precision and CPU figures themselves are the benchmark's
(bench/tail_wait.py, `make bench`), taken on a quiet machine."""

from __future__ import annotations

import re
import subprocess
import time

import pytest

from kit import linkemu, suite_bed
from linkemu.bed import paths, testbed
from linkemu.daemon import daemon
from linkemu.errors import UsageError
from linkemu.instruments import owd

BED = suite_bed(__file__)
TICKS = 100  # USER_HZ, which /proc/PID/stat counts in on Linux


def test_linkemud_rejects_bad_wait_values(linkemud_bin):
    for args, says in ((["--wait", "sleepy"], "--wait: 'sleepy' is not a waiting mode (busy, adaptive)"),
                       (["--wait"], "--wait: missing value"),
                       (["--spin-us", "-1"], "--spin-us: '-1'"),
                       (["--spin-us", "automatic"], "--spin-us: 'automatic'"),
                       (["--idle-us", "1000001"], "--idle-us: '1000001'")):
        cp = subprocess.run([str(linkemud_bin), "--", *args], capture_output=True, text=True,
                            timeout=10)
        assert cp.returncode == 2 and says in cp.stderr, (args, cp.returncode, cp.stderr)
    cp = subprocess.run([str(linkemud_bin), "--help"], capture_output=True, text=True, timeout=10)
    assert "--wait MODE" in cp.stdout and "busy" in cp.stdout and "adaptive" in cp.stdout


def test_cli_rejects_bad_wait_values():
    cp = linkemu("run", "--bed", BED, "--wait", "sleepy")
    assert cp.returncode == 2 and "--wait" in cp.stderr and "'sleepy'" in cp.stderr, cp.stderr
    cp = linkemu("run", "--bed", BED, "--wait", "adaptive", "--spin-us", "soon")
    assert cp.returncode == 2 and "bad --spin-us 'soon' (expected auto or microseconds" in cp.stderr, cp.stderr
    bed = testbed.bed_for(BED)
    with pytest.raises(UsageError, match="--wait adaptive needs the single or per-direction"):
        daemon.validate(daemon.DaemonConfig(bed=bed, layout="pipeline", wait="adaptive"))
    cfg = daemon.DaemonConfig(bed=bed, wait="adaptive")
    argv = daemon.build_argv(paths.find_linkemud() or "linkemud", cfg)
    assert argv[argv.index("--wait") + 1] == "adaptive"
    assert "--wait" not in daemon.build_argv("linkemud", daemon.DaemonConfig(bed=bed))
    argv = daemon.build_argv("linkemud", daemon.DaemonConfig(bed=bed, wait="adaptive", spin="120"))
    assert argv[argv.index("--spin-us") + 1] == "120"
    assert "--spin-us" not in daemon.build_argv("linkemud", cfg)


def _cpu_s(pid: int) -> float:
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TICKS


def test_adaptive_forwards_conserves_and_sleeps(bed_up, run_link):
    link = run_link("delay 10ms", "delay 1ms", "--wait", "adaptive", "--seed", "7")
    pid = testbed.daemon_pid(bed_up)
    log = paths.daemon_log_file(BED)
    text = log.read_text()
    assert "wait=adaptive" in text, "the ready line does not name the waiting mode"
    # On the bed (af_xdp) both input ports have a socket the lcore can
    # sleep on; a blind timer would still forward but add up to 50 us.
    assert len(re.findall(r"--wait adaptive: port \d \(net_af_xdp\d\): wakes on a frame", text)) == 2, text

    # Idle: the lcore sleeps up to 1 ms at a time. A busy lcore reads ~1.0
    # here (less only when starved); 0.5 leaves room for a slow machine.
    c0, t0 = _cpu_s(pid), time.monotonic()
    time.sleep(1.0)
    idle = (_cpu_s(pid) - c0) / (time.monotonic() - t0)
    assert idle < 0.5, f"adaptive linkemud used {idle:.2f} CPU s/s at idle"

    # Frames paced like pings: the lcore sleeps between nearly every two.
    res = owd.probe(bed_up, owd.ProbeSpec(ip_len=200, pps=500.0, count=1000, port=9400,
                                          spin_us=50))["receiver"]
    final = link.stop()       # conservation, nothing in flight (kit)
    assert res["lost"] == 0 and res["received"] >= 1000, res
    # Never early: the deadline is a floor for every frame, asleep or not.
    assert res["delay_ns"]["min"] >= 10_000_000, res["delay_ns"]
    a2b = final["directions"]["a2b"]
    assert a2b["rx"] >= 1000 and a2b["tx"] == a2b["rx"] and a2b["dropped_total"] == 0, a2b
    text = log.read_text()
    naps = re.search(r"--wait adaptive: (\d+) naps \((\d+) ended by a frame\)", text)
    assert naps and int(naps.group(2)) > 0, "the lcore never woke on a frame"
    # The spin is learned by default (--spin-us auto): from the naps that
    # ended by their timer, well over the warm-up's 256 in a second idle.
    spin = re.search(r"--wait adaptive: spin ([\d.]+) us \(auto, learned from (\d+) timer wake-ups; "
                     r"(\d+) woke later than 1024 us", text)
    assert spin, "no learned spin in the daemon's log:\n" + text
    assert int(spin.group(2)) >= 256 and 0 < float(spin.group(1)) <= 1024 + 5, spin.group(0)


def test_a_fixed_spin_is_kept(bed_up, run_link):
    link = run_link("delay 1ms", "delay 1ms", "--wait", "adaptive", "--spin-us", "80")
    time.sleep(0.5)
    link.stop()
    text = paths.daemon_log_file(BED).read_text()
    assert re.search(r"--wait adaptive: spin 80\.0 us \(fixed\)", text), text
