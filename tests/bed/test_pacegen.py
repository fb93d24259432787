"""pacegen (bench/pacegen.c), the paced source of bench/forwarding_paced.py:
its own options are read strictly, and a bad one is refused before EAL
starts, so that it leaves no EAL runtime directory or memif socket
behind. No test here forwards a frame (that is the benchmark's)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACEGEN = REPO / "build" / "bench" / "pacegen"
sys.path.insert(0, str(REPO / "bench"))
from children import eal_prefix, running  # noqa: E402
from linkemu.bed import paths  # noqa: E402


@pytest.fixture(autouse=True)
def _built():
    if not PACEGEN.exists():
        pytest.fail(f"{PACEGEN} is not built (make build)")


def _pacegen(tmp_path, *args: str):
    """pacegen as bench/forwarding_paced.py starts it (one memif server);
    the result, the EAL runtime directory and the socket it would leave."""
    prefix = eal_prefix("lepg")
    sock = tmp_path / "pg.0.sock"
    cmd = [str(PACEGEN), "-l", "0", "--no-pci", "--in-memory", "--file-prefix", prefix,
           f"--vdev=net_memif0,role=server,socket={sock}", "--", *args]
    with running(cmd, prefix, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as p:
        out, err = p.communicate(timeout=60)
        left = [str(x) for x in (paths.DPDK_RUN_ROOT / prefix, sock) if x.exists()]
    return subprocess.CompletedProcess(cmd, p.returncode, out, err), left


@pytest.mark.parametrize("args, words", [
    # atof read these as 10 frames/s and 1 frame a burst
    (["--rate", "10M"], ["--rate '10M'", "1 .. 1e9"]),
    (["--burst", "1x"], ["--burst '1x'", "1 .. 256"]),
    (["--burst", "-1"], ["--burst '-1'"]),
    # a negative or endless time went through an undefined cast into the TSC
    (["--seconds", "-1"], ["--seconds '-1'", "0.001 .. 86400"]),
    (["--seconds", "inf"], ["--seconds 'inf'"]),
    (["--warmup", "-0.5"], ["--warmup '-0.5'", "0 .. 3600"]),
    (["--drain", "nan"], ["--drain 'nan'"]),
    (["--rate", "0"], ["--rate '0'"]),
    (["--rate"], ["--rate needs a value"]),
    (["--frobnicate"], ["unknown argument '--frobnicate'"]),
])
def test_bad_words_are_named_before_eal_starts(tmp_path, args, words):
    r, left = _pacegen(tmp_path, *args)
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    assert r.stderr.startswith("pacegen: "), r.stderr[-2000:]
    for w in words:
        assert w in r.stderr, r.stderr[-2000:]
    assert r.stdout == ""
    assert left == []


def test_help_names_every_option():
    r = subprocess.run([str(PACEGEN), "--", "--help"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0
    for w in ("--rate", "--seconds", "--warmup", "--drain", "--burst"):
        assert w in r.stdout
