"""examples/python_api.py, the example docs/python.md shows, runs as is."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kit import REPO, cli_env

from .apikit import leftovers

pytestmark = pytest.mark.usefixtures("bed_session")


def test_python_example_runs():
    cp = subprocess.run([sys.executable, str(REPO / "examples" / "python_api.py"), "la"],
                        capture_output=True, text=True, timeout=300, env=cli_env())
    assert cp.returncode == 0, cp.stdout + cp.stderr
    out = cp.stdout
    assert "ping 198.18.0.1 -> 198.18.0.2" in out
    assert "links now: {'a2b': 'delay 50ms', 'b2a': 'delay 10ms'}" in out
    assert "refused: set b2a: unknown word 'dealy'" in out
    assert "conservation (rx + dup = tx + dropped + in flight): yes" in out
    assert leftovers() == []
