"""bench/model_burst_cost: one link's model cost per frame, offered in bursts
(docs/performance.md, "The jitter row"). Its words are checked, a bad link
gets the grammar's own message, and a run prints its figures."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "build" / "bench" / "model_burst_cost"


@pytest.fixture(autouse=True)
def _built():
    if not TOOL.exists():
        pytest.fail(f"{TOOL} is not built (make build)")


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(TOOL), *args], capture_output=True, text=True, timeout=60)


def test_prints_least_and_median_ns_a_frame():
    r = _run("delay 1ms 100us limit 100000", "6.2", "200000", "3")
    assert r.returncode == 0, r.stderr
    m = re.fullmatch(r"delay 1ms 100us limit 100000 at 6\.20 Mpps: least ([0-9.]+), median ([0-9.]+) "
                     r"ns of CPU a frame \(3 rounds, 100000 frames timed each\)\n", r.stdout)
    assert m, r.stdout
    assert 0 < float(m[1]) <= float(m[2])


@pytest.mark.parametrize("frames, timed", [
    ("1000", 512),      # 31 bursts of 32 (8 frames never offered); the last 16 timed
    ("1023", 512),      # 31 bursts again: the 31 left over are not counted
    ("1024", 512),      # 32 bursts, the last 16
    ("95", 32),         # 2 bursts, the second timed
])
def test_the_cost_is_over_the_frames_offered_in_the_timed_bursts(frames, timed):
    """Only whole bursts of 32 are offered, and the second half of them
    timed: the ns a frame is that time over those frames. FRAMES % 32
    frames were never offered; counted in the divisor (as they were) they
    lowered the figure, by up to half at FRAMES 95."""
    r = _run("delay 1ms", "6.2", frames, "1")
    assert r.returncode == 0, r.stderr
    assert f"(1 rounds, {timed} frames timed each)" in r.stdout, r.stdout


@pytest.mark.parametrize("args", [
    [],                                              # no link
    ["delay 1ms", "0"],                              # no rate
    ["delay 1ms", "fast"],                           # not a number
    ["delay 1ms", "6.2", "10"],                      # fewer frames than two bursts
    ["delay 1ms", "6.2x"],                           # words that only begin with a number
    ["delay 1ms", "inf"],
    ["delay 1ms", "6.2", "1000x"],
    ["delay 1ms", "6.2", "-1000"],                   # not 2^64 - 1000 frames
    ["delay 1ms", "6.2", "1000", "3x"],
    ["delay 1ms", "6.2", "1000", "-3"],
    ["delay 1ms", "6.2", "1000", "0"],               # no round
    ["delay 1ms", "6.2", "1000", "65"],              # more rounds than kept
    ["delay 1ms", "6.2", "1000", "1", "extra"],      # PORTS not a number
    ["delay 1ms", "6.2", "1000", "1", "4x"],
    ["delay 1ms", "6.2", "1000", "1", "0"],          # no port
    ["delay 1ms", "6.2", "1000", "1", "1025"],       # more frames than kept
    ["delay 1ms", "6.2", "1000", "1", "4", "extra"],
])
def test_bad_words_get_the_usage(args):
    r = _run(*args)
    assert r.returncode == 2
    assert "usage: model_burst_cost LINK [MPPS [FRAMES [ROUNDS [PORTS]]]]" in r.stderr


def test_ports_spread_frames_over_classes():
    """PORTS 64: frames to ports 5000 .. 5063 in turn, so rules on 16 of
    them put frames in 16 classes; the run prints its figures."""
    rules = " ; ".join(f"class h{k} match proto udp dport {5000 + k} : delay 1ms" for k in range(16))
    r = _run(f"delay 1ms limit 100000 ; {rules}", "6.2", "100000", "1", "64")
    assert r.returncode == 0, r.stderr
    assert re.search(r"at 6\.20 Mpps: least [0-9.]+, median [0-9.]+ ns of CPU a frame \(1 rounds, 50016 frames "
                     r"timed each\)", r.stdout)


def test_a_bad_link_gets_the_grammars_message():
    r = _run("delay 1ms dealy")
    assert r.returncode == 1
    assert "model_burst_cost: 'delay 1ms dealy':" in r.stderr and "'dealy'" in r.stderr
