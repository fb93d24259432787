"""The lab's statistics on data whose answers are known (pure Python, no root)."""

from __future__ import annotations

import math
import random

import pytest

from linkemu.lab import analysis as a
from linkemu.lab import published


# --- summary statistics -------------------------------------------------------------

def test_summary_of_known_sample():
    s = a.summary([1, 2, 3, 4])
    assert s["count"] == 4 and s["min"] == 1 and s["max"] == 4
    assert s["mean"] == 2.5
    assert s["sd"] == pytest.approx(math.sqrt(5 / 3))          # n-1 denominator
    assert s["p50"] == 2.5                                     # interpolated median
    assert s["p90"] == pytest.approx(3.7)
    assert s["p99"] == pytest.approx(3.97)


def test_summary_single_value_and_generator():
    assert a.summary([7])["sd"] == 0.0
    assert a.summary(x for x in (5, 1, 3))["p50"] == 3
    with pytest.raises(ValueError):
        a.summary([])


def test_sample_sd_of_known_sample():
    assert a.sample_sd([1, 2, 3, 4]) == pytest.approx(math.sqrt(5 / 3))   # n-1 denominator
    assert a.sample_sd([7]) == 0.0           # one value: no spread to estimate
    assert a.sample_sd([]) == 0.0


def test_percentile_matches_numpy():
    np = pytest.importorskip("numpy")
    rng = random.Random(5)
    xs = sorted(rng.expovariate(1.0) for _ in range(1001))
    for q in (0, 1, 50, 99, 99.9, 100):
        assert a.percentile_sorted(xs, q) == pytest.approx(float(np.percentile(xs, q)))


def test_reproduction_error():
    # DEMU Table 2, 1 ms column: mean(0) 12.1, mean(1 ms) 1011.8 -> 0.3 us
    assert a.reproduction_error(1011.8, 12.1, 1000) == pytest.approx(0.3)
    assert a.reproduction_error(10.0, 12.0, 0) == 2.0      # absolute value
    # Every published reproduction error follows from its own table's means.
    for t in published.DELAY_TABLES.values():
        for d, mean, repro in zip(published.INSERTED_US[1:], t["mean"][1:], t["repro"][1:]):
            assert a.reproduction_error(mean, t["mean"][0], d) == pytest.approx(repro, abs=0.051)


def test_batch_means_se_iid_and_correlated():
    rng = random.Random(1)
    iid = [rng.gauss(0, 1) for _ in range(20_000)]
    se = a.batch_means_se(iid, 20)
    # For independent data it estimates sd/sqrt(n) (with ~16 % error for 20 batches).
    assert 0.5 < se / (1 / math.sqrt(len(iid))) < 1.6
    # A step (a stall delaying a whole stretch): batch means see it, sd/sqrt(n) far less so.
    stepped = [0.0] * 10_000 + [1.0] * 10_000
    naive = a.summary(stepped)["sd"] / math.sqrt(len(stepped))
    assert a.batch_means_se(stepped, 20) > 20 * naive
    assert a.batch_means_se([3.0]) == 0.0


# --- noise floor and the bound -----------------------------------------------------------

def test_stall_residual_known_histogram():
    # 1 s of run, two gaps of 1 ms and 10 reads of 20 ns; the short gaps do not count.
    noise = {"seconds": 1.0, "histogram": [[20, 20, 10], [1_000_000, 1_000_000, 2]]}
    # sum(g^2)/(2T) = 2 * (1e6)^2 / (2 * 1e9) = 1000 ns
    assert a.stall_residual_ns(noise) == pytest.approx(1000.0)
    assert a.stall_residual_ns({"seconds": 1.0, "histogram": [[30, 30, 5]]}) == 0.0


def test_repro_bound_terms():
    b = a.repro_bound_ns(30.0, 40.0, 1_000_000, 100.0, 50.0, k=4, clock_ppm=10)
    assert b == pytest.approx(4 * 50.0 + 2 * 150.0 + 10.0)


def test_batch_means_df():
    assert a.batch_means_df(100_000) == 19
    assert a.batch_means_df(5) == 4
    assert a.batch_means_df(2) == 1
    assert a.batch_means_df(1) == 0


def test_repro_bound_uses_t_for_estimated_standard_errors():
    """The SEs come from 20 block means each, so (mean_d - mean_0) / SE is
    Student's t (Welch-Satterthwaite df), not normal: k = 4 must become t's
    quantile at the same two-sided level (6.3e-5). Equal SEs with 19 df
    each give 38 df; one SE alone gives its own 19."""
    from scipy import stats
    lvl = 2 * stats.norm.sf(4)
    b = a.repro_bound_ns(30.0, 30.0, 0, 0.0, 0.0, k=4, df_d=19, df_0=19)
    assert b == pytest.approx(stats.t.isf(lvl / 2, 38) * math.hypot(30, 30))
    b1 = a.repro_bound_ns(30.0, 0.0, 0, 0.0, 0.0, k=4, df_d=19, df_0=19)
    assert b1 == pytest.approx(stats.t.isf(lvl / 2, 19) * 30.0)
    # Without df the old reading (known SEs) stays, and no variance: no change.
    assert a.repro_bound_ns(30.0, 40.0, 0, 0.0, 0.0, k=4) == pytest.approx(200.0)
    assert a.repro_bound_ns(0.0, 0.0, 5.0, 1.0, 1.0, df_d=19, df_0=19) == pytest.approx(4.0 + 5e-5)


def test_repro_bound_keeps_its_level_with_batch_means():
    """A correct emulator (both runs from one law, block means normal):
    the share of pairs whose reproduction error exceeds the bound stays at
    the level k claims. At k = 3 that is 0.27 %; the normal multiplier with
    20 estimated block means per run gives ~0.5 % (fixed seed, 3.3
    binomial standard errors of slack)."""
    import numpy as np
    rng = np.random.default_rng(11)
    trials, k = 40_000, 3.0
    from scipy import stats
    level = 2 * stats.norm.sf(k)
    x = rng.standard_normal((trials, 2, 20))
    over = 0
    for t in range(trials):
        d, z = x[t, 0], x[t, 1]
        se_d, se_0 = a.batch_means_se(d, 20), a.batch_means_se(z, 20)
        err = a.reproduction_error(float(d.mean()), float(z.mean()), 0.0)
        over += err > a.repro_bound_ns(se_d, se_0, 0, 0.0, 0.0, k=k,
                                       df_d=a.batch_means_df(20), df_0=a.batch_means_df(20))
    assert over <= level * trials + 3.3 * math.sqrt(trials * level * (1 - level))


# --- Wilson interval ---------------------------------------------------------------------

def test_wilson_known_values():
    # 95 %: 10 of 100 -> [0.0552, 0.1744] (Wilson 1927; textbook value)
    lo, hi = a.wilson_interval(10, 100, 0.95)
    assert lo == pytest.approx(0.05523, abs=1e-4) and hi == pytest.approx(0.17437, abs=1e-4)
    # k = 0: lower bound 0, upper z^2/(n + z^2)
    z = a.z_for(0.99)
    lo, hi = a.wilson_interval(0, 10**6, 0.99)
    assert lo == 0.0 and hi == pytest.approx(z * z / (10**6 + z * z), rel=1e-9)
    lo, hi = a.wilson_interval(50, 50, 0.95)
    assert hi == 1.0 and lo < 1.0
    assert a.z_for(0.95) == pytest.approx(1.959964, abs=1e-6)


def test_wilson_equals_scipys_for_whole_counts():
    """The closed form is scipy's Wilson interval wherever scipy accepts the
    counts (whole numbers); ours also takes effective counts (loss_check)."""
    from scipy.stats import binomtest
    for k, n, conf in ((10, 100, 0.95), (0, 10**6, 0.99), (1, 10**5, 0.99), (993, 100_000, 0.99),
                       (50, 50, 0.95), (7, 13, 0.9)):
        ci = binomtest(k, n).proportion_ci(confidence_level=conf, method="wilson")
        lo, hi = a.wilson_interval(k, n, conf)
        assert lo == pytest.approx(ci.low, abs=1e-12) and hi == pytest.approx(ci.high, abs=1e-12)


def test_percentiles_known_values():
    from linkemu.instruments.stats import percentile
    assert a.percentile_sorted([1, 2, 3, 4], 50) == 2.5
    assert a.percentile_sorted([1, 2, 3, 4], 25) == 1.75
    assert percentile([4, 1, 3, 2], 50) == 2.5       # unsorted is fine
    assert percentile([7], 99) == 7.0
    with pytest.raises(ValueError):
        percentile([], 50)


def test_binomial_bound_known_values():
    from linkemu.instruments.stats import binomial_bound
    # Binomial(10, 1/2): P(X <= 1) = 11/1024 < 5 % <= P(X <= 2) = 56/1024,
    # so the central 90 % is [2, 8], i.e. rates [0.2, 0.8].
    assert binomial_bound(0.5, 10, 0.9) == (0.2, 0.8)
    lo, hi = binomial_bound(0.2, 5000)                 # 99.9 %: about p +- 3.29 sigma
    sigma = math.sqrt(0.2 * 0.8 / 5000)
    assert 0.2 - 3.4 * sigma <= lo <= 0.2 - 3.2 * sigma and 0.2 + 3.2 * sigma <= hi <= 0.2 + 3.4 * sigma


def test_wilson_bad_input():
    with pytest.raises(ValueError):
        a.wilson_interval(1, 0)
    with pytest.raises(ValueError):
        a.wilson_interval(5, 4)
    with pytest.raises(ValueError):
        a.z_for(1.0)


def test_wilson_coverage_by_simulation():
    """At 99 % the interval covers the true p in ~99 % of binomial draws."""
    rng = random.Random(42)
    p, n, trials = 0.01, 2000, 2000
    covered = 0
    for _ in range(trials):
        k = _binom(rng, n, p)
        lo, hi = a.wilson_interval(k, n, 0.99)
        covered += lo <= p <= hi
    assert covered / trials > 0.975


def _binom(rng, n, p):
    # geometric skipping: fast binomial draws for small p
    k, i = 0, -1
    while True:
        i += int(math.log(1 - rng.random()) / math.log(1 - p)) + 1
        if i >= n:
            return k
        k += 1


def test_loss_check():
    c = a.loss_check(1000, 100_000, 0.01, 0.99)
    assert c["measured"] == 0.01 and c["pass"]
    assert not a.loss_check(1200, 100_000, 0.01, 0.99)["pass"]     # 20 % high: rejected
    assert a.loss_check(0, 100_000, 1e-6)["pass"]                   # rare: 0 is consistent


# --- run lengths -------------------------------------------------------------------------

def test_run_lengths_censored_ends():
    T, F = True, False
    seq = [T, T, F, T, F, F, T, T, T, F, F, F, T]
    loss, good = a.run_lengths(seq)
    # first run (T,T) and last run (T) are cut by the ends: left out
    assert loss == {1: 1, 2: 1, 3: 1}
    assert good == {1: 1, 3: 1}
    assert a.run_lengths([]) == ({}, {})
    assert a.run_lengths([F, F, F]) == ({}, {})
    assert a.pairs_to_hist([[1, 5], [3, 2]]) == {1: 5, 3: 2}


def test_geometric_pmf():
    pmf = a.geometric_pmf(0.25)
    assert pmf(1) == 0.75 and pmf(2) == pytest.approx(0.1875) and pmf(0) == 0.0
    assert math.fsum(pmf(k) for k in range(1, 200)) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        a.geometric_pmf(1.0)


# --- chi-square ---------------------------------------------------------------------------

def test_chi2_sf_known_values():
    assert a.chi2_sf(3.841458820694124, 1) == pytest.approx(0.05, rel=1e-9)
    assert a.chi2_sf(18.307038053275146, 10) == pytest.approx(0.05, rel=1e-9)
    assert a.chi2_sf(2.0, 2) == pytest.approx(math.exp(-1.0), rel=1e-12)   # df 2: exp(-x/2)
    assert a.chi2_sf(0.0, 3) == 1.0
    assert a.chi2_sf(100.0, 3) == pytest.approx(1.5542e-21, rel=1e-3)     # tiny, not 0
    with pytest.raises(ValueError):
        a.chi2_sf(1.0, 0)


def test_chi_square_exact_fit_and_pooling():
    # Observed exactly as expected under geometric(stay=0.5), N = 1024
    pmf = a.geometric_pmf(0.5)
    obs = {k: int(1024 * pmf(k)) for k in range(1, 11)}
    obs[11] = 1024 - sum(obs.values())
    c = a.chi_square_runs(obs, pmf)
    assert c.statistic == pytest.approx(0.0, abs=0.2)
    assert c.p_value > 0.9 and c.passed
    # every bin expects >= 5, and the bins cover 1..inf once
    assert all(b[3] >= 5 for b in c.bins)
    assert c.bins[0][0] == 1 and c.bins[-1][1] is None
    for b1, b2 in zip(c.bins, c.bins[1:]):
        assert b2[0] == b1[1] + 1
    assert sum(b[2] for b in c.bins) == 1024
    assert sum(b[3] for b in c.bins) == pytest.approx(1024)
    assert c.df == len(c.bins) - 1


def test_chi_square_pools_tail_below_five():
    # Bernoulli p = 1e-2, 1000 loss runs: P(L=1) = 0.99 -> 990, the rest expects 10:
    # two bins, [1] and [2, inf).
    pmf = a.geometric_pmf(0.01)
    c = a.chi_square_runs({1: 990, 2: 10}, pmf)
    assert [b[:2] for b in c.bins] == [[1, 1], [2, None]]
    assert c.df == 1 and c.passed
    # A tail that would expect < 5 is merged into the last bin: 200 runs -> one bin, no test.
    c = a.chi_square_runs({1: 199, 2: 1}, pmf)
    assert len(c.bins) == 1 and c.p_value is None and c.passed is None


def test_chi_square_rejects_wrong_law():
    # Runs drawn from geometric(0.5) tested against geometric(0.2)
    rng = random.Random(3)
    obs: dict[int, int] = {}
    for _ in range(5000):
        k = 1
        while rng.random() < 0.5:
            k += 1
        obs[k] = obs.get(k, 0) + 1
    assert a.chi_square_runs(obs, a.geometric_pmf(0.5)).passed
    bad = a.chi_square_runs(obs, a.geometric_pmf(0.2))
    assert bad.p_value < 1e-10 and bad.passed is False


def test_bernoulli_runs_fit_geometric():
    rng = random.Random(11)
    p = 0.05
    seq = [rng.random() >= p for _ in range(200_000)]
    loss, good = a.run_lengths(seq)
    assert a.chi_square_runs(loss, a.geometric_pmf(p)).p_value > 0.001
    assert a.chi_square_runs(good, a.geometric_pmf(1 - p)).p_value > 0.001


# --- Gilbert-Elliott -----------------------------------------------------------------------

def test_ge_simple_gilbert_closed_forms():
    g = a.GEParams(p=0.02, r=0.25)                 # loss_bad 1, loss_good 0
    assert a.ge_stationary(g) == pytest.approx((0.25 / 0.27, 0.02 / 0.27))
    assert a.ge_loss_rate(g) == pytest.approx(0.02 / 0.27)
    loss = a.ge_run_pmf(g, "loss", 50)
    good = a.ge_run_pmf(g, "good", 50)
    for n in (1, 2, 5, 20):
        assert loss[n - 1] == pytest.approx(0.25 * 0.75 ** (n - 1))
        assert good[n - 1] == pytest.approx(0.02 * 0.98 ** (n - 1))
    assert a.ge_mean_run(g, "loss") == pytest.approx(4.0, rel=1e-6)       # 1/r
    assert a.ge_mean_run(g, "good") == pytest.approx(50.0, rel=1e-6)      # 1/p


def test_ge_reduces_to_bernoulli():
    # r = 1 - p: the next state does not depend on the current one -> iid loss p
    p = 0.1
    g = a.GEParams(p=p, r=1 - p)
    assert a.ge_loss_rate(g) == pytest.approx(p)
    bern = a.geometric_pmf(p)
    for n, v in enumerate(a.ge_run_pmf(g, "loss", 10), 1):
        assert v == pytest.approx(bern(n))


def test_ge_pmfs_sum_to_one_general():
    g = a.GEParams(p=0.01, r=0.3, loss_bad=0.9, loss_good=0.001)
    assert math.fsum(a.ge_run_pmf(g, "loss", 5000)) == pytest.approx(1.0, abs=1e-9)
    assert math.fsum(a.ge_run_pmf(g, "good", 200_000)) == pytest.approx(1.0, abs=1e-6)
    assert a.ge_loss_rate(g) == pytest.approx((0.3 * 0.001 + 0.01 * 0.9) / 0.31)


def test_ge_theory_matches_simulation():
    """The general four-parameter chain, simulated in netem's order, fits the
    theory: rate inside its Wilson interval, run lengths pass chi-square."""
    g = a.GEParams(p=0.01, r=0.3, loss_bad=0.9, loss_good=0.001)
    seq = a.simulate_ge(g, 400_000, seed=7)
    lost = len(seq) - sum(seq)
    # GE losses are correlated, so the binomial interval is too narrow for a
    # strict test: compare the rate to 5 %.
    assert lost / len(seq) == pytest.approx(a.ge_loss_rate(g), rel=0.05)
    loss, good = a.run_lengths(seq)
    c1 = a.chi_square_runs(loss, a.ge_run_law(g, "loss"))
    c2 = a.chi_square_runs(good, a.ge_run_law(g, "good"))
    assert c1.df >= 2 and c1.p_value > 0.001
    assert c2.df >= 10 and c2.p_value > 0.001
    # and the wrong law (Bernoulli at the same mean rate) is rejected for loss runs
    bern = a.chi_square_runs(loss, a.geometric_pmf(a.ge_loss_rate(g)))
    assert bern.p_value < 1e-6


def test_ge_params_validation_and_grammar():
    with pytest.raises(ValueError):
        a.GEParams(p=1.5, r=0.1)
    with pytest.raises(ValueError):
        a.GEParams(p=0.0, r=0.0)
    assert (a.GEParams(p=0.01, r=0.3, loss_bad=0.9, loss_good=0.001).grammar()
            == "loss gemodel 1% 30% 90% 0.1%")


def test_cwnd_reductions():
    assert a.cwnd_reductions([10, 20, 15, 15, 30, 5]) == 2
    assert a.cwnd_reductions([]) == 0


def test_published_tables_are_complete():
    for name, t in published.DELAY_TABLES.items():
        for k in ("max", "min", "mean", "sd", "repro"):
            assert len(t[k]) == len(published.INSERTED_US), (name, k)
        assert all(mn <= me <= mx for mn, me, mx in zip(t["min"], t["mean"], t["max"]))
    assert published.loss_row(0.01)[0] == 0.01013
    assert published.loss_row(0.5) is None


def test_ge_variance_factor_bernoulli_is_one():
    assert a.ge_variance_factor(a.GEParams(p=0.2, r=0.8)) == pytest.approx(1.0)


def test_ge_variance_factor_matches_simulation():
    """The spread of the loss rate over many simulated GE sequences is the
    binomial spread times the factor (within sampling error of the variance)."""
    g = a.GEParams(p=0.05, r=0.2, loss_bad=0.8, loss_good=0.01)
    vif = a.ge_variance_factor(g)
    assert vif > 3                                      # bursty: clearly not binomial
    n, reps = 4000, 400
    rates = [1 - sum(a.simulate_ge(g, n, seed=s)) / n for s in range(reps)]
    m = math.fsum(rates) / reps
    var = math.fsum((x - m) ** 2 for x in rates) / (reps - 1)
    mu = a.ge_loss_rate(g)
    assert m == pytest.approx(mu, rel=0.03)
    # the sample variance of 400 draws is within ~ +-20 % of the truth
    assert var / (mu * (1 - mu) / n) == pytest.approx(vif, rel=0.25)


def test_loss_check_variance_factor_widens():
    narrow = a.loss_check(3158, 100_000, 0.03, 0.99)
    wide = a.loss_check(3158, 100_000, 0.03, 0.99, variance_factor=4.86)
    assert not narrow["pass"] and wide["pass"]
    assert wide["wilson"][0] < narrow["wilson"][0] and wide["measured"] == narrow["measured"]


def test_excess_histogram_counts_every_frame_once():
    """A value exactly on the last bin's right edge lands in that bin (numpy
    closes it) and must not be counted again as beyond it: this once made a
    full delay-precision run's results file fail its own validation."""
    import numpy as np
    from linkemu.lab.analysis import excess_histogram
    rng = np.random.default_rng(1)
    for trial in range(200):
        x = rng.integers(0, 1000, size=2000)
        lo, width, counts, above = excess_histogram(x, 50)
        edge = lo + width * 50
        x_edge = np.append(x, [int(edge)] * 3)   # frames exactly on the edge
        lo2, width2, counts2, above2 = excess_histogram(x_edge, 50)
        assert sum(counts) + above == x.size
        assert sum(counts2) + above2 == x_edge.size


def test_welch_margin_is_the_t_quantile_times_the_standard_error():
    """Checked by hand: variances 1 and 4, n = 3 each, Welch-Satterthwaite df."""
    from scipy import stats
    x, y = [1.0, 2.0, 3.0], [4.0, 6.0, 8.0]
    se2 = 1 / 3 + 4 / 3
    df = se2 ** 2 / ((1 / 3) ** 2 / 2 + (4 / 3) ** 2 / 2)
    assert abs(a.welch_margin(x, y, 0.001) - stats.t.ppf(0.999, df) * se2 ** 0.5) < 1e-12
    assert a.welch_margin([5.0, 5.0], [5.0, 5.0], 0.001) == 0.0


def test_poisson_excess_p_is_the_conditional_binomial_tail():
    """Checked by hand: with equal exposures each of K events falls in
    either stretch with probability 1/2."""
    assert a.poisson_excess_p(3, 1.0, 0, 1.0) == pytest.approx(1 / 8)
    assert a.poisson_excess_p(2, 1.0, 1, 1.0) == pytest.approx(4 / 8)      # P(X >= 2), X ~ B(3, 1/2)
    assert a.poisson_excess_p(1, 1.0, 0, 3.0) == pytest.approx(1 / 4)      # share 1/4
    assert a.poisson_excess_p(0, 1.0, 7, 1.0) == 1.0
    # 0.5^9 = 0.00195 >= 0.001 > 0.5^10: nine events against none in as long.
    assert a.poisson_excess_allowed(1.0, 0, 1.0, 0.001) == 9
    with pytest.raises(ValueError):
        a.poisson_excess_p(1, 0.0, 1, 1.0)
    with pytest.raises(ValueError):         # no control stretch: nothing to compare with
        a.poisson_excess_allowed(1.0, 0, 0.0, 0.001)


def test_poisson_excess_test_keeps_its_level_and_finds_a_fivefold_rate():
    """Equal rates: the share of rejections at alpha stays within alpha (the
    exact test is conservative), bounded above by alpha plus 3.3 binomial
    standard errors (fixed seed). A rate five times the reference's is
    found nearly always."""
    import numpy as np
    rng = np.random.default_rng(7)
    trials, alpha = 20_000, 0.01
    k = rng.poisson(5.0, trials)            # exposure 1 at rate 5
    k_ref = rng.poisson(10.0, trials)       # exposure 2 at the same rate
    rejected = sum(a.poisson_excess_p(int(x), 1.0, int(y), 2.0) < alpha for x, y in zip(k, k_ref))
    assert rejected <= alpha * trials + 3.3 * math.sqrt(trials * alpha * (1 - alpha))
    k_hot = rng.poisson(25.0, 2_000)
    k_ref2 = rng.poisson(10.0, 2_000)
    found = sum(a.poisson_excess_p(int(x), 1.0, int(y), 2.0) < alpha for x, y in zip(k_hot, k_ref2))
    assert found >= 0.95 * 2_000
