"""The loss study's levels as linkemud reads them: the grammar the study
writes for a level must set that level, whatever its size."""

from __future__ import annotations

import re
import subprocess

import pytest

from linkemu.daemon import daemon
from linkemu.lab.loss_accuracy import fmt_pct


@pytest.mark.parametrize("p", [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.07, 0.5, 1.0, 1e-7, 1e-13,
                               0.123456789, 3e-12])
def test_the_loss_the_daemon_sets_is_the_level(p):
    # Ten fixed decimals wrote 'loss 0%' below 5e-13; the run then checked
    # a level it had not set (and 0 losses fell inside its interval).
    shown = daemon_reading(f"delay 1ms loss {fmt_pct(p)}")
    assert shown == pytest.approx(p, rel=1e-11, abs=0)


def test_no_float_noise_in_the_grammar():
    assert fmt_pct(0.07) == "7%" and fmt_pct(1e-6) == "0.0001%" and fmt_pct(0) == "0%"


def daemon_reading(grammar: str) -> float:
    """The loss fraction linkemud --check normalises `grammar` to."""
    out = subprocess.run([str(daemon.require_binary("dpdk")), "--check", grammar],
                         capture_output=True, text=True, timeout=10, check=True).stdout
    m = re.search(r"\bloss ([0-9.eE+-]+)%", out)
    assert m, out
    return float(m.group(1)) / 100
