"""The hold floor (bench/holdfwd.c), the row bench/forwarding.py sets
linkemud's delay rows against: it must really hold every frame for the
time asked, or the floor would flatter linkemud; with no hold it must send
each burst at once. On net_null ports, one lcore, as the benchmark runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HOLDFWD = REPO / "build" / "bench" / "holdfwd"
sys.path.insert(0, str(REPO / "bench"))
from children import eal_prefix, running  # noqa: E402

BURST = 64  # holdfwd's RX burst (linkemud's)


def _holdfwd(*args: str) -> subprocess.CompletedProcess:
    prefix = eal_prefix("lehf")
    cmd = [str(HOLDFWD), "-l", "1", "--no-pci", "--in-memory", "--vdev=net_null0", "--vdev=net_null1",
           "--file-prefix", prefix, "--", *args]
    with running(cmd, prefix, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as p:
        out, err = p.communicate(timeout=60)
    return subprocess.CompletedProcess(cmd, p.returncode, out, err)

# Runs holdfwd on DPDK ports (hugepages, root, a busy lcore): not for `make
# quick`, which runs what needs neither root nor a bed; the bed suite runs it.
RUNS_DPDK = pytest.mark.live


def _result(*args: str) -> dict:
    r = _holdfwd(*args)
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.fixture(autouse=True)
def _built():
    if not HOLDFWD.exists():
        pytest.fail(f"{HOLDFWD} is not built (make build)")


@RUNS_DPDK
def test_holds_each_frame_for_the_time_asked():
    hold_us = 200
    r = _result("--hold-us", str(hold_us), "--seconds", "1", "--mbufs", "16384")
    assert r["hold_us"] == hold_us and r["tx_pps"] > 0
    # Little's law: a direction sending at tx_pps / 2 (the loop takes one
    # burst from each port in turn) with every frame held at least
    # hold_us holds on average at least rate x hold, and its maximum is at
    # least its average.
    assert r["held_max"] >= r["tx_pps"] / 2 * hold_us * 1e-6


@RUNS_DPDK
def test_without_a_hold_sends_each_burst_at_once():
    r = _result("--hold-us", "0", "--seconds", "1", "--mbufs", "16384")
    assert r["tx_pps"] > 0
    assert r["held_max"] <= BURST


@pytest.mark.parametrize("args, named", [
    (["--bogus"], "--bogus"),
    (["--hold-us", "soon"], "--hold-us"),
    (["--seconds", "-1"], "--seconds"),
    (["--mbufs", "12"], "--mbufs"),
    # strtod took these: a NaN hold went through an undefined cast into
    # the TSC, and "" held for 0 us
    (["--hold-us", "nan"], "--hold-us 'nan'"),
    (["--hold-us", ""], "--hold-us ''"),
    (["--seconds", "inf"], "--seconds 'inf'"),
    (["--mbufs", "4096x"], "--mbufs '4096x'"),
    (["--hold-us"], "--hold-us needs a value"),
])
def test_bad_words_are_named(args, named):
    r = _holdfwd(*args)
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    assert named in r.stderr
    assert r.stdout == ""
    # Refused before EAL starts: nothing of it to clean up.
    assert "EAL" not in r.stderr
