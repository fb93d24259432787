"""A two-hop chain, the Tokyo-Kyoto profile's shape: a 100 Mbit/s access
hop, then a 6 ms, 45 Mbit/s bottleneck with its buffer."""

from __future__ import annotations

from kit import hop_problems, on_time
from linkemu.instruments.owd import ProbeSpec, probe

CHAIN = "rate 100mbit >> delay 6ms rate 45mbit limit-bytes 100kb"
N = 500
IP_LEN = 1000


def test_chain_forwards_per_hop(bed, run_link):
    link = run_link(CHAIN, "")
    r = probe(bed, ProbeSpec(ip_len=IP_LEN, pps=1000.0, count=N, port=9230))
    final = link.stop()
    rcv = r["receiver"]
    assert rcv["received"] == N, rcv
    # The model's own delay: 6 ms plus serializing a 1014-byte frame at
    # 100 and at 45 Mbit/s (81 + 180 us); at 1000 frames/s the queues stay
    # empty. No frame leaves before the model lets it (1 us: timestamp
    # grain), and the fastest of 500 frames pays only the path (tens of
    # us) and the data plane's poll: 1 ms of slack above the model; a hop
    # left out (at most 6.08 or 0.26 ms) fails the bound below it. (The
    # exact departures per hop are the unit tests', tests/unit/test_chain.c.)
    # The minimum, not the median: the median also carries the receiver's
    # wake-ups, which on a shared machine reach milliseconds.
    want_ns = 6_000_000 + (IP_LEN + 14) * 8 * 1e9 / 100e6 + (IP_LEN + 14) * 8 * 1e9 / 45e6
    d = rcv["delay_ns"]
    print(f"chain: OWD min {d['min'] / 1e6:.3f} ms, median {d['p50'] / 1e6:.3f} ms "
          f"(model {want_ns / 1e6:.3f} ms)")
    assert want_ns <= d["min"] + 1000 and d["min"] <= want_ns + 1_000_000, d

    a2b = final["directions"]["a2b"]
    assert a2b["config"] == CHAIN
    [c] = a2b["classes"]
    hops = c["hops"]
    assert [h["hop"] for h in hops] == [1, 2]
    # What enters the class enters hop 1; hop 1 hands all it sends to
    # hop 2; what hop 2 sends leaves the class.
    assert hops[0]["rx"] == c["rx"] >= N
    assert hops[0]["tx"] == hops[1]["rx"]
    assert hops[1]["tx"] == c["tx"]
    assert all(h["conserved"] for h in hops), hops
    assert all(h["in_flight"] == 0 for h in hops), hops
    assert sum(sum(h["dropped"].values()) for h in hops) == 0, hops
    assert c["rx"] == c["tx"]
    # b2a is a plain link: no hops listed
    assert all("hops" not in k for k in final["directions"]["b2a"]["classes"])
    # The daemon's own lateness last (skipped, CI: failed, when the
    # machine cannot resolve it).
    on_time(final, p99_us=None)   # a median: a few late frames do not matter


def test_chain_loss_counted_in_its_hop(bed, run_link):
    # loss in hop 2 only: hop 1 forwards everything, hop 2 drops about
    # half. Binomial(500, 0.5): sd 11; 6 sd either side.
    link = run_link("delay 1ms >> loss 50% seed 7", "")
    r = probe(bed, ProbeSpec(ip_len=200, pps=1000.0, count=N, port=9231))
    final = link.stop()
    [c] = final["directions"]["a2b"]["classes"]
    h1, h2 = c["hops"]
    assert sum(h1["dropped"].values()) == 0 and h1["tx"] == h1["rx"] == c["rx"]
    assert 250 - 66 <= h2["dropped"]["loss"] <= 250 + 66, h2
    assert c["dropped"]["loss"] == h2["dropped"]["loss"]
    # the probe's own losses are hop 2's, but for the few other frames
    # (ARP, neighbour discovery) the class also carried
    lost, others = N - r["receiver"]["received"], c["rx"] - N
    assert h2["dropped"]["loss"] - others <= lost <= h2["dropped"]["loss"], (lost, h2)


def test_chain_live_set_show_stats(bed, run_link):
    # A plain link becomes a chain by `set`, then a longer one; `show`
    # gives the chain back, `stats` lists its hops, conserved at each step.
    link = run_link("delay 1ms", "")
    with link.client() as ctl:
        probe(bed, ProbeSpec(ip_len=200, pps=1000.0, count=100, port=9233))
        ctl.set("a2b", "rate 100mbit >> delay 2ms")
        assert ctl.show()["a2b"] == "rate 100mbit >> delay 2ms"
        probe(bed, ProbeSpec(ip_len=200, pps=1000.0, count=100, port=9234))
        ctl.set("a2b", "rate 100mbit >> delay 2ms >> loss 10% seed 3")
        assert ctl.show()["a2b"] == "rate 100mbit >> delay 2ms >> loss 10% seed 3"
        probe(bed, ProbeSpec(ip_len=200, pps=1000.0, count=300, port=9235))
        [c] = ctl.stats()["directions"]["a2b"]["classes"]
        ctl.reset_stats()
        probe(bed, ProbeSpec(ip_len=200, pps=1000.0, count=100, port=9236))
        [after] = ctl.stats()["directions"]["a2b"]["classes"]
        bad = hop_problems("a2b", c) + hop_problems("a2b", after)
    assert not bad, bad
    hops = c["hops"]
    assert len(hops) == 3
    # hop 3 was born by the second `set`: it saw the last 300 probes (and
    # any other frames), lost about 10 % of them (binomial sd 5.2: 6 sd)
    assert hops[2]["rx"] >= 300 and 30 - 32 <= hops[2]["dropped"]["loss"] <= 30 + 32, hops[2]
    # hop 1 continued the plain link: every probe of the three runs; hop 2
    # every probe since the first `set`, from hop 1
    assert hops[0]["rx"] >= 500 and hops[1]["from_previous_hop"] >= 400, hops
    # since the reset: the 100 probes (and a few other frames), not before
    assert 100 <= after["hops"][0]["rx"] < 150, after
    link.stop()
