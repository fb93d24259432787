"""`linkemu run --ports IF_A,IF_B` on bed "lk": the daemon on two
interfaces that exist already (veths this test creates, standing for a
lab's NICs), its errors, and the interfaces left as they were."""

from __future__ import annotations

import contextlib
import json

import pytest

from kit import linkemu
from linkemu.bed import netns

from .apikit import leftovers, ping_rtts

pytestmark = pytest.mark.usefixtures("bed_session")
BED = "lk"
OTHER_BED = "lh"
PORTS = ("lk-p0", "lk-p1")
NS = ("lkuser1", "lkuser2")
ADDRS = ("198.18.11.1/24", "198.18.11.2/24")


@contextlib.contextmanager
def wired(offloads_off: bool = True, up: bool = True):
    """Two veths lk-p0/lk-p1 on the host, each leading to a namespace with
    an address: what a user's set-up looks like before linkemu runs."""
    try:
        for port, ns, addr in zip(PORTS, NS, ADDRS):
            netns.ns_add(ns)
            netns.veth_add(port, ns, "eth0")
            netns.offloads_off("eth0", ns)
            netns.addr_add("eth0", addr, ns)
            netns.link_up("eth0", ns)
            if offloads_off:
                netns.offloads_off(port)
            if up:
                netns.link_up(port)
        yield
    finally:
        for port, ns in zip(PORTS, NS):
            netns.link_del(port)
            netns.ns_del(ns)


def link_state(dev: str) -> tuple:
    info = netns.link_info(dev)
    return (tuple(sorted(info["flags"])), info["mtu"], info.get("xdp"))


def test_run_on_existing_interfaces_and_leave_them_as_they_were():
    with wired():
        before = {p: link_state(p) for p in PORTS}
        cp = linkemu("run", "--bed", BED, "--ports", ",".join(PORTS),
                     "--a2b", "delay 10ms", "--b2a", "delay 5ms", "--detach")
        assert cp.returncode == 0, cp.stderr
        try:
            st = json.loads(linkemu("testbed", "status", "--bed", BED, "--json").stdout)
            assert st["kind"] == "ports" and st["daemon"]["running"], st
            ping = netns.run(netns.ns_exec_argv(NS[0], ["ping", "-c", "5", "-i", "0.1",
                                                        ADDRS[1].split("/")[0]]), check=False)
            assert ping.returncode == 0, ping.stdout + ping.stderr
            rtts = ping_rtts(ping.stdout)
            assert len(rtts) == 5 and min(rtts) >= 15.0 - 0.05, rtts
            show = linkemu("ctl", "--bed", BED, "show", "--json")
            assert json.loads(show.stdout) == {"a2b": "delay 10ms", "b2a": "delay 5ms"}
        finally:
            stop = linkemu("stop", "--bed", BED, "--json")
        assert stop.returncode == 0, stop.stderr
        final = json.loads(stop.stdout)
        assert final["directions"]["a2b"]["tx"] >= 5 and final["conserved"] is True
        down = linkemu("testbed", "down", "--bed", BED)
        assert down.returncode == 0, down.stderr
        # The driver's promiscuous mode and XDP program are gone again.
        assert {p: link_state(p) for p in PORTS} == before
        assert all(netns.link_exists(p) for p in PORTS), "linkemu deleted a user's interface"
    assert leftovers() == []


def test_missing_down_and_offloaded_interfaces_are_named_with_the_fix():
    cp = linkemu("run", "--bed", BED, "--ports", "lk-p0,lk-nosuch")
    assert cp.returncode == 1
    assert "lk-p0: no such interface" in cp.stderr and "lk-nosuch: no such interface" \
        in cp.stderr, cp.stderr
    with wired(offloads_off=False, up=False):
        cp = linkemu("run", "--bed", BED, "--ports", ",".join(PORTS))
        assert cp.returncode == 1
        for p in PORTS:
            assert f"{p} is down: ip link set dev {p} up" in cp.stderr, cp.stderr
            assert f"{p} has offloads on (rx-checksumming, tx-checksumming" in cp.stderr
            assert f"ethtool -K {p} tx off rx off tso off gso off gro off" in cp.stderr
        # Nothing was changed to make it work: that is the user's call.
        assert netns.offloads_on(PORTS[0]) != []
    assert leftovers() == []


def test_ports_in_use_by_another_linkemud():
    with wired():
        cp = linkemu("run", "--bed", BED, "--ports", ",".join(PORTS), "--detach")
        assert cp.returncode == 0, cp.stderr
        try:
            cp = linkemu("run", "--bed", OTHER_BED, "--ports", f"{PORTS[1]},{PORTS[0]}")
            assert cp.returncode == 1
            pid = json.loads(linkemu("testbed", "status", "--bed", BED, "--json").stdout
                             )["daemon"]["pid"]
            for p in PORTS:
                assert f"{p} is in use by another linkemud (pid {pid})" in cp.stderr, cp.stderr
        finally:
            linkemu("stop", "--bed", BED)
            linkemu("testbed", "down", "--bed", BED)
            linkemu("testbed", "down", "--bed", OTHER_BED)
    assert leftovers() == []


@pytest.mark.parametrize("spec, message", [
    ("lk-p0", "give two ports"),
    ("lk-p0,lk-p0", "one port"),
    ("lk-p0,0000:00:01.0", "both ports must be interfaces or both PCI"),
    ("0000:00:05.0,0000:00:01.0", "side A (port 0) must be the lower address"),
])
def test_bad_port_lists_are_usage_errors(spec, message):
    cp = linkemu("run", "--bed", BED, "--ports", spec)
    assert cp.returncode == 2 and message in cp.stderr, cp.stderr


def test_pci_address_that_is_not_there():
    cp = linkemu("run", "--bed", BED, "--ports", "0000:fe:1f.6,0000:fe:1f.7")
    assert cp.returncode == 1
    assert "0000:fe:1f.6: no such PCI device" in cp.stderr, cp.stderr
    assert leftovers() == []
