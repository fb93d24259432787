"""The BPF congestion controls: `linkemu cc` builds and registers them, a
socket can choose them by name, they carry traffic, and their counters move
when losses happen; unload leaves the kernel as it was."""

from __future__ import annotations

import json

import pytest

from kit import linkemu, need
from linkemu.bed import bpfcc
from linkemu.instruments import ttcp as ttcp_mod
from linkemu.instruments.tools import find_tool
from ttcp_pair import loopback_pair

pytestmark = pytest.mark.needs_root


@pytest.fixture(scope="module")
def loaded():
    why = bpfcc.unsupported()
    need(why is None, f"BPF congestion control unavailable: {why}")
    before = set(bpfcc.registered())
    cp = linkemu("cc", "load", timeout=300)
    assert cp.returncode == 0, cp.stderr
    yield list(bpfcc.ALGORITHMS)
    mine = [n for n in bpfcc.ALGORITHMS if n not in before]
    if mine:
        bpfcc.unload(mine)


def test_load_makes_them_available(loaded):
    avail = bpfcc.available()
    for n in loaded:
        assert n in avail
    cp = linkemu("cc", "list", "--json")
    rows = {r["name"]: r for r in json.loads(cp.stdout)}
    assert rows["lfp_adapt"]["available"] and rows["lfp_adapt"]["kind"] == "ours (BPF)"


def test_unknown_name_is_refused():
    cp = linkemu("cc", "load", "nosuch")
    assert cp.returncode == 2
    assert "unknown BPF congestion control nosuch" in cp.stderr


@pytest.mark.parametrize("name", ["lfp_fixed", "lfp_adapt"])
def test_a_socket_chooses_it_and_it_carries_traffic(loaded, name):
    t = find_tool("ttcp")
    need(t is not None, "ttcp not built")
    s, r = loopback_pair(str(t), 15311, [], ["--cc", name, "--count", "2000"])
    assert s["cc"] == name
    assert s["bytes"] == 2000 * 4096


def test_losses_reach_the_algorithm(loaded, run_link, bed_up):
    """A window far above what `limit 30` holds loses frames: the algorithm's
    ssthresh hook runs (losses > 0) and cwnd is reset to one segment."""
    link = run_link("delay 5ms rate 20mbit limit 30", "delay 5ms")
    before = bpfcc.stats("lfp_fixed")
    out = ttcp_mod.run(bed_up, ttcp_mod.TtcpSpec(window=400 * 1024, cc="lfp_fixed", seconds=3))
    final = link.stop()
    d = bpfcc.stats_delta(before, bpfcc.stats("lfp_fixed"))
    assert out["sender"]["cc"] == "lfp_fixed"
    drops = final["directions"]["a2b"]
    assert out["sender"]["total_retrans"] > 0, (out, drops)
    assert d["losses"] > 0 and d["resets"] > 0, d
    assert d["max_x"] == 2 and d["max_y"] == 8     # the fixed variant never moves them
