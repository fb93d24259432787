"""delay with jitter: every distribution, correlation, and noreorder.

The probe stamps each datagram right before its send and the receiver takes
the kernel's receive timestamp, so a one-way delay (OWD) is the emulated
delay plus the bed's own path latency. The distribution and correlation
tests measure that path in the same seconds, with a reference stream
through the other direction, unimpaired (lmkit.probe_with_path): a path
measured once per session (fixture path_owd) was not the path of a test
run minutes later in a bad spell of the host. The seed is fixed, so
every run draws the same delays (the daemon's draws are the core model's,
frame for frame); the bounds below hold for any seed.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter

import numpy as np
import pytest

from kit import on_time, require_quiet_path

from .lmkit import DIST_DIR, dist_table, lag1, mean, probe, probe_with_path, sd, table_moments

D_MS, J_MS = 30.0, 6.0
N, RATE = 3000, 1500.0


def _uniform_cdf(lo: float, hi: float):
    return lambda x: min(1.0, max(0.0, (x - lo) / (hi - lo)))


def _table_cdf(table: list[int], d: float, j: float):
    vals = sorted(d + j * t / 8192 for t in table)
    return lambda x: bisect.bisect_right(vals, x) / len(vals)


def _ks(sample: list[float], cdf) -> float:
    """Kolmogorov-Smirnov distance between a sample and a CDF."""
    xs = sorted(sample)
    n = len(xs)
    return max(max(abs(cdf(x) - i / n), abs(cdf(x) - (i + 1) / n)) for i, x in enumerate(xs))


# (the words after `delay 30ms 6ms`, table file or None for netem's uniform)
CASES = {
    "default": ("", None),
    "uniform": ("distribution uniform", None),
    "normal": ("distribution normal", "normal.dist"),
    "pareto": ("distribution pareto", "pareto.dist"),
    "paretonormal": ("distribution paretonormal", "paretonormal.dist"),
    "file": (f"distribution {DIST_DIR / 'uniform.dist'}", "uniform.dist"),
}


def _assert_sd(s: float, model_sd: float, path_sd: float, tol: float) -> None:
    """The one-way delays' sd s against the model's: the path adds its own
    noise, independent of the draws, so s is at least the model's sd and at
    most sqrt(model^2 + path^2), with path the reference stream's sd,
    each bound widened by the sampling tolerance. The two directions'
    noise is not the same frame for frame: the reference's sd is an upper
    bound of what the path adds, not a value to expect."""
    hi = math.sqrt(model_sd ** 2 + path_sd ** 2)
    assert model_sd - tol <= s <= hi + tol, (
        f"sd of OWD {s:.3f} ms, want {model_sd:.3f} .. {hi:.3f} (the path's {path_sd:.3f} added) +- {tol:.3f}")


def _densest(points: list[float], width: float = 0.1) -> float:
    """The largest density (per ms) of the distribution of `points` (ms,
    one per equally likely draw), over windows of `width` ms: an atom
    inside a window counts in it, which only makes it larger."""
    xs = np.sort(np.asarray(points))
    counts = np.searchsorted(xs, xs + width, side="left") - np.arange(len(xs))
    return float(counts.max()) / len(xs) / width


def _path(ref, model_sd: float, what: str) -> tuple[float, float, float, float]:
    """The path's own one-way delays in this run (the reference stream,
    lmkit.probe_with_path): mean, sd, mean absolute deviation (ms), and
    the share of the stream's variance they are (kit.require_quiet_path
    skips when it is too large)."""
    p = ref.owd_ms()
    p_m, p_s = mean(p), sd(p)
    mad = float(np.mean(np.abs(np.asarray(p) - p_m)))
    return p_m, p_s, mad, require_quiet_path(p_s, model_sd, N, what)


@pytest.mark.parametrize("case", list(CASES))
def test_jitter_distribution(bed, run_link, case):
    words, table_file = CASES[case]
    if table_file is None:
        # netem's uniform: discrete uniform on [D - J, D + J - 1 ns]; J is
        # the half-width: mean D, sd J/sqrt(3), kurtosis 1.8.
        exp_mean, exp_sd, kurt = D_MS, J_MS / math.sqrt(3), 1.8
        cdf = _uniform_cdf(D_MS - J_MS, D_MS + J_MS)
        densest, atom = 1 / (2 * J_MS), 0.0
    else:
        # A table: D + J x entry/8192 with the entry uniform over the
        # table; the moments are the table's own (the built-in tables are
        # the ones shipped in profiles/dist/, docs/grammar.md), J is the sd.
        table = dist_table(DIST_DIR / table_file)
        tm, ts, kurt = table_moments(table)
        exp_mean, exp_sd = D_MS + J_MS * tm, J_MS * ts
        cdf = _table_cdf(table, D_MS, J_MS)
        densest = _densest([D_MS + J_MS * t / 8192 for t in table])
        # pareto's table holds 32767, its clamp, 45 times: a step of 0.011
        atom = max(Counter(table).values()) / len(table)
    link = run_link(f"delay {D_MS:g}ms {J_MS:g}ms {words}".strip(), "", "--seed", "101")
    r, ref = probe_with_path(bed, count=N, rate=RATE, port=9110, path_port=9120)
    final = link.stop()
    a2b = final["directions"]["a2b"]
    assert a2b["rx"] == a2b["tx"] == N and a2b["dropped_total"] == 0, a2b
    assert r.received == N and r.duplicates == 0, (r.lost, r.duplicates)
    assert ref.received == N, f"the unimpaired direction lost {ref.lost} datagrams"
    # Netem's mode lets frames overtake: at 1500 frames/s (0.67 ms apart)
    # and jitter of sd >= 3.5 ms, many do.
    assert r.reordered > N // 10, f"only {r.reordered} reordered in netem mode"
    err_ms = on_time(final)["mean"] / 1e6
    p_m, p_s, p_mad, share = _path(ref, exp_sd, f"{case} distribution")
    owd = r.owd_ms()
    m, s = mean(owd), sd(owd)
    # Observed = emulated + the data plane's lateness (its emulation error,
    # which on_time() bounds) + path, independent: means add, and the
    # variance adds the path's variance. The path is the reference
    # stream's, the other direction in the same seconds.
    want_m = exp_mean + p_m + err_ms
    want_s = math.sqrt(exp_sd ** 2 + p_s ** 2)
    # Mean of N iid draws less the reference's mean of N: sd
    # sqrt(want_s^2 + p_s^2)/sqrt(N); 4 sigma (1 in 15,000 runs).
    tol_m = 4 * math.sqrt((want_s ** 2 + p_s ** 2) / N)
    # Sample sd: its standard error is sd x sqrt((kurtosis - 1) / (4 N))
    # (delta method on the sample variance); 4 sigma of that, plus 0.02 ms
    # for the difference between the two directions' noise.
    tol_s = 4 * exp_sd * math.sqrt((kurt - 1) / (4 * N)) + 0.02
    # The whole distribution: Kolmogorov-Smirnov against the expected CDF
    # (shifted by the path's mean). Critical value at alpha = 0.001 for N
    # iid draws: 1.949/sqrt(N) (conservative for a discrete CDF). Noise Z
    # added to a draw of density at most f moves its CDF by at most
    # f x E|Z - mean Z| (the path's mean absolute deviation, measured),
    # and it smears the table's atoms across their step, so the largest
    # atom is added too.
    ks = _ks([x - p_m - err_ms for x in owd], cdf)
    ks_crit = 1.949 / math.sqrt(N) + densest * p_mad + atom
    # Uncorrelated draws: the lag-1 autocorrelation of the OWD sequence has
    # sd 1/sqrt(N); 4 sigma, plus what the path's noise, correlated or
    # not, can add: its share of the variance.
    r1 = lag1(owd)
    tol_r = 4 / math.sqrt(N) + share
    print(f"{case}: OWD mean {m:.3f} ms (want {want_m:.3f} +- {tol_m:.3f}), sd {s:.3f} "
          f"(want {want_s:.3f} +- {tol_s:.3f}), KS {ks:.4f} (< {ks_crit:.4f}), lag-1 {r1:.3f} "
          f"(+- {tol_r:.3f}), reordered {r.reordered}; path mean {p_m:.3f} sd {p_s:.3f}")
    assert abs(m - want_m) <= tol_m, f"mean OWD {m:.3f} ms, want {want_m:.3f} +- {tol_m:.3f}"
    _assert_sd(s, exp_sd, p_s, tol_s)
    assert ks <= ks_crit, f"KS distance {ks:.4f} > {ks_crit:.4f}: not the {case} distribution"
    assert abs(r1) <= tol_r, f"lag-1 autocorrelation {r1:.3f} of uncorrelated jitter (+- {tol_r:.3f})"


def test_jitter_correlation(bed, run_link):
    # `delay 30ms 6ms 75%`: netem's correlated generator
    # X' = (1 - rho) U + rho X, an AR(1) process with coefficient rho = 0.75,
    # which linkemu maps linearly onto [D - J, D + J) (it scales the draw,
    # keeping the correlation). So: lag-1 autocorrelation exactly rho; mean
    # D (E[X] = 1/2); variance (1-rho)^2/(1-rho^2) = 1/7 of the uniform's,
    # so sd = J/sqrt(3)/sqrt(7) = 1.309 ms (the documented narrowing).
    rho = 0.75
    exp_sd = J_MS / math.sqrt(3) * math.sqrt((1 - rho) ** 2 / (1 - rho ** 2))
    link = run_link(f"delay {D_MS:g}ms {J_MS:g}ms 75%", "", "--seed", "102")
    r, ref = probe_with_path(bed, count=N, rate=RATE, port=9111, path_port=9121)
    final = link.stop()
    assert r.received == N
    assert ref.received == N, f"the unimpaired direction lost {ref.lost} datagrams"
    err_ms = on_time(final)["mean"] / 1e6
    p_m, p_s, _mad, share = _path(ref, exp_sd, "correlated jitter")
    owd = r.owd_ms()
    m, s, r1 = mean(owd), sd(owd), lag1(owd)
    want_s = math.sqrt(exp_sd ** 2 + p_s ** 2)
    # For AR(1) data the mean's variance is inflated by (1+rho)/(1-rho) = 7
    # (the reference's mean, its own error, adds p_s^2/N) and the sample
    # variance's by (1+rho^2)/(1-rho^2) = 3.57 (kurtosis taken as 3, above
    # the true value for a sum of uniforms); lag-1's sd is
    # sqrt((1-rho^2)/N). 4 sigma each. The path's noise (share s of the
    # variance, autocorrelation c in [-1, 1]) makes lag-1
    # (1 - s) rho + s c: off rho by at most (1 + rho) s.
    tol_m = 4 * math.sqrt((want_s ** 2 * 7 + p_s ** 2) / N)
    tol_s = 4 * exp_sd * math.sqrt(2 / (4 * N) * 3.57) + 0.02
    tol_r = 4 * math.sqrt((1 - rho ** 2) / N) + (1 + rho) * share
    print(f"correlated jitter: mean {m:.3f} ms, sd {s:.3f} (want {want_s:.3f}), lag-1 {r1:.3f} "
          f"(+- {tol_r:.3f}); path mean {p_m:.3f} sd {p_s:.3f}")
    assert abs(m - (D_MS + p_m + err_ms)) <= tol_m, m
    _assert_sd(s, exp_sd, p_s, tol_s)
    assert abs(r1 - rho) <= tol_r, f"lag-1 autocorrelation {r1:.3f}, want {rho} +- {tol_r:.3f}"


def _adjacent_inversions(r) -> tuple[int, float, int]:
    """(observed, expected, pairs): datagrams i, i+1 (both received) that
    arrived in the opposite order, and netem's swap probability for uniform
    jitter of half-width J summed over each pair's actual send gap g:
    (2J - g)(2J - g - 1 ns) / (8 J^2) (docs/grammar.md)."""
    j = 5_000_000
    obs = exp = pairs = 0
    for i in range(r.count - 1):
        a, b = r.first.get(i), r.first.get(i + 1)
        if a is None or b is None:
            continue
        pairs += 1
        g = b[1] - a[1]
        if g < 2 * j:
            exp += (2 * j - g) * (2 * j - g - 1) / (8 * j * j)
        obs += b[2] < a[2]
    return obs, exp, pairs


def test_noreorder_keeps_order_netem_mode_does_not(bed, run_link):
    n, rate = 2000, 2000.0
    link = run_link("delay 10ms 5ms", "", "--seed", "103")
    netem = probe(bed, count=n, rate=rate, port=9112)
    on_time(link.stop())
    link = run_link("delay 10ms 5ms noreorder", "", "--seed", "103")
    keep = probe(bed, count=n, rate=rate, port=9113)
    final = link.stop()
    assert netem.received == keep.received == n
    obs, exp, pairs = _adjacent_inversions(netem)
    # Pair indicators are Bernoulli(p ~ 0.45) and only neighbouring pairs
    # (sharing a frame) are dependent, so Var(sum) <= 3 x pairs x p(1-p)
    # (each covariance is at most p(1-p)); 4 sigma of that.
    p = exp / pairs
    tol = 4 * math.sqrt(3 * pairs * p * (1 - p))
    print(f"netem mode: {obs} adjacent swaps of {pairs} (expected {exp:.0f} +- {tol:.0f}), "
          f"probe reordered {netem.reordered}; noreorder: {keep.reordered}")
    assert abs(obs - exp) <= tol, f"{obs} adjacent swaps, expected {exp:.0f} +- {tol:.0f}"
    assert netem.reordered > 0
    # noreorder: deadlines never decrease, so nothing overtakes.
    assert keep.reordered == 0, f"noreorder: {keep.reordered} datagrams overtaken"
    assert _adjacent_inversions(keep)[0] == 0
    owd = keep.owd_ms()
    # Every frame leaves no earlier than its own deadline (>= D - J).
    assert min(owd) >= 5.0, min(owd)
    assert final["directions"]["a2b"]["config"] == "delay 10ms 5ms noreorder"
