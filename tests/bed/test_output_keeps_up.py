"""Due frames leave as fast as they become due, even when a link sends
more frames than it receives.

linkemud runs on two net_null ports (no bed, no namespaces): net_null
fills every receive burst, the most input a port can give. With
`duplicate 50%` a direction must send 1.5 frames for every one received.
The run-to-completion loop used to take at most one burst of due frames
per burst received, so the copies piled up in the delay line until it
was full: millions of `queue_full` and `stalled` drops in two seconds,
and frames seconds late. Now it takes a second burst when the first was
full and late (fastpath.c, behind()), and every frame leaves."""

from __future__ import annotations

import json

import pytest

from kit.vdev import run_on_vdevs

# Needs root and hugepages, not a bed.
pytestmark = pytest.mark.needs_root

LINK = "duplicate 50% limit 10000"


def test_copies_do_not_pile_up_at_full_input(linkemud_bin, tmp_path):
    stats = tmp_path / "final.json"
    rc, err = run_on_vdevs(linkemud_bin, ["net_null0", "net_null1"],
                           ["--a2b", LINK, "--b2a", LINK, "--seed", "1", "--no-control",
                            "--stats-file", str(stats)], 2, name="keepup")
    assert rc == 0, err
    rep = json.loads(stats.read_text())
    assert rep["conserved"]
    for name, d in rep["directions"].items():
        # The copies' share: its standard deviation is sqrt(0.25 / rx),
        # under 0.0016 for rx > 10^5, so 1 % is over six of them.
        assert d["rx"] > 100_000, (name, d["rx"])
        assert abs(d["dup"] / d["rx"] - 0.5) < 0.01, (name, d["dup"], d["rx"])
        piled = {k: d["dropped"][k] for k in ("queue_full", "stalled")}
        assert piled == {"queue_full": 0, "stalled": 0}, (name, piled)
