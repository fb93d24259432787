"""`stats` is one consistent snapshot even while the link is swapped as
fast as the control socket allows and frames flow both ways (issue 13,
item 3): no reply may show a false "not conserved". And the port counters
(frames lost before linkemud saw them) are in every reply."""

from __future__ import annotations

import threading
import time

from lckit import Stream
from linkemu.daemon.summary import conservation_problems

RATE = 5_000          # pps each way: enough that frames are in every stage at every read
SECONDS = 4


def test_stats_conserve_during_a_set_storm(run_link, bed_up):
    link = run_link("delay 2ms limit 3000", "delay 2ms limit 3000")
    streams = [Stream(bed_up, count=RATE * SECONDS, rate=RATE, port=9320).start(),
               Stream(bed_up, count=RATE * SECONDS, rate=RATE, port=9321, reverse=True).start()]
    stop = threading.Event()
    swaps, errors = [0], []

    def storm():
        # Five different links in turn: each swap leaves a model draining
        # frames with up to 5 ms left, so retiring models come and go.
        try:
            with link.client() as c:
                i = 0
                while not stop.is_set():
                    d = "a2b" if i % 2 == 0 else "b2a"
                    c.set(d, f"delay {1 + i % 5}ms loss 1% limit 3000")
                    swaps[0] += 1
                    i += 1
        except Exception as e:  # reported below: the storm must not fail either
            errors.append(e)

    t = threading.Thread(target=storm)
    t.start()
    replies, bad = 0, []
    try:
        with link.client() as c:
            end = time.monotonic() + SECONDS - 0.5
            while time.monotonic() < end:
                st = c.stats()
                replies += 1
                problems = conservation_problems(st)
                if problems or st.get("conserved") is not True:
                    bad.append((replies, problems, st.get("conserved")))
                for name in ("a2b", "b2a"):
                    d = st["directions"][name]
                    assert set(d["before_rx"]) == {"imissed", "ierrors", "rx_nombuf", "total"}, d
                    assert d["before_rx"]["total"] == sum(v for k, v in d["before_rx"].items()
                                                          if k != "total")
                    assert "oerrors" in d["after_tx"]
    finally:
        stop.set()
        t.join(30)
        for s in streams:
            s.finish()
    assert not errors, errors
    assert not bad, f"{len(bad)} of {replies} stats replies not conserved, first: {bad[:3]}"
    # The test means something only if both ran a lot at once.
    assert swaps[0] >= 50 and replies >= 50, (swaps[0], replies)
    with link.client() as c:
        final_live = c.stats()
    assert final_live["directions"]["a2b"]["rx"] > RATE, final_live["directions"]["a2b"]
    final = link.stop()
    for name in ("a2b", "b2a"):
        assert "before_rx" in final["directions"][name] and "after_tx" in final["directions"][name]
