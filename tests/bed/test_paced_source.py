"""linkemud's paced source (--paced-source, src/dataplane/paced_source.h).

bench/forwarding_linerate.py claims a row's rate on time from it, so what
it must do is what a paced wire into a NIC does: deliver exactly the rate
asked, 64-byte frames, into a ring of --paced-ring descriptors; count what
found the ring full as missed (also the port's imissed), record how long
each frame waited, and refuse ports it would not replace. The frames it
delivers go through the same books as any port's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from kit.vdev import clean_run_dir, run_on_vdevs

pytestmark = pytest.mark.needs_root

PACED_PORTS = ["net_null0,no-rx=1", "net_null1,no-rx=1"]


def _run(linkemud_bin, tmp_path, options, seconds, during=None):
    stats = tmp_path / "final.json"
    rc, err = run_on_vdevs(linkemud_bin, PACED_PORTS,
                           [*options, "--seed", "1", "--no-control", "--stats-file", str(stats)],
                           seconds, name="paced", during=during)
    assert rc == 0, err
    return json.loads(stats.read_text())


def test_the_source_delivers_its_rate_and_every_frame_is_accounted(linkemud_bin, tmp_path: Path):
    pps = 200_000
    final = _run(linkemud_bin, tmp_path, ["--a2b", "delay 1ms limit 10000", "--b2a", "delay 1ms limit 10000",
                                          "--paced-source", "200k", "--paced-ring", "4096"], 1.0)
    assert final["conserved"]
    for name, d in final["directions"].items():
        src = d["paced_source"]
        assert src["pps"] == pps and src["ring"] == 4096
        arrived = src["delivered"] + src["missed"]
        # The wire starts at the lcore's first poll, just after "ready"; the
        # daemon ran 1 s after that and at most uptime_s in all. Frame k
        # arrives at k/pps, so by time t exactly floor(t x pps) + 1 have.
        assert 0.95 * pps <= arrived <= pps * final["uptime_s"] + 1, (name, src, final["uptime_s"])
        # Every delivered frame reached linkemud, as 64 bytes, and what
        # found the ring full is the port's imissed: lost before linkemud.
        assert d["rx"] == src["delivered"] and d["rx_bytes"] == 64 * d["rx"], (name, d["rx"], src)
        assert d["before_rx"]["imissed"] == src["missed"], name
        assert src["wait_ns"]["count"] == src["delivered"], name
        assert d["emulation_error_ns"]["count"] == d["tx"], name


def test_a_stall_longer_than_the_ring_counts_what_it_could_not_hold(linkemud_bin, tmp_path: Path):
    pps, ring, stall_s = 100_000, 1000, 0.1

    def stall(pid):
        time.sleep(0.2)  # the wire runs: its first poll has set its start
        os.kill(pid, signal.SIGSTOP)
        time.sleep(stall_s)
        os.kill(pid, signal.SIGCONT)

    final = _run(linkemud_bin, tmp_path, ["--a2b", "delay 1ms", "--paced-source", "100k", "--paced-ring",
                                          str(ring)], 0.3, during=stall)
    assert final["conserved"]
    for name, d in final["directions"].items():
        src = d["paced_source"]
        # At least stall_s x pps frames arrived while no poll ran; the ring
        # held `ring` of them, the rest are missed, and counted so.
        assert src["missed"] >= stall_s * pps - ring, (name, src)
        assert d["before_rx"]["imissed"] == src["missed"], name
        # The ring keeps the newest `ring` frames: the oldest of them had
        # waited (ring - 1)/pps by the first poll after the stall.
        assert src["wait_ns"]["max"] >= (ring - 1) / pps * 1e9 * 0.99, (name, src["wait_ns"])
        assert d["rx"] == src["delivered"], name


def _refused(linkemud_bin, vdevs, options):
    prefix = f"pacedfail-{uuid.uuid4().hex[:8]}"
    argv = [str(linkemud_bin), "-l", "0", "--no-pci", "--in-memory", "--log-level=lib.eal:error",
            f"--file-prefix={prefix}", *(f"--vdev={v}" for v in vdevs), "--", "--no-control", *options]
    try:
        cp = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    finally:
        clean_run_dir(prefix)
    assert cp.returncode == 2, cp.stderr
    return cp.stderr


def test_a_port_it_would_not_replace_is_refused_by_name(linkemud_bin):
    # net_null without no-rx=1 floods every poll: paced frames on top would
    # be no paced input at all.
    err = _refused(linkemud_bin, ["net_null0", "net_null1,no-rx=1"], ["--paced-source", "1M"])
    assert "port 0 (net_null) receives frames of its own: give it no-rx=1" in err, err
    # Another driver receives real frames: the source replaces no port's receive.
    err = _refused(linkemud_bin, ["net_null0,no-rx=1", "net_ring0"], ["--paced-source", "1M"])
    assert "port 1 is net_ring, not net_null" in err, err


@pytest.mark.parametrize("words,says", [
    (["--paced-source", "fast"], "--paced-source: 'fast' is not a rate in frames per second"),
    (["--paced-source", "0"], "--paced-source: '0' is not a rate"),
    (["--paced-source", "2G"], "--paced-source: '2G' is not a rate"),
    (["--paced-source", "1Mx"], "--paced-source: '1Mx' is not a rate"),
    (["--paced-ring", "64"], "--paced-ring: only with --paced-source"),
    (["--paced-source", "1M", "--paced-ring", "0"], "--paced-ring: '0'"),
])
def test_bad_words_are_refused_by_name(linkemud_bin, words, says):
    err = _refused(linkemud_bin, PACED_PORTS, words)
    assert says in err, err


def test_the_kernel_plane_says_it_has_no_paced_source(linkemuk_bin):
    cp = subprocess.run([str(linkemuk_bin), "--iface-a", "x", "--iface-b", "y", "--paced-source", "1M"],
                        capture_output=True, text=True, timeout=30)
    assert cp.returncode == 2 and "--paced-source: only linkemud has it" in cp.stderr, cp.stderr
