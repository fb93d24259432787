"""The mbufs of dropped frames go back to the pool (src/dataplane/drop_stash.h).

A run-to-completion lcore keeps the mbufs the model drops and frees them
where a poll sent fewer frames than it received, and all of them on an
idle poll and when it stops. So at rest, and after the run, a link that
drops holds no more of the pool than one that does not; and every frame
is still accounted for.

linkemud runs on two net_pcap ports (no bed): port 0 reads 100,000
frames as fast as it can (tens of milliseconds, against a delay of 100
us: sends and receives balance poll by poll, and the lcore keeps the
mbufs dropped in the last 100 us), port 1 writes what a2b sends; the
control socket's `stats` are read once every frame has passed and the
ports are idle."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from kit.vdev import pcap_ports, read_pcap, run_on_vdevs
from linkemu.daemon.control import ControlClient

pytestmark = pytest.mark.needs_root

N_FRAMES = 100_000


def _frames() -> list[bytes]:
    head = bytes.fromhex("020000000002" "020000000001" "88b5")
    return [head + i.to_bytes(4, "big") + bytes(46) for i in range(N_FRAMES)]


def _run(linkemud_bin, tmp_path: Path, link: str) -> tuple[dict, dict, int]:
    sock, stats = tmp_path / "ctl.sock", tmp_path / "final.json"
    at_rest: dict = {}

    def read_at_rest(_pid: int) -> None:
        time.sleep(0.5)  # the capture read long ago, every deadline past
        with ControlClient(sock).connect(wait_s=5) as c:
            at_rest.update(c.stats())

    rc, err = run_on_vdevs(
        linkemud_bin, pcap_ports(tmp_path, _frames()),
        ["--a2b", link, "--control", str(sock), "--stats-file", str(stats)], 0.2, name="stash",
        during=read_at_rest)
    assert rc == 0, err
    return at_rest, json.loads(stats.read_text()), len(read_pcap(tmp_path / "out1.pcap"))


def test_dropped_mbufs_are_back_in_the_pool_at_rest(linkemud_bin, tmp_path):
    base, base_final, got = _run(linkemud_bin, tmp_path, "delay 100us limit 100000")
    assert got == N_FRAMES
    lossy, final, got = _run(linkemud_bin, tmp_path, "delay 100us loss 10% limit 100000")
    dropped = final["directions"]["a2b"]["dropped"]["loss"]
    # 10,000 expected (binomial, sd 95)
    assert 9500 < dropped < 10500, dropped
    assert got == N_FRAMES - dropped
    assert final["conserved"], final
    # Every dropped mbuf back once the ports went idle, and after the stop.
    assert lossy["mempool_in_use"] == base["mempool_in_use"], (lossy["mempool_in_use"], base["mempool_in_use"])
    assert final["mempool_in_use"] == base_final["mempool_in_use"]


def test_dropped_mbufs_are_back_in_the_pool_after_a_stop_under_load(linkemud_bin, tmp_path):
    # net_null never goes idle: the lcore still keeps the mbufs of the
    # last 1 ms's drops when it is told to stop, and gives them back then.
    stats = tmp_path / "final.json"
    link = "delay 1ms loss 10% limit 100000"
    rc, err = run_on_vdevs(linkemud_bin, ["net_null0", "net_null1"],
                           ["--a2b", link, "--b2a", link, "--no-control", "--stats-file", str(stats)], 0.5,
                           name="stash")
    assert rc == 0, err
    final = json.loads(stats.read_text())
    assert final["directions"]["a2b"]["dropped"]["loss"] > 10000
    assert final["conserved"], final
    assert final["mempool_in_use"] == 0, final["mempool_in_use"]
