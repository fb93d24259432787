"""bench/punt_bed.py refuses a frame count it cannot send before it
starts anything, and prints no ratio against a baseline that delivered
nothing (it divided by zero at the end of a run)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import punt_bed  # noqa: E402


@pytest.mark.parametrize("count", ["0", "-5", "x", "1.5"])
def test_a_count_that_is_not_frames_is_refused(count):
    cp = subprocess.run([sys.executable, str(BENCH / "punt_bed.py"), "--count", count],
                        capture_output=True, text=True, timeout=60)
    assert cp.returncode == 2, cp.stderr
    assert f"'{count}' is not a whole number of frames above 0" in cp.stderr
    assert "Traceback" not in cp.stderr


def test_no_ratio_against_a_baseline_that_delivered_nothing():
    assert punt_bed.ratio(5.0, 0.0).strip() == "n/a"
    assert punt_bed.ratio(5.0, 2.0) == "2.50x"
