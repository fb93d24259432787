"""delay with jitter: every distribution, correlation, and noreorder.

The probe stamps each datagram right before its send and the receiver takes
the kernel's receive timestamp, so a one-way delay (OWD) is the emulated
delay plus the bed's own path latency, which the session measured once
through an unimpaired linkemud (fixture path_owd). The seed is fixed, so
every run draws the same delays (the daemon's draws are the core model's,
frame for frame); the bounds below hold for any seed.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter

import pytest

from kit import on_time

from .lmkit import DIST_DIR, dist_table, lag1, mean, probe, sd, table_moments

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
    most sqrt(model^2 + path^2), with path the baseline's sd (fixture
    path_owd), each bound widened by the sampling tolerance. The path's
    noise is not the same from one second to the next: a baseline that
    caught the VM's stalls (sd 0.62 ms, p99 2 ms, seen) is an upper bound
    of it, not a value to expect."""
    hi = math.sqrt(model_sd ** 2 + path_sd ** 2)
    assert model_sd - tol <= s <= hi + tol, (
        f"sd of OWD {s:.3f} ms, want {model_sd:.3f} .. {hi:.3f} (the path's {path_sd:.3f} added) +- {tol:.3f}")


@pytest.mark.parametrize("case", list(CASES))
def test_jitter_distribution(bed, run_link, path_owd, case):
    words, table_file = CASES[case]
    if table_file is None:
        # netem's uniform: discrete uniform on [D - J, D + J - 1 ns]; J is
        # the half-width: mean D, sd J/sqrt(3), kurtosis 1.8.
        exp_mean, exp_sd, kurt = D_MS, J_MS / math.sqrt(3), 1.8
        cdf = _uniform_cdf(D_MS - J_MS, D_MS + J_MS)
    else:
        # A table: D + J x entry/8192 with the entry uniform over the
        # table; the moments are the table's own (the built-in tables are
        # the ones shipped in profiles/dist/, docs/grammar.md), J is the sd.
        table = dist_table(DIST_DIR / table_file)
        tm, ts, kurt = table_moments(table)
        exp_mean, exp_sd = D_MS + J_MS * tm, J_MS * ts
        cdf = _table_cdf(table, D_MS, J_MS)
    link = run_link(f"delay {D_MS:g}ms {J_MS:g}ms {words}".strip(), "", "--seed", "101")
    r = probe(bed, count=N, rate=RATE, port=9110)
    final = link.stop()
    err_ms = on_time(final)["mean"] / 1e6
    assert r.received == N and r.duplicates == 0, (r.lost, r.duplicates)
    owd = r.owd_ms()
    m, s = mean(owd), sd(owd)
    # Observed = emulated + the data plane's lateness (its emulation error,
    # which on_time() bounds) + path, independent: means add, and the
    # variance adds the path's variance.
    want_m = exp_mean + path_owd["mean"] + err_ms
    want_s = math.sqrt(exp_sd ** 2 + path_owd["sd"] ** 2)
    # Mean of N iid draws: sd want_s/sqrt(N); 4 sigma (1 in 15,000 runs).
    tol_m = 4 * want_s / math.sqrt(N)
    # Sample sd: its standard error is sd x sqrt((kurtosis - 1) / (4 N))
    # (delta method on the sample variance); 4 sigma of that, plus 0.02 ms
    # for the machine's scheduling noise, which path_owd measured only once.
    tol_s = 4 * exp_sd * math.sqrt((kurt - 1) / (4 * N)) + 0.02
    # The whole distribution: Kolmogorov-Smirnov against the expected CDF
    # (shifted by the path's mean). Critical value at alpha = 0.001 for N
    # iid draws: 1.949/sqrt(N) (conservative for a discrete CDF); the path's
    # spread (~0.01-0.05 ms) moves the CDF by less than 0.005 at the
    # steepest density here, which we add, and it smears the table's atoms
    # (pareto's table holds 32767, its clamp, 45 times: a step of 0.011)
    # across their step, so the largest atom is added too.
    ks = _ks([x - path_owd["mean"] - err_ms for x in owd], cdf)
    atom = 0.0 if table_file is None else max(Counter(table).values()) / len(table)
    ks_crit = 1.949 / math.sqrt(N) + 0.005 + atom
    # Uncorrelated draws: the lag-1 autocorrelation of the OWD sequence has
    # sd 1/sqrt(N); 4 sigma.
    r1 = lag1(owd)
    print(f"{case}: OWD mean {m:.3f} ms (want {want_m:.3f} +- {tol_m:.3f}), sd {s:.3f} "
          f"(want {want_s:.3f} +- {tol_s:.3f}), KS {ks:.4f} (< {ks_crit:.4f}), lag-1 {r1:.3f}, "
          f"reordered {r.reordered}")
    assert abs(m - want_m) <= tol_m, f"mean OWD {m:.3f} ms, want {want_m:.3f} +- {tol_m:.3f}"
    _assert_sd(s, exp_sd, path_owd["sd"], tol_s)
    assert ks <= ks_crit, f"KS distance {ks:.4f} > {ks_crit:.4f}: not the {case} distribution"
    assert abs(r1) <= 4 / math.sqrt(N), f"lag-1 autocorrelation {r1:.3f} of uncorrelated jitter"
    # Netem's mode lets frames overtake: at 1500 frames/s (0.67 ms apart)
    # and jitter of sd >= 3.5 ms, many do.
    assert r.reordered > N // 10, f"only {r.reordered} reordered in netem mode"
    a2b = final["directions"]["a2b"]
    assert a2b["rx"] == a2b["tx"] == N and a2b["dropped_total"] == 0, a2b


def test_jitter_correlation(bed, run_link, path_owd):
    # `delay 30ms 6ms 75%`: netem's correlated generator
    # X' = (1 - rho) U + rho X, an AR(1) process with coefficient rho = 0.75,
    # which linkemu maps linearly onto [D - J, D + J) (it scales the draw,
    # keeping the correlation). So: lag-1 autocorrelation exactly rho; mean
    # D (E[X] = 1/2); variance (1-rho)^2/(1-rho^2) = 1/7 of the uniform's,
    # so sd = J/sqrt(3)/sqrt(7) = 1.309 ms (the documented narrowing).
    rho = 0.75
    link = run_link(f"delay {D_MS:g}ms {J_MS:g}ms 75%", "", "--seed", "102")
    r = probe(bed, count=N, rate=RATE, port=9111)
    err_ms = on_time(link.stop())["mean"] / 1e6
    assert r.received == N
    owd = r.owd_ms()
    m, s, r1 = mean(owd), sd(owd), lag1(owd)
    exp_sd = J_MS / math.sqrt(3) * math.sqrt((1 - rho) ** 2 / (1 - rho ** 2))
    want_s = math.sqrt(exp_sd ** 2 + path_owd["sd"] ** 2)
    # For AR(1) data the mean's variance is inflated by (1+rho)/(1-rho) = 7
    # and the sample variance's by (1+rho^2)/(1-rho^2) = 3.57 (kurtosis
    # taken as 3, above the true value for a sum of uniforms); lag-1's sd is
    # sqrt((1-rho^2)/N). 4 sigma each; the path's own noise lowers r1 by
    # the factor var/(var + path var) (< 0.2 % here).
    tol_m = 4 * want_s * math.sqrt(7 / N)
    tol_s = 4 * exp_sd * math.sqrt(2 / (4 * N) * 3.57) + 0.02
    tol_r = 4 * math.sqrt((1 - rho ** 2) / N) + 0.01
    print(f"correlated jitter: mean {m:.3f} ms, sd {s:.3f} (want {want_s:.3f}), lag-1 {r1:.3f}")
    assert abs(m - (D_MS + path_owd["mean"] + err_ms)) <= tol_m, m
    _assert_sd(s, exp_sd, path_owd["sd"], tol_s)
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
