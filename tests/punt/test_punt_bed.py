"""Punted classes on the bed: the data plane hands a class's frames to an
ordinary Linux process (punt_echo) and takes back what it returns."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from linkemu.cli.punt import echo_command
from linkemu.instruments.owd import ProbeSpec, probe
from linkemu.instruments.ping import ping

# Two processes per test at most; names apart from other suites' (bed lw).
FIFO = "/tmp/linkemu-lw-punt"
SHM = "linkemu-lw-punt"
N_STALL = 6000
CHANNEL = {"fifo": f"fifo {FIFO}", "shm": f"shm {SHM}"}


def udp_class(transport: str, port: int, link: str = "") -> str:
    """a2b: UDP to `port` punted, everything else on the default link."""
    return f"; class ctl match proto udp dport {port} : punt {CHANNEL[transport]} {link}".rstrip()


class Echo:
    """A punt_echo of the test's own (to stop or kill it)."""

    def __init__(self, transport: str, *extra: str):
        name = FIFO if transport == "fifo" else SHM
        self.p = subprocess.Popen(echo_command(transport, name, wait_s=20) + list(extra),
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)

    def stop(self) -> str:
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGCONT)
            self.p.terminate()
        _, err = self.p.communicate(timeout=10)
        return err


def punt_of(d: dict) -> dict:
    [p] = d["punt"]
    return p


def wait_for(pred, what: str, timeout: float = 5.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def attached(link) -> None:
    """The daemon checks for its process every 10 ms: wait until it has."""
    with link.client() as ctl:
        wait_for(lambda: punt_of(ctl.stats()["directions"]["a2b"])["up"], "the process to attach")


def books(d: dict) -> None:
    """The punt counts against the direction: every frame the process got
    is answered, dropped by it, lost with it or still held; the class's
    link took in what came back (returned + injected, less what could
    not be made into a frame)."""
    p = punt_of(d)
    assert d["dropped"]["punt_full"] == p["punt_full"]
    assert d["dropped"]["punt_down"] == p["punt_down"]
    assert d["dropped"]["punt_dropped"] == p["punt_dropped"]
    assert d["injected"] == p["injected"]
    assert p["held"] == 0, p
    # sent = returned + dropped by it + lost with it + held at shutdown
    lost_or_stopped = p["sent"] - p["returned"] - p["punt_dropped"]
    assert 0 <= lost_or_stopped <= p["punt_down"] + d["dropped"]["shutdown"], p
    [ctl] = [c for c in d["classes"] if c["name"] == "ctl"]
    assert ctl["rx"] == p["returned"] + p["injected"], (ctl, p)


@pytest.mark.parametrize("transport,io", [("fifo", "dpdk"), ("shm", "dpdk"), ("fifo", "kernel")])
def test_round_trip_ping_and_udp(run_link, bed_up, transport, io):
    # Every IPv4 frame of both directions through a process (a2b over
    # `transport`, b2a over the other), and the class's own delay after
    # it: ping's replies come back, a UDP probe arrives whole. The kernel
    # data plane (linkemuk) shares the channel code.
    other = "shm" if transport == "fifo" else "fifo"
    a2b = f"; class ctl match ether ipv4 : punt {CHANNEL[transport]} delay 5ms"
    b2a = f"; class ctl match ether ipv4 : punt {CHANNEL[other]}-r"
    link = run_link(a2b, b2a, "--punt-echo", "--io", io)
    attached(link)
    pr = ping(bed_up, count=10, interval=0.05, deadline_s=10)
    assert pr.received == 10, pr
    # the class's link after the process: 5 ms each way at least
    assert min(pr.rtts_ms) >= 5.0, pr.rtts_ms
    r = probe(bed_up, ProbeSpec(ip_len=200, pps=2000.0, count=1000, port=9400))
    assert r["receiver"]["received"] == 1000, r["receiver"]
    final = link.stop()          # the kit checks rx + dup + injected == tx + dropped + in flight
    for name in ("a2b", "b2a"):
        d = final["directions"][name]
        books(d)
        p = punt_of(d)
        assert p["transport"] == (transport if name == "a2b" else other)
        assert p["punt_full"] == p["punt_down"] == p["punt_dropped"] == 0, p
        assert p["returned"] == p["sent"] >= (1010 if name == "a2b" else 10), p


@pytest.mark.parametrize("transport", ["fifo", "shm"])
def test_drops_and_injections_are_counted(run_link, bed_up, transport):
    # The process drops every 10th frame and adds a copy of every 7th:
    # exactly 100 punt_dropped and 128 injected of 1000 (multiples of 7
    # up to 1000: 142, less the 14 that are also multiples of 10).
    link = run_link(udp_class(transport, 9401), "")
    echo = Echo(transport, "--drop-every", "10", "--inject-every", "7")
    try:
        attached(link)
        r = probe(bed_up, ProbeSpec(ip_len=200, pps=2000.0, count=1000, port=9401))
    finally:
        final = link.stop()
        log = echo.stop()
    d = final["directions"]["a2b"]
    p = punt_of(d)
    assert p["sent"] == 1000 and p["punt_full"] == 0, (p, log)
    assert p["punt_dropped"] == 100 and d["dropped"]["punt_dropped"] == 100, p
    assert p["injected"] == 128 and d["injected"] == 128, p
    assert p["returned"] == 900, p
    books(d)
    rcv = r["receiver"]
    assert rcv["received"] == 900 and rcv["duplicates"] == 128, rcv
    assert "frames in 1000, returned 900, dropped 100, injected 128" in log, log


@pytest.mark.parametrize("transport", ["fifo", "shm"])
def test_stalled_process_fills_its_channel(run_link, bed_up, transport):
    # A stopped process (SIGSTOP) is alive, so nothing is punt_down: its
    # channel fills and the rest is punt_full, while the default link
    # keeps forwarding; once it runs again it answers what it holds.
    link = run_link(udp_class(transport, 9402), "")
    echo = Echo(transport)
    try:
        attached(link)
        os.kill(echo.p.pid, signal.SIGSTOP)
        # 6000 frames of 214 bytes: more than the pipe (256 KiB, ~1100
        # records) or the ring (4096 slots) holds
        probe(bed_up, ProbeSpec(ip_len=200, pps=20000.0, count=N_STALL, port=9402, idle_s=0.5))
        pr = ping(bed_up, count=5, interval=0.05, deadline_s=10)
        assert pr.received == 5, "the default link stopped forwarding"
        with link.client() as ctl:
            d = ctl.stats()["directions"]["a2b"]
        p = punt_of(d)
        assert p["up"] and p["punt_full"] > 0 and p["punt_down"] == 0, p
        # Every frame the class took was sent or found the channel full:
        # the direction's frames less the default link's (a loaded
        # machine may lose a few probe frames before linkemud sees them).
        [dflt] = [c for c in d["classes"] if c["name"] == "default"]
        taken = d["rx"] - dflt["rx"] - d["dropped"]["malformed"]
        assert p["held"] > 0 and p["sent"] + p["punt_full"] == taken, (p, taken)
        assert taken >= 0.9 * N_STALL, (taken, d)
        os.kill(echo.p.pid, signal.SIGCONT)
        with link.client() as ctl:
            wait_for(lambda: punt_of(ctl.stats()["directions"]["a2b"])["held"] == 0, "the answers")
    finally:
        final = link.stop()
        echo.stop()
    d = final["directions"]["a2b"]
    books(d)
    p = punt_of(d)
    assert p["returned"] == p["sent"] and p["punt_full"] > 0, p


@pytest.mark.parametrize("transport", ["fifo", "shm"])
def test_killed_process_is_reported_and_replaced(run_link, bed_up, transport):
    # kill -9: the daemon notices (EPIPE/POLLERR on the FIFO, the free
    # lock on the segment), says so in its log and stats, counts the
    # class's frames punt_down, and forwards everything else. A new
    # process attaches and the class flows again.
    link = run_link(udp_class(transport, 9403), "")
    echo = Echo(transport)
    try:
        attached(link)
        probe(bed_up, ProbeSpec(ip_len=200, pps=2000.0, count=200, port=9403))
        echo.p.kill()
        echo.p.wait()
        with link.client() as ctl:
            wait_for(lambda: not punt_of(ctl.stats()["directions"]["a2b"])["up"], "the loss to be seen")
            p = punt_of(ctl.stats()["directions"]["a2b"])
        assert p["peers_lost"] == 1 and p["returned"] == 200, p
        r = probe(bed_up, ProbeSpec(ip_len=200, pps=2000.0, count=100, port=9403, idle_s=0.3))
        assert r["receiver"]["received"] == 0
        pr = ping(bed_up, count=5, interval=0.05, deadline_s=10)
        assert pr.received == 5, "the default link stopped forwarding"
        with link.client() as ctl:
            p = punt_of(ctl.stats()["directions"]["a2b"])
        assert p["punt_down"] >= 100, p
        echo = Echo(transport)
        attached(link)
        r = probe(bed_up, ProbeSpec(ip_len=200, pps=2000.0, count=100, port=9403))
        assert r["receiver"]["received"] == 100, r["receiver"]
    finally:
        final = link.stop()
        echo.stop()
    d = final["directions"]["a2b"]
    books(d)
    assert punt_of(d)["peers_lost"] == 1
    from linkemu.bed import paths
    log = paths.daemon_log_file(bed_up.name).read_text(errors="replace")
    assert "process went away" in log and "process attached" in log, log[-2000:]


@pytest.mark.parametrize("transport", ["fifo", "shm"])
def test_python_example_round_trips(run_link, bed_up, transport):
    # docs/punt.md's Python example is a working peer over both transports.
    import sys
    from linkemu.bed.paths import repo_root
    link = run_link(udp_class(transport, 9404, "delay 1ms"), "")
    name = FIFO if transport == "fifo" else SHM
    p = subprocess.Popen([sys.executable, str(repo_root() / "examples" / "punt_echo.py"),
                          f"--{transport}", name], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        attached(link)
        r = probe(bed_up, ProbeSpec(ip_len=300, pps=500.0, count=200, port=9404))
    finally:
        final = link.stop()
        try:
            _, err = p.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
    assert r["receiver"]["received"] == 200, (r["receiver"], err)
    d = final["directions"]["a2b"]
    books(d)
    assert punt_of(d)["returned"] == punt_of(d)["sent"] == 200, punt_of(d)
    assert p.returncode == 0 and "200 frames" in err, err


def test_live_set_keeps_or_refuses_channels(run_link, bed_up):
    # `set` may change a punted class's link (its channel stays); a
    # channel not opened at start is refused with the reason, and the
    # running configuration is unchanged.
    from linkemu.daemon.control import ControlError
    link = run_link(udp_class("fifo", 9405), "")
    echo = Echo("fifo")
    try:
        attached(link)
        with link.client() as ctl:
            ctl.set("a2b", udp_class("fifo", 9405, "delay 3ms"))
            with pytest.raises(ControlError, match="no such channel was opened at start"):
                ctl.set("a2b", udp_class("shm", 9405))
            assert ctl.show()["a2b"].endswith(f"punt fifo {FIFO} delay 3ms")
        r = probe(bed_up, ProbeSpec(ip_len=200, pps=1000.0, count=100, port=9405))
    finally:
        final = link.stop()
        echo.stop()
    assert r["receiver"]["received"] == 100
    assert r["receiver"]["delay_ns"]["min"] >= 3_000_000, r["receiver"]["delay_ns"]
    books(final["directions"]["a2b"])
