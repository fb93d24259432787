"""linkemuk, the kernel-socket data plane, whatever LINKEMU_TEST_IO says:
it forwards through the same model with the same books, and refuses what
does not apply to it. (The whole suite runs on it with
LINKEMU_TEST_IO=kernel; these tests keep it covered in the default run.)"""

from __future__ import annotations

import re
import subprocess

from kit import linkemu, suite_bed
from linkemu.bed import paths
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
