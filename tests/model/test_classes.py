"""Traffic classes: `DEFAULT ; class NAME match FILTER... : LINK`, each
class its own link and its own counters. Every filter word is used on the
bed at least once: proto, ports (ranges, sport, dport, port), dscp, src/dst
prefixes, ether, vlan (single and double tags)."""

from __future__ import annotations

from kit import on_time

from .lmkit import cls, probe, raw_frames

from linkemu.instruments import ping
from linkemu.instruments.stats import percentile

# The probe's OWD is the emulated delay plus the path (tens of us) plus the
# data plane's lateness, whose median on_time() bounds (100 us); 1 ms of
# slack on a median covers both and still tells every delay used here
# (0, 2, 3, 4, 5, 6, 7, 10, 20 ms) apart.
SLACK_MS = 1.0


def _owd_median(r) -> float:
    return percentile(r.owd_ms(), 50)


def _near(x: float, want: float) -> bool:
    return want <= x <= want + SLACK_MS


def test_icmp_class(bed, run_link):
    pings, n = 20, 200
    link = run_link("delay 20ms ; class icmp match proto icmp : delay 2ms", "")
    pr = ping.ping(bed, count=pings, interval=0.05)
    r = probe(bed, count=n, rate=1000, port=9170)
    final = link.stop()
    on_time(final, p99_us=None)       # medians: a few late frames do not matter
    med = percentile(pr.rtts_ms, 50)
    owd = _owd_median(r)
    print(f"icmp class: ping RTT median {med:.3f} ms (want 2 + path), probe OWD median "
          f"{owd:.3f} ms (want 20)")
    # Echo requests take the icmp class (2 ms), replies the unimpaired b2a.
    assert pr.received == pings and min(pr.rtts_ms) >= 2.0 and _near(med, 2.0), pr.rtts_ms
    # UDP takes the default link.
    assert r.received == n and min(r.owd_ms()) >= 20.0 and _near(owd, 20.0), owd
    a2b = final["directions"]["a2b"]
    assert [c["name"] for c in a2b["classes"]] == ["default", "icmp"]
    icmp, dflt = cls(a2b, "icmp"), cls(a2b, "default")
    assert icmp["rx"] == icmp["tx"] == pings, icmp
    assert dflt["rx"] == dflt["tx"] == n, dflt
    assert a2b["config"] == "delay 20ms ; class icmp match proto icmp : delay 2ms"
    # b2a has no rules: one class, which carried the replies.
    b2a = final["directions"]["b2a"]
    assert len(b2a["classes"]) == 1 and b2a["classes"][0]["rx"] == pings


def test_port_classes(bed, run_link):
    n = 100
    link = run_link("; class dp match dport 9150-9159 : delay 10ms"
                    " ; class sp match sport 40000-40010 : delay 5ms"
                    " ; class either match port 7000 : delay 3ms", "")
    in_range = probe(bed, count=n, rate=1000, port=9155, sport=50001)
    edge = probe(bed, count=n, rate=1000, port=9159, sport=50002)       # range end
    outside = probe(bed, count=n, rate=1000, port=9160, sport=50003)    # just past it
    by_sport = probe(bed, count=n, rate=1000, port=9300, sport=40010)
    either = probe(bed, count=n, rate=1000, port=9301, sport=7000)      # `port` is either
    final = link.stop()
    on_time(final, p99_us=None)       # medians: a few late frames do not matter
    got = {k: _owd_median(r) for k, r in (("dp", in_range), ("dp-edge", edge),
                                          ("none", outside), ("sp", by_sport),
                                          ("either", either))}
    print(f"port classes: OWD medians {got}")
    assert _near(got["dp"], 10) and _near(got["dp-edge"], 10)
    assert _near(got["none"], 0)
    assert _near(got["sp"], 5)
    assert _near(got["either"], 3)
    a2b = final["directions"]["a2b"]
    assert cls(a2b, "dp")["rx"] == 2 * n
    assert cls(a2b, "sp")["rx"] == n
    assert cls(a2b, "either")["rx"] == n
    assert cls(a2b, "default")["rx"] == n


def test_dscp_classes(bed, run_link):
    n = 100
    link = run_link("; class ef match dscp ef : delay 4ms ; class af match dscp af41 : delay 6ms"
                    " ; class cs match dscp cs1 : loss 100%", "")
    ef = probe(bed, count=n, rate=1000, port=9171, tos=46 << 2)
    af = probe(bed, count=n, rate=1000, port=9172, tos=34 << 2)
    cs1 = probe(bed, count=n, rate=1000, port=9173, tos=8 << 2, start_timeout_s=1.5)
    be = probe(bed, count=n, rate=1000, port=9174, tos=0)
    # The ECN bits are not part of the DSCP: EF with ECT(0) is still EF.
    ef_ect = probe(bed, count=n, rate=1000, port=9175, tos=(46 << 2) | 2)
    final = link.stop()
    on_time(final, p99_us=None)       # medians: a few late frames do not matter
    got = {"ef": _owd_median(ef), "af41": _owd_median(af), "be": _owd_median(be),
           "ef+ect": _owd_median(ef_ect)}
    print(f"dscp classes: OWD medians {got}; cs1 received {cs1.received}")
    assert _near(got["ef"], 4) and _near(got["ef+ect"], 4)
    assert _near(got["af41"], 6)
    assert _near(got["be"], 0)
    assert cs1.received == 0
    a2b = final["directions"]["a2b"]
    assert cls(a2b, "ef")["rx"] == 2 * n and cls(a2b, "af")["rx"] == n
    assert cls(a2b, "cs")["rx"] == n and cls(a2b, "cs")["dropped"]["loss"] == n
    assert cls(a2b, "default")["rx"] == n
    assert a2b["dropped"]["loss"] == n


def test_prefix_classes(bed, run_link):
    # All filter words of a rule must match (AND); a frame takes the first
    # rule it matches. a2b frames are 198.18.0.1 -> 198.18.0.2, UDP.
    n = 200
    link = run_link("; class far match dst 198.18.1.0/24 : loss 100%"
                    " ; class back match src 198.18.0.2 : loss 100%"
                    " ; class tcp match ether ipv4 proto tcp dst 198.18.0.0/24 : loss 100%"
                    " ; class near match ether ipv4 proto udp src 198.18.0.1"
                    " dst 198.18.0.0/23 : delay 7ms"
                    " ; class also match dst 198.18.0.2 : loss 100%", "")
    r = probe(bed, count=n, rate=1000, port=9176)
    final = link.stop()
    on_time(final, p99_us=None)       # medians: a few late frames do not matter
    owd = _owd_median(r)
    print(f"prefix classes: OWD median {owd:.3f} ms (want 7), received {r.received}")
    assert r.received == n and _near(owd, 7.0)
    a2b = final["directions"]["a2b"]
    assert cls(a2b, "near")["rx"] == n
    for name in ("far", "back", "tcp", "also", "default"):
        assert cls(a2b, name)["rx"] == 0, (name, cls(a2b, name))


def test_frames_held_at_shutdown_are_counted_in_their_class(bed, run_link):
    # Frames still in a class's delay when the daemon stops are freed and
    # counted as `shutdown` drops: in the direction's totals and in their
    # class's counters alike (docs/grammar.md: rx + dup = tx + drops +
    # in_flight per class and for the whole direction).
    link = run_link("delay 5s ; class u match proto udp : delay 4s", "")
    r = probe(bed, count=5, rate=0, port=9177, start_timeout_s=0.3)
    final = link.stop_unchecked()
    a2b = final["directions"]["a2b"]
    u = cls(a2b, "u")
    print(f"held at shutdown: direction tx {a2b['tx']} shutdown {a2b['dropped']['shutdown']}; "
          f"class u tx {u['tx']} shutdown {u['dropped']['shutdown']}")
    assert r.received == 0
    assert a2b["rx"] == 5 and a2b["tx"] == 0 and a2b["dropped"]["shutdown"] == 5, a2b
    assert u["rx"] == 5 and u["tx"] == 0 and u["dropped"]["shutdown"] == 5, u


def test_vlan_classes(bed, run_link):
    # This kernel may have no VLAN devices, so the frames are written with
    # AF_PACKET (valid IPv4/UDP inside the tags). `vlan` matches the
    # outermost tag (0x8100 or 0x88a8); `ether` and the IP words look
    # behind up to two tags. First matching rule wins.
    link = run_link("; class outer match vlan 100 :"
                    " ; class v match vlan 42 ether ipv4 proto udp dport 9190 :"
                    " ; class v6 match vlan 42 ether ipv6 : loss 100%", "")
    raw_frames(bed, 30, 9190, [(0x8100, 42)])                   # -> v
    raw_frames(bed, 20, 9190, [(0x8100, 43)])                   # -> default
    raw_frames(bed, 10, 9190, [(0x88A8, 100), (0x8100, 42)])    # -> outer (outermost is 100)
    raw_frames(bed, 10, 9190, [(0x88A8, 42), (0x8100, 7)])      # -> v (QinQ, ipv4 behind 2 tags)
    raw_frames(bed, 5, 9191, [(0x8100, 42)])                    # -> default (dport)
    final = link.stop()
    a2b = final["directions"]["a2b"]
    got = {c["name"]: c["rx"] for c in a2b["classes"]}
    print(f"vlan classes: {got}")
    assert got == {"default": 25, "outer": 10, "v": 40, "v6": 0}, got
    assert a2b["tx"] == 75 and a2b["dropped_total"] == 0
