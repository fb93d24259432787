"""Small statistics helpers shared by the instruments and the tests."""

from __future__ import annotations

import math
from typing import Sequence


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) with linear interpolation between order
    statistics (numpy's default), so medians of even-sized samples are the
    mean of the middle two. Raises ValueError on an empty sample."""
    if not values:
        raise ValueError("percentile of an empty sample")
    s = sorted(values)
    if len(s) == 1:
        return float(s[0])
    pos = (len(s) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def binomial_bound(p: float, n: int, z: float = 3.2905) -> tuple[float, float]:
    """Two-sided interval for an observed loss rate over n independent trials
    with true probability p (normal approximation; z = 3.2905 is 99.9 %)."""
    half = z * math.sqrt(p * (1.0 - p) / n)
    return p - half, p + half
