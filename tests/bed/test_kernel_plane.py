"""linkemuk, the kernel-socket data plane, whatever LINKEMU_TEST_IO says:
it forwards through the same model with the same books, and refuses what
does not apply to it. (The whole suite runs on it with
LINKEMU_TEST_IO=kernel; these tests keep it covered in the default run.)"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time

import pytest

from kit import bed_usable, conservation, linkemu, need, suite_bed
from linkemu.bed import netns, paths
from linkemu.instruments import ping

BED = suite_bed(__file__)


def test_kernel_plane_forwards_with_conservation(bed_up, run_link):
    link = run_link("delay 2ms loss 10% seed 7", "delay 2ms", "--io", "kernel")
    r = ping.ping(bed_up, count=40, interval=0.01)
    final = link.stop()          # conservation, nothing in flight: kit.Link
    assert final["layout"].startswith("kernel"), final["layout"]
    a2b, b2a = final["directions"]["a2b"], final["directions"]["b2a"]
    assert a2b["rx"] >= 40 and b2a["tx"] == b2a["rx"], (a2b, b2a)
    assert a2b["dropped"].get("loss", 0) > 0, a2b["dropped"]
    # Every reply crossed 2 ms each way.
    assert r.received > 0 and min(r.rtts_ms) >= 4.0, r.rtts_ms
    # It slept between frames, its spin learned from its own wake-ups
    # (spin_learn.h) or still the starting one after too few of them.
    text = paths.daemon_log_file(BED).read_text()
    spin = re.findall(r"linkemuk: thread 0: --wait adaptive: spin ([\d.]+) us \(auto, (learned|not learned)", text)
    assert spin, "linkemuk said nothing of its spin:\n" + text[-2000:]
    us, how = spin[-1]
    assert 0 < float(us) <= 1024 + 5 and (how == "learned" or float(us) == 200.0), spin[-1]


def test_refusals_under_io_kernel_are_linkemuks(bed_up, run_link):
    """linkemuk serves linkemud's control protocol, which does not say who
    answers: the CLI names the daemon from its process, never a fixed word."""
    run_link("delay 1ms", "", "--io", "kernel")
    cp = linkemu("ctl", "--bed", BED, "set", "a2b", "dealy 5ms")
    assert cp.returncode == 1 and cp.stderr.startswith("linkemuk: set a2b: unknown word 'dealy'"), \
        cp.stderr
    cp = linkemu("run", "--bed", BED, "--io", "kernel", "--a2b", "dealy 5ms", "--detach")
    assert cp.returncode == 2 and cp.stderr.startswith("linkemuk: --a2b: unknown word 'dealy'"), \
        cp.stderr


def test_run_io_kernel_refuses_a_layout(bed_up):
    cp = linkemu("run", "--bed", BED, "--io", "kernel", "--layout", "pipeline", "--detach")
    assert cp.returncode == 2, cp.stderr
    assert "does not apply to --io kernel" in cp.stderr


def _linkemuk(binary, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=30)


def test_linkemuk_bad_input_exits_2_naming_it(linkemuk_bin):
    cp = _linkemuk(linkemuk_bin, "--iface-a", "x", "--iface-b", "y", "--a2b", "dealy 5ms")
    assert cp.returncode == 2 and "unknown word 'dealy'" in cp.stderr, cp.stderr
    cp = _linkemuk(linkemuk_bin, "--a2b", "delay 5ms")
    assert cp.returncode == 2 and "--iface-a and --iface-b are required" in cp.stderr, cp.stderr
    cp = _linkemuk(linkemuk_bin, "--iface-a", "x", "--iface-b", "y", "--layout", "pipeline")
    assert cp.returncode == 2 and "does not apply to linkemuk" in cp.stderr, cp.stderr
    # linkemud's own options: refused, not silently ignored
    for opt, why in (("--held-mbufs", "not mbufs"), ("--compact-after", "not mbufs"),
                     ("--no-compact", "not mbufs"), ("--idle-us", "sleeps as soon as a pass moves nothing")):
        cp = _linkemuk(linkemuk_bin, "--iface-a", "x", "--iface-b", "y", opt, "100")
        assert cp.returncode == 2 and f"{opt} does not apply to linkemuk" in cp.stderr and why in cp.stderr, \
            (opt, cp.stderr)
    cp = _linkemuk(linkemuk_bin, "--iface-a", "x", "--iface-b", "y", "--spin-us", "soon")
    assert cp.returncode == 2 and "--spin-us: 'soon'" in cp.stderr and "(or auto)" in cp.stderr, cp.stderr
    # one interface on both sides would reflect every frame back, twice
    cp = _linkemuk(linkemuk_bin, "--iface-a", "lq-nosuch0", "--iface-b", "lq-nosuch0", "--no-control")
    assert cp.returncode == 2 and "name the same interface" in cp.stderr, cp.stderr
    cp = _linkemuk(linkemuk_bin, "--check", "delay 5ms loss 1%")
    assert cp.returncode == 0 and cp.stdout.strip() == "delay 5ms loss 1%", cp


def test_linkemuk_missing_interface_exits_1_naming_it(linkemuk_bin):
    cp = _linkemuk(linkemuk_bin, "--iface-a", "lq-nosuch0", "--iface-b", "lq-nosuch1", "--no-control")
    assert cp.returncode == 1, cp
    assert "interface 'lq-nosuch0'" in cp.stderr, cp.stderr


# linkemuk losing an interface while it runs, on veths of its own (not the
# suite's bed, which the test would break): namespace NS_K holds linkemuk
# and its two interfaces kA, kB; their peers are 198.18.90.1 in NS_A and
# 198.18.90.2 in NS_B.
NS_K, NS_A, NS_B = "lkgone-k", "lkgone-a", "lkgone-b"


@pytest.fixture
def gone_bed():
    need(*bed_usable())
    for ns in (NS_K, NS_A, NS_B):
        netns.ns_del(ns)
    try:
        for ns in (NS_K, NS_A, NS_B):
            netns.ns_add(ns)
        for side, ns, addr in (("A", NS_A, "198.18.90.1/24"), ("B", NS_B, "198.18.90.2/24")):
            netns.run(["ip", "-n", NS_K, "link", "add", f"k{side}", "type", "veth", "peer", "name", "p",
                       "netns", ns])
            netns.run(["ip", "-n", ns, "addr", "add", addr, "dev", "p"])
            for n, dev in ((ns, "p"), (NS_K, f"k{side}")):
                netns.run(["ip", "netns", "exec", n, "ethtool", "-K", dev, *sum(
                    ([o, "off"] for o in netns.OFFLOADS_OFF), [])], check=False)
                netns.run(["ip", "-n", n, "link", "set", dev, "up"])
        yield
    finally:
        for ns in (NS_K, NS_A, NS_B):
            netns.ns_del(ns)


def _start_linkemuk(binary, tmp_path, a2b: str) -> subprocess.Popen:
    stats = tmp_path / "final.json"
    p = subprocess.Popen(["ip", "netns", "exec", NS_K, str(binary), "--iface-a", "kA", "--iface-b", "kB",
                          "--no-control", "--a2b", a2b, "--b2a", "delay 1ms", "--json", "--stats-file",
                          str(stats)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()          # `ip netns exec` execs it: p.pid is linkemuk's
    assert line.startswith("linkemud: ready"), (line, p.stderr.read() if p.poll() is not None else "")
    return p


def _cpu_s(pid: int) -> float:
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def _ping(count: int, interval: float = 0.01) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", "netns", "exec", NS_A, "ping", "-q", "-n", "-c", str(count), "-i", str(interval),
                           "-W", "1", "198.18.90.2"], capture_output=True, text=True, timeout=30)


def _ends_by_itself(p: subprocess.Popen, within_s: float) -> tuple[bool, float, str]:
    """(ended, seconds linkemuk spent on a CPU meanwhile, its stderr)."""
    cpu0 = _cpu_s(p.pid)
    try:
        p.wait(timeout=within_s)
        return True, 0.0, p.stderr.read()
    except subprocess.TimeoutExpired:
        cpu = _cpu_s(p.pid) - cpu0
        p.send_signal(2)
        p.wait(timeout=10)
        return False, cpu, p.stderr.read()


def _final(tmp_path) -> dict:
    return json.loads((tmp_path / "final.json").read_text())


def test_linkemuk_stops_when_its_interface_is_deleted(gone_bed, linkemuk_bin, tmp_path):
    # a2b holds every frame for 5 s: some are held when kB goes
    p = _start_linkemuk(linkemuk_bin, tmp_path, "delay 5s")
    try:
        _ping(20)
        netns.run(["ip", "-n", NS_K, "link", "del", "kB"])
        t0 = time.monotonic()
        ended, cpu, err = _ends_by_itself(p, 3.0)
        took = time.monotonic() - t0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert ended, f"linkemuk still ran 3 s after its interface kB was deleted (used {cpu:.2f} s of CPU " \
                  f"meanwhile); stderr:\n{err}"
    assert p.returncode not in (0, None), (p.returncode, err)
    assert re.search(r"linkemuk: interface 'kB'.*(deleted|gone)", err), err
    assert took < 2.0, took
    # Its final report still counts every frame: those held (the pings, or
    # the ARP requests before them: nothing answered in 5 s) are shutdown drops.
    final = _final(tmp_path)
    assert conservation(final) == [], conservation(final)
    a2b = final["directions"]["a2b"]
    assert a2b["rx"] > 0 and a2b["tx"] == 0 and a2b["dropped"]["shutdown"] == a2b["rx"], \
        {k: a2b[k] for k in ("rx", "tx", "dropped", "in_flight")}


def test_linkemuk_waits_while_its_interface_is_down(gone_bed, linkemuk_bin, tmp_path):
    """Down is not gone: linkemuk waits (without burning a CPU), forwards
    again once the interface is up, the same when the interface's peer is
    down, and still notices if it is deleted while down (the kernel
    reports no second error then). Each change is told on stderr, once."""
    p = _start_linkemuk(linkemuk_bin, tmp_path, "delay 1ms")
    try:
        assert _ping(5).returncode == 0
        netns.run(["ip", "-n", NS_K, "link", "set", "kB", "down"])
        cpu0, t0 = _cpu_s(p.pid), time.monotonic()
        was_down = -t0
        time.sleep(1.0)
        assert p.poll() is None, "linkemuk stopped when kB went down: " + p.stderr.read()
        busy = (_cpu_s(p.pid) - cpu0) / (time.monotonic() - t0)
        assert busy < 0.5, f"linkemuk used {busy:.0%} of a CPU while kB was down"
        netns.run(["ip", "-n", NS_K, "link", "set", "kB", "up"])
        was_down += time.monotonic()
        time.sleep(0.2)
        assert _ping(5).returncode == 0, "no forwarding after kB came back up"
        # kB's peer down: the kernel refuses every send to kB (ENOBUFS)
        # while frames for it keep arriving; linkemuk retries, not spins.
        netns.run(["ip", "-n", NS_B, "link", "set", "p", "down"])
        pings = subprocess.Popen(["ip", "netns", "exec", NS_A, "ping", "-q", "-c", "150", "-i", "0.01",
                                  "198.18.90.2"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(0.3)
            cpu0, t0 = _cpu_s(p.pid), time.monotonic()
            time.sleep(1.0)
            busy = (_cpu_s(p.pid) - cpu0) / (time.monotonic() - t0)
        finally:
            pings.kill()
            pings.wait()
        assert busy < 0.5, f"linkemuk used {busy:.0%} of a CPU while kB's peer was down"
        netns.run(["ip", "-n", NS_B, "link", "set", "p", "up"])
        time.sleep(0.2)
        assert _ping(5).returncode == 0, "no forwarding after kB's peer came back up"
        netns.run(["ip", "-n", NS_K, "link", "set", "kB", "down"])
        time.sleep(0.2)
        netns.run(["ip", "-n", NS_K, "link", "del", "kB"])
        ended, cpu, err = _ends_by_itself(p, 3.0)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert ended, f"linkemuk still ran 3 s after kB, down, was deleted; stderr:\n{err}"
    assert p.returncode not in (0, None) and "interface 'kB'" in err, (p.returncode, err)
    assert conservation(_final(tmp_path)) == []
    # One line per change of kB's state, in order, with how long it was
    # not up (seen within 100 ms of each change); nothing about kA.
    told = [ln for ln in err.splitlines() if re.match(r"linkemuk: interface '(kA|kB)' (is|has)", ln)]
    want = [r"'kB' is down", r"'kB' is up again \(down for (\d+\.\d) s\)", r"'kB' has no carrier",
            r"'kB' is up again \(down for (\d+\.\d) s\)", r"'kB' is down"]
    assert len(told) == len(want) and all(re.search(w, t) for w, t in zip(want, told)), err
    assert abs(float(re.search(want[1], told[1]).group(1)) - was_down) <= 0.25, (told[1], was_down)
