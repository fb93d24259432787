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
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

# Needs root and hugepages, not a bed.
pytestmark = pytest.mark.needs_root

LINK = "duplicate 50% limit 10000"


def _clean_run_dir(prefix: str) -> None:
    """EAL leaves an empty runtime directory even after --in-memory."""
    rdir = Path(f"/var/run/dpdk/{prefix}")
    if rdir.exists() and not list(rdir.iterdir()):
        rdir.rmdir()


def test_copies_do_not_pile_up_at_full_input(linkemud_bin, tmp_path):
    stats = tmp_path / "final.json"
    prefix = f"keepup-{uuid.uuid4().hex[:8]}"
    argv = [str(linkemud_bin), "-l", "0", "--no-pci", "--in-memory", f"--file-prefix={prefix}",
            "--log-level=lib.eal:error", "--vdev=net_null0", "--vdev=net_null1",
            "--", "--a2b", LINK, "--b2a", LINK, "--seed", "1", "--no-control",
            "--stats-file", str(stats)]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        line = ""
        while time.monotonic() < deadline and "ready" not in line:
            line = p.stdout.readline()
            if not line and p.poll() is not None:
                break
        assert "ready" in line, p.stderr.read()
        time.sleep(2)
    finally:
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
        _clean_run_dir(prefix)
    assert p.returncode == 0, err
    rep = json.loads(stats.read_text())
    assert rep["conserved"]
    for name, d in rep["directions"].items():
        # The copies' share: its standard deviation is sqrt(0.25 / rx),
        # under 0.0016 for rx > 10^5, so 1 % is over six of them.
        assert d["rx"] > 100_000, (name, d["rx"])
        assert abs(d["dup"] / d["rx"] - 0.5) < 0.01, (name, d["dup"], d["rx"])
        piled = {k: d["dropped"][k] for k in ("queue_full", "stalled")}
        assert piled == {"queue_full": 0, "stalled": 0}, (name, piled)
