"""Per-frame impairments: duplicate, corrupt, reorder (with gap), and the
loss model's ecn."""

from __future__ import annotations

import math

import pytest

from kit import on_time

from .lmkit import correlated_chance, live_stats, probe

N, RATE = 3000, 2000.0


def _binom_tol(n: int, p: float) -> float:
    """4 sd of a Binomial(n, p) count (two-sided 6e-5)."""
    return 4 * math.sqrt(n * p * (1 - p))


@pytest.mark.parametrize("grammar", ["duplicate 10%", "duplicate 30% 50%"])
def test_duplicate(bed, run_link, grammar):
    link = run_link(grammar, "", "--seed", "31")
    r = probe(bed, count=N, rate=RATE, port=9150)
    a2b = link.stop()["directions"]["a2b"]
    print(f"{grammar}: probe saw {r.duplicates} duplicates, daemon made {a2b['dup']}")
    # Nothing is lost, so every copy the link made reaches the receiver.
    assert r.received == N
    assert r.duplicates == a2b["dup"] > 0
    assert a2b["events"]["dup_failed"] == 0
    assert a2b["rx"] == N and a2b["tx"] == N + a2b["dup"]
    if grammar == "duplicate 10%":
        assert abs(a2b["dup"] - N * 0.1) <= _binom_tol(N, 0.1)
    else:
        # netem's correlated generator: long-run rate and count variance
        # from simulating the recurrence (test_loss explains); 4 sd.
        mu, var, _ = correlated_chance(0.30, 0.50, N)
        assert abs(a2b["dup"] - N * mu) <= 4 * math.sqrt(var) + 3, (a2b["dup"], N * mu)
    # A copy follows its original through the same link: it leaves right
    # behind it (same deadline, no delay configured): within 1 ms. That a
    # copy gets its original's deadline is checked exactly, in virtual
    # time, by tests/unit/test_perframe.c and test_offer_burst.c; here the
    # real path is checked. linkemud sends the two in one burst, so a copy
    # over 1 ms behind was held by the link only if the frames around it
    # were not held as well: the machine can stop a CPU (the receiving
    # kernel's, linkemud's) for milliseconds, and that delays every frame
    # in the path at the time.
    late = [rec for rec in r.records
            if rec is not r.first[rec[0]] and rec[2] - r.first[rec[0]][2] > 1_000_000]
    held = [rec for rec in late if not _path_held(r, rec)]
    e, gaps = a2b["emulation_error_ns"], a2b["poll_gaps"]["over_1us"]
    assert not held, (held[:5], f"linkemud's emulation error max {e['max'] / 1e3:.0f} us, "
                                f"poll gap max {gaps['max'] / 1e3:.0f} us")
    if late:
        print(f"{len(late)} copies over 1 ms behind their originals, each while the path held "
              f"originals too (linkemud's emulation error max {e['max'] / 1e3:.0f} us, poll gap "
              f"max {gaps['max'] / 1e3:.0f} us): the machine's")


def _path_held(r, copy) -> bool:
    """Whether the path held everyone when `copy` came late: an original
    sent after the copy's own original, early enough that it should have
    arrived before the copy (over 1 ms before), took over 1 ms itself.
    With no delay configured, no original takes that long through the
    link: a stall of the machine (a CPU taken for milliseconds) delays
    every frame in the path at the time, a copy held by the link only
    the copy."""
    _, sent, arrived, _ = copy
    return any(o[2] - o[1] > 1_000_000 for o in r.first.values() if sent < o[1] <= arrived - 1_000_000)


def test_duplicate_and_loss_follow_netem_enqueue(bed, run_link):
    # netem_enqueue: the duplicate draw (d, 20 %), then the loss draw
    # (l, 10 %); d and l: the frame goes through once (no copy, no loss);
    # not d and l: lost; d and not l: original plus a copy, and the copy
    # meets the loss model again. So, per original:
    #   lost sequence number       P = 0.8 x 0.1       = 0.08
    #   copy made (daemon dup)     P = 0.2 x 0.9       = 0.18
    #   copy delivered (probe dup) P = 0.2 x 0.9 x 0.9 = 0.162
    link = run_link("duplicate 20% loss 10%", "", "--seed", "32")
    r = probe(bed, count=N, rate=RATE, port=9151)
    a2b = link.stop()["directions"]["a2b"]
    copies_lost = a2b["dropped"]["loss"] - r.lost
    print(f"duplicate 20% loss 10%: lost {r.lost}, copies {a2b['dup']}, copies lost "
          f"{copies_lost}, duplicates seen {r.duplicates}")
    # Exact: every loss drop is either a sequence number the probe never
    # saw or a copy, and every copy not lost reached the probe.
    assert copies_lost >= 0
    assert r.duplicates == a2b["dup"] - copies_lost
    assert abs(r.lost - N * 0.08) <= _binom_tol(N, 0.08), r.lost
    assert abs(a2b["dup"] - N * 0.18) <= _binom_tol(N, 0.18), a2b["dup"]
    assert abs(r.duplicates - N * 0.162) <= _binom_tol(N, 0.162), r.duplicates


def test_corrupt(bed, run_link):
    # A corrupted frame has one bit flipped, uniform over its 106 bytes
    # (64-byte payload: 14 + 20 + 8 + 64; the data plane hands the model
    # the whole frame). The receiving kernel drops it for certain if the
    # bit is in the destination MAC (another host's address, PACKET_
    # OTHERHOST) except its group bit (which makes it multicast, still
    # delivered), or anywhere from the EtherType on (EtherType, IP header
    # checksum, UDP checksum), except for the 1-in-65536 flip that turns
    # the UDP checksum into 0 (no checksum) - we leave out those 16 bits
    # for the bound. A source-MAC flip is delivered unnoticed. So each
    # corrupted frame is lost with probability q >= (47 + 94 x 8 - 16) / 848
    # = 0.923, and (since nothing else loses frames) lost <= corrupted.
    link = run_link("corrupt 10%", "", "--seed", "33")
    r = probe(bed, count=N, rate=RATE, port=9152)
    a2b = link.stop()["directions"]["a2b"]
    c = a2b["events"]["corrupted"]
    q = (47 + 94 * 8 - 16) / 848
    print(f"corrupt 10%: corrupted {c}, probe lost {r.lost} ({r.lost / max(c, 1):.3f} of them; "
          f"expected 799/848 = {799 / 848:.3f})")
    assert abs(c - N * 0.1) <= _binom_tol(N, 0.1), c
    assert r.lost <= c
    assert r.lost >= c * q - 4 * math.sqrt(c * q * (1 - q)), (r.lost, c)
    # The link itself sends every frame; the kernel drops the damaged ones.
    assert a2b["tx"] == N and a2b["dropped_total"] == 0
    # Whatever arrived is intact (the checksum let through only harmless flips).
    assert r.foreign == 0


def _early(r, below_ms: float) -> set[int]:
    """Sequence numbers that arrived below below_ms of one-way delay. A
    frame the link holds for its delay cannot arrive sooner than the delay
    (both stamps are the same host's CLOCK_REALTIME, taken before the frame
    reaches the link and after it leaves), so with below_ms just under the
    delay the split is exact: a reordered frame lands on the wrong side only
    if the machine held it (sender preempted between stamp and send, receive
    path descheduled) for the whole delay. Reordered frames usually arrive
    within ~0.1 ms, but gaps of a few ms occur on a shared VM."""
    return {s for s, rec in r.first.items() if (rec[2] - rec[1]) / 1e6 < below_ms}


@pytest.mark.parametrize("grammar", ["delay 10ms reorder 100% gap 5",
                                     "delay 10ms reorder 25%",
                                     "delay 10ms reorder 25% 50%"])
def test_reorder(bed, run_link, grammar):
    n = 1000
    link = run_link(grammar, "", "--seed", "34")
    r = probe(bed, count=n, rate=1000, port=9153)
    final = link.stop()
    # The early/late split below needs frames sent within ms of their
    # deadlines.
    on_time(final)
    a2b = final["directions"]["a2b"]
    early = _early(r, 9.9)
    ev = a2b["events"]["reordered"]
    print(f"{grammar}: {len(early)} went ahead, daemon counted {ev}, probe reordered {r.reordered}")
    assert r.received == n
    # Every frame the link sent ahead skipped the delay, and no other did.
    assert len(early) == ev > 0
    # 1 ms apart with a 10 ms delay: each early frame overtakes ~9 others.
    assert r.reordered >= ev
    if "gap 5" in grammar:
        # netem: "the 5th, 10th, ... packet is sent immediately".
        assert early == set(range(4, n, 5)), sorted(early)[:10]
    elif grammar.endswith("25%"):
        assert abs(ev - n * 0.25) <= _binom_tol(n, 0.25)
    else:
        mu, var, _ = correlated_chance(0.25, 0.50, n)
        assert abs(ev - n * mu) <= 4 * math.sqrt(var) + 3, (ev, n * mu)


def test_ecn_marks_capable_frames_and_drops_the_others(bed, run_link):
    # `loss 30% ecn`: a frame the loss model picks is marked CE if it is
    # ECN-capable, dropped otherwise. The probe sets the TOS byte and the
    # receiver reads it back (IP_RECVTOS); the daemon's live counters
    # (control socket) are read between the runs.
    n, p = 2000, 0.30
    link = run_link("loss 30% ecn", "", "--seed", "35")
    ect0 = probe(bed, count=n, rate=RATE, tos=0x28 | 2, port=9154)   # AF11 + ECT(0)
    ect1 = probe(bed, count=n, rate=RATE, tos=1, port=9155)          # ECT(1)
    after_ect = live_stats(bed)["directions"]["a2b"]
    plain = probe(bed, count=n, rate=RATE, tos=0, port=9156)         # not ECT
    after_plain = live_stats(bed)["directions"]["a2b"]
    ce = probe(bed, count=n, rate=RATE, tos=3, port=9157)            # already CE
    a2b = link.stop()["directions"]["a2b"]
    ce0, ce1 = ect0.tos_counts(), ect1.tos_counts()
    marked0, marked1 = ce0[0x2b], ce1[0x03]
    already = a2b["events"]["ecn_marked"] - after_plain["events"]["ecn_marked"]
    print(f"ecn: ECT(0) arrived {dict(ce0)}, ECT(1) {dict(ce1)}, non-ECT lost {plain.lost}, "
          f"CE {ce.received} (marked again {already}); daemon marked "
          f"{a2b['events']['ecn_marked']}, dropped {a2b['dropped']['loss']}")
    # ECN-capable frames are never lost; marked ones arrive as CE with the
    # DSCP kept (0x28 | 3) and a valid IP header checksum (or the kernel
    # would have dropped them).
    assert ect0.received == ect1.received == ce.received == n
    assert set(ce0) <= {0x2a, 0x2b} and set(ce1) <= {0x01, 0x03}, (ce0, ce1)
    # The daemon's mark count is exactly the CE the receiver saw, and it
    # dropped nothing of them.
    assert after_ect["events"]["ecn_marked"] == marked0 + marked1, after_ect["events"]
    assert after_ect["dropped"]["loss"] == 0
    for m in (marked0, marked1):
        assert abs(m - n * p) <= _binom_tol(n, p), m
    # Non-ECT frames are dropped under `loss`, as without ecn, and not marked.
    assert abs(plain.lost - n * p) <= _binom_tol(n, p)
    assert after_plain["dropped"]["loss"] == plain.lost
    assert after_plain["events"]["ecn_marked"] == after_ect["events"]["ecn_marked"]
    # A frame already CE counts as marked when picked (Linux's
    # INET_ECN_set_ce): ~30 % of them, none dropped.
    assert abs(already - n * p) <= _binom_tol(n, p), already
    assert a2b["dropped"]["loss"] == plain.lost == a2b["dropped_total"]
