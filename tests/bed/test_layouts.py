"""Every layout carries frames the same way (src/dataplane/layout.c).

`single` runs both directions on one lcore, `per-direction` one lcore per
direction, `pipeline` DEMU's RX -> worker -> TX over rings (6 lcores).
This machine has 2 vCPUs, so the bigger layouts run with their lcores
mapped onto the daemon's CPU (EAL's --lcores "(0-5)@1"): they take turns
on it, and a frame may then wait for the scheduler. Nothing here measures
time; what a user relies on in any layout does not depend on it:

- the frames that leave are the ones that came in, in their order, minus
  the ones a counter says were dropped (a full RX -> worker ring counts
  as ring_full: DEMU's choice, which a shared CPU makes happen);
- every frame is accounted for at the stop (the daemon's "conserved");
- every mbuf is back in the pool after the stop, whatever was in the
  rings, the pending buffers, the spare mbufs of the compact store or the
  drop stash when the lcores stopped."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from kit.vdev import pcap_ports, read_pcap, run_on_vdevs
from linkemu.bed.cpus import daemon_cpu

pytestmark = pytest.mark.needs_root

N_FRAMES = 20_000
LAYOUT_LCORES = {"single": 1, "per-direction": 2, "pipeline": 6}


def _lcores(layout: str) -> str:
    return f"(0-{LAYOUT_LCORES[layout] - 1})@{daemon_cpu()}"


def _frames() -> list[bytes]:
    head = bytes.fromhex("020000000002" "020000000001" "88b5")
    return [head + i.to_bytes(4, "big") + bytes(46) for i in range(N_FRAMES)]


def _dropped(d: dict) -> int:
    return sum(d["dropped"].values())


@pytest.mark.parametrize("layout", list(LAYOUT_LCORES))
def test_a_capture_comes_out_in_order_less_only_counted_drops(linkemud_bin, tmp_path: Path, layout):
    stats = tmp_path / "final.json"
    # 10 % loss: drops the model decides, which must be counted as such,
    # beside whatever the layout's rings drop.
    rc, err = run_on_vdevs(linkemud_bin, pcap_ports(tmp_path, _frames()),
                           ["--layout", layout, "--a2b", "delay 100us loss 10% limit 100000",
                            "--seed", "1", "--no-control", "--stats-file", str(stats)],
                           1.0, name="layout", lcores=_lcores(layout))
    assert rc == 0, err
    final = json.loads(stats.read_text())
    assert final["layout"] == layout
    a2b = final["directions"]["a2b"]
    got = read_pcap(tmp_path / "out1.pcap")
    sent = _frames()
    # In order, each at most once: the sequence numbers only ever grow.
    seqs = [int.from_bytes(f[14:18], "big") for f in got]
    assert all(a < b for a, b in zip(seqs, seqs[1:])), "frames out of order or repeated"
    assert all(f == sent[s] for f, s in zip(got, seqs)), "a frame's bytes changed"
    assert a2b["rx"] == N_FRAMES, a2b
    assert a2b["tx"] == len(got), (a2b["tx"], len(got))
    assert a2b["rx"] == a2b["tx"] + _dropped(a2b), a2b
    assert a2b["in_flight"] == 0, a2b
    # The model's drops are there and counted as losses: binomial over the
    # frames that reached it (a full ring drops before the model), within
    # 5 standard deviations (a chance of 6e-7 for a correct model; the
    # seed is fixed, so the count is the same run for run unless the
    # frames reaching the model change).
    reached = N_FRAMES - a2b["dropped"]["ring_full"]
    assert reached > 1000, a2b["dropped"]
    sd = math.sqrt(reached * 0.1 * 0.9)
    assert abs(a2b["dropped"]["loss"] - 0.1 * reached) < 5 * sd, (reached, a2b["dropped"])
    assert final["conserved"], final
    assert final["mempool_in_use"] == 0, final["mempool_in_use"]


@pytest.mark.parametrize("compact", [False, True], ids=["mbufs", "compact"])
@pytest.mark.parametrize("layout", list(LAYOUT_LCORES))
def test_every_mbuf_is_back_after_a_stop_under_load(linkemud_bin, tmp_path: Path, layout, compact):
    # net_null never goes idle: at the stop, frames are everywhere a layout
    # keeps them (rings, pending buffers, the delay line, the jitter wheel,
    # spare mbufs, the drop stash), in both directions.
    stats = tmp_path / "final.json"
    link = "delay 1ms 100us loss 5% duplicate 5% limit 100000"
    opts = ["--layout", layout, "--a2b", link, "--b2a", link, "--seed", "1", "--no-control",
            "--stats-file", str(stats)]
    if compact:
        opts += ["--compact-after", "0"]  # every short frame into the store
    rc, err = run_on_vdevs(linkemud_bin, ["net_null0", "net_null1"], opts, 1.0, name="layout",
                           lcores=_lcores(layout))
    assert rc == 0, err
    final = json.loads(stats.read_text())
    assert final["layout"] == layout
    for name, d in final["directions"].items():
        assert d["tx"] > 0 and d["dropped"]["loss"] > 0 and d["dup"] > 0, (name, d)
        if compact:
            assert final["compact"][name]["stored"] > 0, final["compact"]
        assert d["in_flight"] == 0, (name, d)  # every frame sent or dropped
    assert final["conserved"], final
    assert final["mempool_in_use"] == 0, final["mempool_in_use"]
