"""The sequenced UDP probe: accounting logic, and a real run inside one
namespace (no emulator needed: the receiver's own address, over loopback)."""

from __future__ import annotations

import json
import subprocess
import sys

from kit import cli_env
from linkemu.bed import netns
from linkemu.instruments import pyprobe as probe


def _state(count=10):
    return probe.RecvState(count, None)


def test_accounting_loss_dup_reorder_foreign():
    st = _state(10)
    rid = 42
    for seq in (0, 1, 3, 2, 2, 5, 9):      # 4,6,7,8 lost; 2 late; 2 duplicated
        probe.receive(st, probe.pack(rid, seq, 1000, 64), 1500 + seq)
    probe.receive(st, probe.pack(7, 4, 0, 64), 0)       # another run
    probe.receive(st, b"junk", 0)
    probe.receive(st, probe.pack(rid, 99, 0, 64), 0)    # beyond count
    out = probe.summarise(st)
    assert out["received"] == 6 and out["lost"] == 4 and out["duplicates"] == 1
    assert out["reordered"] == 1
    assert out["loss_rate"] == 0.4
    assert out["owd_ns"]["min"] == 500 and out["owd_ns"]["max"] == 509
    assert out["ignored"] == {"foreign": 2, "out_of_range": 1}


def test_probe_pair_in_one_namespace(bed_up):
    """recv prints ready, send paces, recv reports every datagram."""
    ns, addr = bed_up.ns_src, bed_up.addr_src
    py = [sys.executable, "-m", "linkemu.instruments.pyprobe"]
    recv = subprocess.Popen(netns.ns_exec_argv(ns, py + ["recv", "--bind", addr, "--port",
                                                         "9100", "--count", "500", "--idle", "1"]),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=cli_env())
    try:
        assert recv.stdout.readline().startswith("ready")
        snd = subprocess.run(netns.ns_exec_argv(ns, py + ["send", "--dst", addr, "--port", "9100",
                                                          "--count", "500", "--rate", "1000"]),
                             capture_output=True, text=True, env=cli_env(), timeout=30)
        assert snd.returncode == 0, snd.stderr
        sent = json.loads(snd.stdout)
        # Paced at 1000/s: 500 datagrams take ~0.5 s (not a burst).
        assert 0.45 < sent["duration_s"] < 1.5, sent
        out, err = recv.communicate(timeout=10)
        res = json.loads(out.strip().splitlines()[-1])
    finally:
        if recv.poll() is None:
            recv.kill()
            recv.wait()
    assert res["received"] == 500 and res["lost"] == 0 and res["duplicates"] == 0
    assert 0 < res["owd_ns"]["min"] <= res["owd_ns"]["p50"] <= res["owd_ns"]["max"]
