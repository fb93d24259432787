"""The API's pure parts (no root): naming namespaces, typed counters,
links from profiles, port lists, address options."""

from __future__ import annotations

import pytest

import linkemu
from linkemu import api
from linkemu.bed import attached, ports, testbed
from linkemu.bed.nsref import NsRef
from linkemu.daemon.counters import FinalReport, Stats

FINAL = {
    "version": "0.1.0", "layout": "single", "lcores": 1, "seed": 7, "tsc_hz": 2.3e9,
    "uptime_s": 1.5, "conserved": True,
    "directions": {
        "a2b": {"config": "delay 5ms loss 1%", "rx": 100, "tx": 97, "rx_bytes": 9800,
                "tx_bytes": 9506, "in_flight": 0, "dup": 0,
                "dropped": {"loss": 2, "shutdown": 1}, "dropped_total": 3,
                "events": {"reordered": 0},
                "classes": [{"name": "default", "rx": 100, "tx": 97, "in_flight": 0, "dup": 0,
                             "dropped": {"loss": 2, "shutdown": 1}, "events": {}}],
                "emulation_error_ns": {"count": 97, "min": 100, "mean": 300, "p50": 250,
                                       "p90": 400, "p99": 900, "p999": 1200, "max": 1500}},
        "b2a": {"config": "", "rx": 10, "tx": 10, "rx_bytes": 980, "tx_bytes": 980,
                "in_flight": 0, "dup": 0, "dropped": {}, "dropped_total": 0, "events": {}},
    },
}


def test_counters_are_typed():
    r = FinalReport.from_final(FINAL, pid=12, how="terminated")
    assert isinstance(r, Stats)
    assert (r.a2b.rx, r.a2b.tx, r.a2b.dropped["loss"], r.a2b.dropped_total) == (100, 97, 2, 3)
    assert r.a2b.emulation_error_ns.p99 == 900 and r.a2b.classes[0].name == "default"
    assert r.a2b.loss_rate == pytest.approx(0.03) and r.b2a.loss_rate == 0.0
    assert r.b2a.emulation_error_ns.count == 0      # absent in the JSON: zeros
    assert r.ok and r.problems == () and r.pid == 12 and r.how == "terminated"
    assert r.direction("b2a") is r.b2a
    with pytest.raises(KeyError):
        r.direction("up")
    assert "delay 5ms loss 1%" in r.format()


def test_final_report_rechecks_conservation():
    bad = {**FINAL, "directions": {**FINAL["directions"],
                                   "a2b": {**FINAL["directions"]["a2b"], "tx": 90}}}
    r = FinalReport.from_final(bad)
    assert not r.ok and "a2b" in r.problems[0] and "off by 7" in r.problems[0]


def test_live_stats_from_json():
    s = Stats.from_json({**FINAL, "time_ns": 123})
    assert s.time_ns == 123 and s.seed == 7 and s.raw["tsc_hz"] == 2.3e9


@pytest.mark.parametrize("text, kind, value", [
    ("blue", "name", "blue"), ("4242", "pid", "4242"), ("pid:17", "pid", "17"),
    ("name:123", "name", "123"), ("my-ns.1", "name", "my-ns.1"),
])
def test_namespace_names(text, kind, value):
    ref = NsRef.parse(text)
    assert (ref.kind, ref.value) == (kind, value)
    assert NsRef.from_spec(ref.spec()) == ref


@pytest.mark.parametrize("text", ["", "a/b", "..", "pid:x", "pid:0", "x" * 65])
def test_bad_namespace_names(text):
    with pytest.raises(linkemu.UsageError):
        NsRef.parse(text)


def test_commands_inside_each_kind_of_namespace():
    assert NsRef.parse("blue").exec_argv(["true"]) == ["ip", "netns", "exec", "blue", "true"]
    assert NsRef.parse("99").exec_argv(["true"]) == ["nsenter", "--net=/proc/99/ns/net", "--",
                                                     "true"]
    assert NsRef.root().exec_argv(["true"]) == ["true"]
    assert NsRef.parse("99").ip_argv() == ["nsenter", "--net=/proc/99/ns/net", "--", "ip"]


def test_links_from_a_profile_with_overrides():
    assert api.resolve_links(None, None, None) == ("", "")
    a2b, b2a = api.resolve_links(None, None, "geo-satellite")
    assert "delay" in a2b and "delay" in b2a
    assert api.resolve_links("delay 1ms", None, "geo-satellite") == ("delay 1ms", b2a)


@pytest.mark.parametrize("spec, message", [
    ("eth1", "give two ports"), ("eth1,", "give two ports"), ("eth1,eth1", "one port"),
    # One PCI device written two ways: DPDK would be given it twice.
    ("00:01.0,0000:00:01.0", "one port"), ("0000:00:0a.0,0000:00:0A.0", "one port"),
    ("eth1,0000:00:01.0", "both ports must be"),
    ("0000:00:05.0,0000:00:01.0", "must be the lower address"),
])
def test_port_lists(spec, message):
    with pytest.raises(linkemu.UsageError, match=message):
        ports.parse("lk", spec)


def test_port_eal_arguments():
    tuned = testbed.PMD_DEVARGS["af_packet"]
    assert ports.parse("lk", "eth1,eth2").eal_ports("af_packet") == [
        "--no-pci", f"--vdev=net_af_packet0,iface=eth1,{tuned}",
        f"--vdev=net_af_packet1,iface=eth2,{tuned}"]
    assert ports.parse("lk", "eth1,eth2").eal_ports("af_xdp") == [
        "--no-pci", "--vdev=net_af_xdp0,iface=eth1", "--vdev=net_af_xdp1,iface=eth2"]
    assert ports.parse("lk", "00:01.0,0000:00:02.0").eal_ports("af_xdp") == [
        "-a", "00:01.0", "-a", "0000:00:02.0"]


@pytest.mark.parametrize("addr, message", [
    ("198.18.0.1", "no prefix length"), ("nonsense/24", "not an address"),
    ("2001:db8::1/64", "only IPv4"),
])
def test_address_options(addr, message):
    with pytest.raises(linkemu.UsageError, match=message):
        attached.between("lh", "lhuser1", "lhuser2", addr_a=addr)


@pytest.mark.parametrize("addr_a, addr_b, message", [
    ("198.18.9.1/24", "198.18.9.1/24", "one address for both ends"),
    ("198.18.9.1/24", "198.18.10.1/24", "not in one subnet"),
    ("198.18.9.1/24", "198.18.9.2/16", "not in one subnet"),
])
def test_address_pairs_the_link_cannot_carry(addr_a, addr_b, message):
    """Two ends with one address, or in two subnets, get neighbour entries
    no frame can use: the link would be up and carry nothing."""
    with pytest.raises(linkemu.UsageError, match=message):
        attached.between("lh", "lhuser1", "lhuser2", addr_a=addr_a, addr_b=addr_b)


def test_bad_device_name():
    with pytest.raises(linkemu.UsageError, match="not an interface name"):
        attached.between("lh", "lhuser1", "lhuser2", dev="a-name-much-too-long")


def test_api_exports():
    for name in ("Bed", "Link", "Stats", "FinalReport", "LinkemuError", "UsageError",
                 "DaemonRefused", "ControlError", "DaemonStartError"):
        assert getattr(linkemu, name) is not None
    with pytest.raises(AttributeError):
        linkemu.NoSuchThing  # noqa: B018
