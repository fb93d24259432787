"""Small statistics helpers shared by the instruments and the tests (numpy
and scipy underneath)."""

from __future__ import annotations

from typing import Sequence


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) with linear interpolation between order
    statistics (numpy's default), so medians of even-sized samples are the
    mean of the middle two. Raises ValueError on an empty sample."""
    import numpy as np
    if len(values) == 0:
        raise ValueError("percentile of an empty sample")
    return float(np.percentile(values, q))


def binomial_bound(p: float, n: int, confidence: float = 0.999) -> tuple[float, float]:
    """Two-sided interval for the rate observed over n independent trials
    of true probability p: the central `confidence` of Binomial(n, p),
    divided by n (exact quantiles, scipy)."""
    from scipy.stats import binom
    lo, hi = binom.interval(confidence, n, p)
    return float(lo) / n, float(hi) / n
