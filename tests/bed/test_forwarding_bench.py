"""bench/forwarding.py refuses what it cannot measure, before it starts
anything: at --seconds below 2 testpmd reports only its start-up second,
and without a round there is nothing to take a median of."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

FORWARDING = Path(__file__).resolve().parents[2] / "bench" / "forwarding.py"


@pytest.mark.parametrize("args, named", [
    (["--seconds", "1"], "--seconds must be at least 2"),
    (["--rounds", "0"], "--rounds must be at least 1"),
])
def test_refuses_what_it_cannot_measure(args, named):
    r = subprocess.run([sys.executable, str(FORWARDING), *args], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2
    assert named in r.stderr
    assert "[round" not in r.stderr  # nothing was started
