"""The lab's option parsers (cli/lab.py), without a bed."""

from __future__ import annotations

import pytest

from linkemu.cli.lab import parse_delays
from linkemu.errors import UsageError


@pytest.mark.parametrize("text, ns", [
    ("0,1.001ms,1.005s,2.3ms", (0, 1_001_000, 1_005_000_000, 2_300_000)),
    ("1.001us,0.7us,1.009", (1_001, 700, 1_009)),      # a bare number is in us, as in tc
    ("3599.999999999s", (3_599_999_999_999,)),
])
def test_delays_are_exact_decimals(text, ns):
    # 1.001ms was refused as "finer than 1 ns": float(1.001) * 1e6 is
    # 1000999.9999999999, not the 1001000 ns written.
    assert parse_delays(text) == ns


@pytest.mark.parametrize("text", ["1.0000000001ms", "0.5ns", "1.0000000000000001s"])
def test_delays_finer_than_a_nanosecond_are_refused(text):
    # The last was taken as 1 s: a float has no digit for its 1e-16.
    with pytest.raises(UsageError, match=f"'{text}' is finer than 1 ns"):
        parse_delays(text)
