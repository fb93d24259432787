"""`linkemu testbed up --between NS_A NS_B` on bed "lh": a link between
namespaces linkemu did not create (by name, and by a process's pid as for
a container), traffic through it, and `down` leaving them as they were."""

from __future__ import annotations

import contextlib
import json
import subprocess
import time

import pytest

from kit import linkemu
from linkemu import api
from linkemu.bed import netns
from linkemu.bed.nsref import NsRef

from .apikit import diff, leftovers, ping_rtts, snapshot

pytestmark = pytest.mark.usefixtures("bed_session")
BED = "lh"
NS1, NS2 = "lhuser1", "lhuser2"
CLOCK_TOLERANCE_MS = 0.05     # see test_shell.py


def _furnish(ref: NsRef) -> None:
    """Make a namespace look lived-in: lo up, an interface of its own with
    an address and a route, a sysctl changed from its default."""
    ip = ref.ip_argv()
    netns.run(ip + ["link", "set", "lo", "up"])
    netns.run(ip + ["link", "add", "own0", "type", "veth", "peer", "name", "own1"])
    netns.run(ip + ["link", "set", "own1", "up"])
    netns.run(ip + ["addr", "add", "198.18.200.1/24", "dev", "own0"])
    netns.run(ip + ["link", "set", "own0", "up"])
    netns.run(ip + ["route", "add", "198.18.201.0/24", "via", "198.18.200.2"])
    netns.run(ref.exec_argv(["sysctl", "-q", "-w", "net.ipv4.ip_forward=1"]))
    # IPv6 duplicate address detection settles the link-local addresses
    # (and their routes) a moment after `up`: wait, or the "before"
    # snapshot would catch the namespace mid-change.
    deadline = time.monotonic() + 10
    while netns.run(ip + ["-6", "addr", "show", "tentative"]).stdout.strip():
        assert time.monotonic() < deadline, "IPv6 DAD did not settle in 10 s"
        time.sleep(0.05)


@contextlib.contextmanager
def user_namespace(name: str):
    netns.ns_add(name)
    try:
        _furnish(NsRef("name", name))
        yield NsRef("name", name)
    finally:
        netns.ns_del(name)


@contextlib.contextmanager
def container():
    """A process in a network namespace with no name, as a container is."""
    p = subprocess.Popen(["unshare", "--net", "sleep", "600"])
    try:
        ref = NsRef("pid", str(p.pid))
        for _ in range(100):
            if ref.identity() != NsRef.root().identity():
                break
            time.sleep(0.02)
        _furnish(ref)
        yield ref
    finally:
        p.kill()
        p.wait()


def test_between_named_namespaces_and_down_leaves_them_as_they_were():
    with user_namespace(NS1) as a, user_namespace(NS2) as b:
        before = {a: snapshot(a), b: snapshot(b)}
        cp = linkemu("testbed", "up", "--bed", BED, "--between", NS1, NS2,
                     "--addr-a", "198.18.9.1/24", "--addr-b", "198.18.9.2/24", "--json")
        try:
            assert cp.returncode == 0, cp.stderr
            st = json.loads(cp.stdout)
            assert st["kind"] == "between" and st["up"] is True
            # Offloads off on all four ends; IPv6 off only on our device.
            for dev, ref in (("lh-a", None), ("lh-b", None), ("linkemu0", a), ("linkemu0", b)):
                assert netns.offloads_on(dev, ref) == [], (dev, str(ref))
            cp = linkemu("run", "--bed", BED, "--a2b", "delay 10ms", "--b2a", "delay 10ms",
                         "--detach")
            assert cp.returncode == 0, cp.stderr
            ping = linkemu("exec", "src", "--bed", BED, "--", "ping", "-c", "5", "-i", "0.1",
                           "198.18.9.2")
            assert ping.returncode == 0, ping.stdout + ping.stderr
            rtts = ping_rtts(ping.stdout)
            assert len(rtts) == 5 and min(rtts) >= 20.0 - CLOCK_TOLERANCE_MS, rtts
            stop = linkemu("stop", "--bed", BED, "--json")
            assert stop.returncode == 0, stop.stderr
            final = json.loads(stop.stdout)
            assert final["directions"]["a2b"]["tx"] >= 5 and final["conserved"] is True
        finally:
            down = linkemu("testbed", "down", "--bed", BED)
        assert down.returncode == 0, down.stderr
        assert netns.ns_exists(NS1) and netns.ns_exists(NS2), "down removed a user's namespace"
        for ref in (a, b):
            assert diff(before[ref], snapshot(ref)) == [], str(ref)
    assert leftovers() == []


def test_between_a_process_namespace_through_the_api():
    """A container's namespace by pid, driven from Python; the other side
    a named namespace. Without --addr the veths carry no address."""
    with user_namespace(NS1) as a, container() as c:
        before = {a: snapshot(a), c: snapshot(c)}
        bed = api.Bed.between(NS1, c.value, name=BED)
        with bed:
            for ref in (a, c):
                info = netns.link_info("linkemu0", ref)
                assert info is not None and "UP" in info["flags"]
                assert [x for x in info.get("addr_info", []) if x["family"] == "inet"] == [], \
                    "addresses only if asked"
            # Addresses of the user's own choosing, set inside their namespaces.
            bed.exec("src", ["ip", "addr", "add", "198.18.9.1/24", "dev", "linkemu0"], check=True)
            bed.exec("dst", ["ip", "addr", "add", "198.18.9.2/24", "dev", "linkemu0"], check=True)
            with bed.run(a2b="delay 5ms", b2a="delay 15ms") as link:
                cp = bed.exec("src", ["ping", "-c", "5", "-i", "0.1", "198.18.9.2"])
                assert cp.returncode == 0, cp.stdout + cp.stderr
                rtts = ping_rtts(cp.stdout)
                assert len(rtts) == 5 and min(rtts) >= 20.0 - CLOCK_TOLERANCE_MS, rtts
                st = link.stats()
                # 5 echo requests a2b; ARP crossed too (no static entries without --addr).
                assert st.a2b.tx >= 5 and st.b2a.tx >= 5, (st.a2b, st.b2a)
            assert link.report.ok and link.report.a2b.in_flight == 0
        assert netns.ns_exists(NS1)
        for ref in (a, c):
            assert diff(before[ref], snapshot(ref)) == [], str(ref)
    assert leftovers() == []


def test_between_refuses_what_it_cannot_do():
    with user_namespace(NS1) as a:
        before = snapshot(a)
        cp = linkemu("testbed", "up", "--bed", BED, "--between", NS1, NS1)
        assert cp.returncode == 2 and "one network namespace" in cp.stderr, cp.stderr
        cp = linkemu("testbed", "up", "--bed", BED, "--between", NS1, "lhnosuch")
        assert cp.returncode == 1 and "no network namespace 'lhnosuch'" in cp.stderr, cp.stderr
        cp = linkemu("testbed", "up", "--bed", BED, "--between", NS1, "999999999")
        assert cp.returncode == 1 and "no process 999999999" in cp.stderr, cp.stderr
        with user_namespace(NS2):
            # An interface of the user's by that name: never taken over.
            cp = linkemu("testbed", "up", "--bed", BED, "--between", NS1, NS2, "--dev", "own0")
            assert cp.returncode == 2 and "already has an interface 'own0'" in cp.stderr, \
                cp.stderr
            cp = linkemu("testbed", "up", "--bed", BED, "--between", NS1, NS2,
                         "--addr-a", "198.18.9.1")
            assert cp.returncode == 2 and "no prefix length" in cp.stderr, cp.stderr
            cp = linkemu("testbed", "up", "--bed", BED, "--addr-a", "198.18.9.1/24")
            assert cp.returncode == 2 and "--between" in cp.stderr, cp.stderr
        assert diff(before, snapshot(a)) == []
    assert leftovers() == []
