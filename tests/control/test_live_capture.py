"""`linkemu capture` against a real linkemud on bed "lc": each capture's
drop counts are its own, -w - streams pcapng a reader takes, and a daemon
that exits mid-capture is said."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from kit import dpdk_only, suite_bed
from kit.cli import cli_env
from linkemu.bed import netns
from linkemu.bed.cpus import tool_cpus
from linkemu.daemon import capture

BED = suite_bed(__file__)
LINKEMU = [sys.executable, "-m", "linkemu"]


def _flood(bed) -> subprocess.Popen:
    """ping -f src -> dst: as fast as the echo replies come back, until killed."""
    return subprocess.Popen(netns.ns_exec_argv(bed.ns_src, ["ping", "-n", "-q", "-f",
                                                            bed.addr_dst], cpus=tool_cpus()),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _our_dumpcaps() -> list[int]:
    """The dpdk-dumpcaps this process started (capture runs them as children)."""
    me = os.getpid()
    found = []
    for task in Path(f"/proc/{me}/task").iterdir():
        for pid in (task / "children").read_text().split():
            if Path(f"/proc/{pid}/comm").read_text().strip() == "dpdk-dumpcap":
                found.append(int(pid))
    return found


def _missing_seqs(pc) -> int:
    """Echo requests absent between the first and last one in the file
    (sequence numbers are 16 bits: they wrap under ping -f)."""
    seqs = [capture.ipv4_info(p.data)["icmp_seq"] for p in pc.packets]
    return sum((b - a) % 65536 - 1 for a, b in zip(seqs, seqs[1:]))


def test_a_second_capture_reports_only_its_own_drops(run_link, bed_up, tmp_path):
    """rte_pdump keeps per-port received/dropped counts in shared memory
    for the daemon's life. If a capture started from the last one's counts,
    the second capture here would report the first one's drops as gaps.
    Measured on DPDK 22.11.11 (2026-12-01): the first 40299 dropped, the
    second 0 of 29767; received 145058, then 59536 (its own frames)."""
    dpdk_only("capture is dpdk-dumpcap attached to linkemud's rte_pdump")
    run_link("", "")
    flood = _flood(bed_up)
    try:
        time.sleep(0.5)

        def stall():
            # dumpcap stops reading its ring for 1.5 s: at ping -f rates
            # (>5000 frames/s each way) its ring (2048) overflows.
            pids = _our_dumpcaps()
            assert pids
            for pid in pids:
                os.kill(pid, signal.SIGSTOP)
            threading.Timer(1.5, lambda: [os.kill(p, signal.SIGCONT) for p in pids]).start()

        first = capture.capture(bed_up, tmp_path / "1.pcapng", duration=3.0, on_ready=stall)
        lost_first = sum(s["dropped"] for s in first.dumpcap_stats)
        assert lost_first > 0, first.dumpcap_stats          # the premise: it did drop
        second = capture.capture(bed_up, tmp_path / "2.pcapng", duration=1.0)
    finally:
        flood.kill()
        flood.wait()
    pc = capture.read_pcapng(tmp_path / "2.pcapng")
    assert len(pc.packets) > 1000, len(pc.packets)
    lost = sum(s["dropped"] for s in second.dumpcap_stats)
    # Reported drops are at most the gaps in its own file.
    assert lost <= _missing_seqs(pc), (second.dumpcap_stats, _missing_seqs(pc))
    # received counts only its own: every frame of its file, the replies
    # its filter turned away (one per request, give or take those in
    # flight at either end), and what it lost: far below the first's.
    received = sum(s["received"] for s in second.dumpcap_stats)
    assert received <= 2 * (second.written + lost) + 64, (received, second.written)
    assert received < sum(s["received"] for s in first.dumpcap_stats)


def test_w_dash_streams_pcapng_into_a_reader(run_link, bed_up, tmp_path):
    dpdk_only("capture is dpdk-dumpcap attached to linkemud's rte_pdump")
    run_link("", "")
    flood = _flood(bed_up)
    try:
        time.sleep(0.5)
        cap = subprocess.Popen(LINKEMU + ["capture", "--bed", BED, "-c", "20", "--duration",
                                          "20", "-w", "-"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, cwd=tmp_path, env=cli_env(None))
        reader = subprocess.run(["tcpdump", "-n", "-r", "-"], stdin=cap.stdout,
                                capture_output=True, text=True, timeout=60)
        cap.stdout.close()
        _out, err = cap.communicate(timeout=60)
    finally:
        flood.kill()
        flood.wait()
    assert cap.returncode == 0, err
    lines = reader.stdout.splitlines()
    assert len(lines) == 20 and all("ICMP echo request" in l for l in lines), reader
    assert list(tmp_path.iterdir()) == []                   # no file named '-'


def test_a_daemon_that_exits_mid_capture_is_said(run_link, bed_up, tmp_path):
    dpdk_only("capture is dpdk-dumpcap attached to linkemud's rte_pdump")
    link = run_link("", "")
    flood = _flood(bed_up)
    out = tmp_path / "x.pcapng"
    try:
        cap = subprocess.Popen(LINKEMU + ["capture", "--bed", BED, "--port", "both",
                                          "--duration", "30", "-w", str(out), "--json"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=cli_env(None))
        # dumpcap writes port 1's file in capture's private directory
        # beside the output (.x.pcapng.RANDOM/port1.pcapng) once it runs.
        deadline = time.monotonic() + 30
        while not list(tmp_path.glob(".x.pcapng.*/port1.pcapng")):
            assert time.monotonic() < deadline, "the capture did not start"
            time.sleep(0.05)
        time.sleep(1.0)
        link.stop_unchecked()
        t0 = time.monotonic()
        stdout, err = cap.communicate(timeout=30)
        took = time.monotonic() - t0
    finally:
        flood.kill()
        flood.wait()
    assert cap.returncode == 1, err
    assert "linkemud exited during the capture" in err, err
    res = json.loads(stdout)
    assert res["daemon_exited"] and res["packets"] > 0
    assert len(capture.read_pcapng(out).packets) == res["packets"]
    assert took < 10, took              # not the 30 s asked for
