"""The lab's statistics, as pure functions of the data (no I/O, no bed).

Everything here is unit-tested on data whose answers are known
(tests/lab/test_analysis.py). Conventions:

- Percentiles interpolate linearly between order statistics (numpy's
  default, and owdprobe's), so p50 of [1, 2, 3, 4] is 2.5.
- sd is the sample standard deviation (n - 1 in the denominator).
- Run lengths: a *loss run* is a maximal stretch of consecutive lost frames
  (in sequence order), a *good run* one of consecutive received frames. The
  first and the last run of a sequence are cut by its ends (censored) and
  are left out, as owdprobe does.
- Gilbert-Elliott parameters follow netem's `loss gemodel p [r [1-h [1-k]]]`
  (tc-netem(8)): p = P(good -> bad), r = P(bad -> good), loss_bad = 1 - h
  (loss probability in the bad state), loss_good = 1 - k (in the good state).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

# --- summary statistics -----------------------------------------------------------


def percentile_sorted(s: Sequence[float], q: float) -> float:
    """q in [0, 100] of a non-empty sample (numpy's linear interpolation;
    the name says the lab passes sorted arrays, which numpy then sorts
    cheaply)."""
    import numpy as np
    if len(s) == 0:
        raise ValueError("percentile of an empty sample")
    return float(np.percentile(s, q))


def sample_sd(values: Sequence[float]) -> float:
    """The sample standard deviation (n - 1 in the denominator): the
    estimate of the spread of what the values were drawn from. 0.0 for
    fewer than two values, which show no spread to estimate."""
    import numpy as np
    a = np.asarray(values, dtype=np.float64)
    return float(a.std(ddof=1)) if a.size > 1 else 0.0


def summary(values: Iterable[float]) -> dict:
    """count, min, max, mean, sd, p50, p90, p99, p99.9 of a sample.

    Accepts any iterable, including a numpy array (used for millions of
    samples: the sort and sums then run in numpy)."""
    import numpy as np
    if not hasattr(values, "__len__"):
        values = list(values)
    s = np.sort(np.asarray(values, dtype=np.float64))
    n = int(s.size)
    if n == 0:
        raise ValueError("summary of an empty sample")
    mean = float(s.mean())
    return {"count": n, "min": float(s[0]), "max": float(s[-1]), "mean": mean,
            "sd": sample_sd(s),
            "p50": percentile_sorted(s, 50), "p90": percentile_sorted(s, 90),
            "p99": percentile_sorted(s, 99), "p999": percentile_sorted(s, 99.9)}


def reproduction_error(mean_d: float, mean_0: float, inserted: float) -> float:
    """DEMU's reproduction error: |mean(d) - (mean(0) + d)|, all in one unit.

    mean(0) is the path's own delay with nothing inserted; a perfect emulator
    adds exactly d to it."""
    return abs(mean_d - (mean_0 + inserted))


def batch_means_se(values: Sequence[float], batches: int = 20) -> float:
    """Standard error of the mean of a time series by the method of batch
    means: split into `batches` consecutive blocks, SE = sd(block means) /
    sqrt(blocks).

    One-way delays are not independent: one scheduling stall delays every
    frame queued behind it. sd/sqrt(n) then understates how far the mean can
    move from run to run; consecutive blocks long compared to a stall are
    nearly independent, so the spread of their means does not."""
    import numpy as np
    a = np.asarray(values, dtype=np.float64)
    n = int(a.size)
    if n < 2:
        return 0.0
    b = max(2, min(batches, n))
    size = n // b
    means = [float(a[i * size:(i + 1) * size].mean()) if i < b - 1 else float(a[i * size:].mean())
             for i in range(b)]
    m = math.fsum(means) / b
    var = math.fsum((x - m) ** 2 for x in means) / (b - 1)
    return math.sqrt(var / b)


# --- noise floor -----------------------------------------------------------------------

STALL_NS = 10_000   # gaps longer than this are time the CPU was taken away


def stall_residual_ns(noise: Mapping) -> float:
    """Mean extra wait a frame arriving at a random moment suffers because
    the CPU is stalled, from a noisefloor histogram: sum(g^2) / (2 T) over
    the gaps g > 10 us (the residual-life formula: a random instant falls in
    a gap of length g with probability g/T and then waits g/2 on average).

    This is how much machine noise adds to a mean delay measured on that
    CPU; it is the same in expectation for every inserted delay, so it
    cancels in the reproduction error but its run-to-run variation does not."""
    total_ns = float(noise["seconds"]) * 1e9
    if total_ns <= 0:
        return 0.0
    acc = 0.0
    for lo, hi, count in noise.get("histogram", []):
        mid = (float(lo) + float(hi)) / 2.0
        if mid > STALL_NS:
            acc += count * mid * mid
    return acc / (2.0 * total_ns)


def batch_means_df(n: int, batches: int = 20) -> int:
    """Degrees of freedom of batch_means_se's variance estimate: the number
    of block means it used, less one."""
    return max(2, min(batches, int(n))) - 1 if n >= 2 else 0


def repro_bound_ns(se_d: float, se_0: float, inserted_ns: float,
                   residual_daemon_ns: float, residual_tool_ns: float,
                   k: float = 4.0, clock_ppm: float = 10.0,
                   df_d: float | None = None, df_0: float | None = None) -> float:
    """Largest reproduction error consistent with a correct emulator on this
    machine, from the measurement's own spread and the machine's noise floor:

        k * sqrt(se_d^2 + se_0^2)             the two means' sampling error
      + 2 * (residual_daemon + residual_tool)  machine noise (stall_residual_ns
                                               of each CPU), which can fall in
                                               either run: counted twice
      + inserted * clock_ppm * 1e-6            the daemon's TSC rate vs the
                                               kernel's clock (calibrated, but
                                               not to better than ~10 ppm here)

    se_* are batch-means standard errors (batch_means_se); k = 4 makes a
    false alarm from sampling alone about 6e-5 (two-sided) for normal block
    means *when the standard errors are known*.

    They are not: each is estimated from 20 block means (19 df), so the
    difference of the two means over its estimated SE follows Student's t
    with Welch-Satterthwaite df = (v_d + v_0)^2 / (v_d^2/df_d + v_0^2/df_0)
    (19 .. 38), not the normal law. 4 x SE then leaves 2.8e-4 .. 7.7e-4 to
    chance, 5-12 times the level claimed. Given df_d and df_0
    (batch_means_df), k is read as the normal quantile whose two-sided level
    is wanted, and the multiplier is t's quantile at that level and the
    Welch-Satterthwaite df (4 -> 4.50 at 38 df, 5.10 at 19 df)."""
    if df_d is not None and df_0 is not None:
        k = _t_equivalent(k, se_d, se_0, df_d, df_0)
    return (k * math.hypot(se_d, se_0) + 2.0 * (residual_daemon_ns + residual_tool_ns)
            + inserted_ns * clock_ppm * 1e-6)


def _t_equivalent(z: float, se_a: float, se_b: float, df_a: float, df_b: float) -> float:
    """The Student-t multiplier with the two-sided level of the normal z,
    at the Welch-Satterthwaite df of se_a^2 + se_b^2 (z itself when no
    variance was estimated)."""
    from scipy import stats
    va, vb = se_a * se_a, se_b * se_b
    den = (va * va / df_a if df_a > 0 else 0.0) + (vb * vb / df_b if df_b > 0 else 0.0)
    if va + vb == 0 or den == 0:
        return z
    df = (va + vb) ** 2 / den
    return float(stats.t.isf(stats.norm.sf(z), df))


# --- two samples ------------------------------------------------------------------------

def welch_margin(a: list[float], b: list[float], alpha: float) -> float:
    """How far mean(a) may fall below mean(b) before a one-sided Welch
    t-test rejects "a is not below b" at level alpha: t(1 - alpha, df)
    times the standard error of the difference (Welch-Satterthwaite df).
    Zero when neither sample varied."""
    from scipy import stats
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    se2 = va + vb
    if se2 == 0:
        return 0.0
    df = se2 ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    return float(stats.t.ppf(1 - alpha, df)) * se2 ** 0.5


def poisson_excess_p(k: int, t: float, k_ref: int, t_ref: float) -> float:
    """One-sided p-value of "k events in exposure t are no more than k_ref
    events in exposure t_ref would lead one to expect", both stretches
    sharing one Poisson rate: the exact conditional test of two Poisson
    rates. Given K = k + k_ref events in all, the share that falls in the
    first stretch is Binomial(K, t / (t + t_ref)) whatever the rate, so
    the p-value is that binomial's P(X >= k). It needs no estimate of the
    rate, and is exact (conservative) with few events."""
    from scipy import stats
    if k <= 0:
        return 1.0
    if t <= 0 or t_ref <= 0:
        # t_ref = 0 would put every event in the first stretch whatever k
        # (p-value 1), and poisson_excess_allowed would never stop.
        raise ValueError(f"exposures must be positive (t {t}, t_ref {t_ref})")
    return float(stats.binom.sf(k - 1, k + k_ref, t / (t + t_ref)))


def poisson_excess_allowed(t: float, k_ref: int, t_ref: float, alpha: float) -> int:
    """The most events an exposure t may have before poisson_excess_p
    against (k_ref, t_ref) falls below alpha."""
    k = 0
    while poisson_excess_p(k + 1, t, k_ref, t_ref) >= alpha:
        k += 1
    return k


# --- loss rate ---------------------------------------------------------------------------

def z_for(confidence: float) -> float:
    """Two-sided normal quantile: 0.95 -> 1.96, 0.99 -> 2.576."""
    from scipy.stats import norm
    if not 0 < confidence < 1:
        raise ValueError("confidence must be in (0, 1)")
    return float(norm.ppf(0.5 + confidence / 2.0))


def wilson_interval(k: float, n: float, confidence: float = 0.99) -> tuple[float, float]:
    """Wilson score interval for a proportion: k events in n trials (k and n
    may be effective, non-integer counts: see loss_check).

    Unlike the normal approximation it stays inside [0, 1] and is right for
    k = 0 or rare events (0 of 10^6 gives [0, ~6.6e-6] at 99 %), which is
    where loss rates of 1e-6 .. 1e-4 live. The closed form stays here
    (scipy's binomtest(k, n).proportion_ci(method="wilson") is the same
    interval, and the tests compare the two) because loss_check passes
    effective, non-integer counts, which scipy refuses."""
    if n <= 0:
        raise ValueError("wilson_interval needs n > 0")
    if not 0 <= k <= n:
        raise ValueError(f"wilson_interval: k={k} outside 0..n={n}")
    z = z_for(confidence)
    phat = k / n
    z2 = z * z
    den = 1.0 + z2 / n
    centre = (phat + z2 / (2 * n)) / den
    half = z * math.sqrt(phat * (1 - phat) / n + z2 / (4 * n * n)) / den
    lo, hi = max(0.0, centre - half), min(1.0, centre + half)
    if k == 0:
        lo = 0.0
    if k == n:
        hi = 1.0
    return lo, hi


def loss_check(lost: int, n: int, specified: float, confidence: float = 0.99,
               variance_factor: float = 1.0) -> dict:
    """Measured loss rate, its Wilson interval, and whether the specified
    rate lies inside it (pass).

    variance_factor > 1 widens the interval for correlated losses (a
    Gilbert-Elliott chain, ge_variance_factor): the interval is computed
    for the effective sample n / factor with the same observed rate."""
    if variance_factor < 1:
        raise ValueError("variance_factor must be >= 1")
    lo, hi = wilson_interval(lost / variance_factor, n / variance_factor, confidence)
    return {"frames": n, "lost": lost, "measured": lost / n if n else 0.0,
            "specified": specified, "confidence": confidence, "wilson": [lo, hi],
            "variance_factor": variance_factor, "pass": lo <= specified <= hi}


# --- run lengths -------------------------------------------------------------------------

def run_lengths(received: Sequence[bool]) -> tuple[dict[int, int], dict[int, int]]:
    """(loss runs, good runs) of a received/lost sequence in sequence order,
    each as {length: count}, without the censored first and last run."""
    runs: list[tuple[bool, int]] = []
    for x in received:
        x = bool(x)
        if runs and runs[-1][0] == x:
            runs[-1] = (x, runs[-1][1] + 1)
        else:
            runs.append((x, 1))
    loss: dict[int, int] = {}
    good: dict[int, int] = {}
    for state, length in runs[1:-1]:
        d = good if state else loss
        d[length] = d.get(length, 0) + 1
    return loss, good


def pairs_to_hist(pairs: Iterable[Sequence[int]]) -> dict[int, int]:
    """owdprobe's [[length, count], ...] as {length: count}."""
    return {int(l): int(c) for l, c in pairs}


def geometric_pmf(stay: float) -> Callable[[int], float]:
    """Run-length law of a memoryless process that continues a run with
    probability `stay`: P(L = k) = stay^(k-1) (1 - stay), k >= 1.

    Bernoulli loss p: loss runs have stay = p, good runs stay = 1 - p."""
    if not 0 <= stay < 1:
        raise ValueError("geometric_pmf: stay must be in [0, 1)")
    return lambda k: (stay ** (k - 1)) * (1.0 - stay) if k >= 1 else 0.0


# --- chi-square ------------------------------------------------------------------------------

def chi2_sf(x: float, df: int) -> float:
    """P(X >= x) for X ~ chi-square(df): the test's p-value (scipy's, which
    keeps its precision for tiny tails)."""
    from scipy.stats import chi2
    if df <= 0:
        raise ValueError("chi2_sf needs df >= 1")
    if x <= 0:
        return 1.0
    return float(chi2.sf(x, df))


@dataclass
class ChiSquare:
    bins: list[list]          # [lo, hi or None (= tail), observed, expected]
    statistic: float
    df: int
    p_value: float | None     # None when there are too few bins to test
    alpha: float

    @property
    def passed(self) -> bool | None:
        return None if self.p_value is None else self.p_value >= self.alpha

    def as_dict(self) -> dict:
        return {"bins": self.bins, "chi2": self.statistic, "df": self.df,
                "p_value": self.p_value, "alpha": self.alpha, "pass": self.passed}


def chi_square_runs(observed: Mapping[int, int], pmf: Callable[[int], float],
                    min_expected: float = 5.0, estimated_params: int = 0,
                    alpha: float = 0.01, max_len: int = 10_000_000) -> ChiSquare:
    """Goodness of fit of a run-length histogram {length: count} to a law
    P(L = k), k >= 1, with adjacent bins pooled until each expects >= 5
    (Cochran's rule) and everything left over pooled into a tail bin
    "k >= K" whose expectation is N (1 - P(L < K)).

    df = bins - 1 - estimated_params. With fewer than 2 bins there is nothing
    to test and p_value is None."""
    n = sum(observed.values())
    if n == 0:
        return ChiSquare([], 0.0, 0, None, alpha)
    bins: list[list] = []
    lo = 1
    acc_e = 0.0
    cum = 0.0          # P(L < k) of everything binned so far
    k = 1
    while k <= max_len:
        pk = pmf(k)
        acc_e += n * pk
        cum += pk
        tail_e = n * max(0.0, 1.0 - cum)
        if tail_e < min_expected:
            break
        if acc_e >= min_expected:
            bins.append([lo, k, 0, acc_e])
            lo, acc_e = k + 1, 0.0
        k += 1
    # The rest (from lo on) is the tail. If it expects too little, merge it
    # into the last closed bin.
    tail_e = n * max(0.0, 1.0 - sum(b[3] for b in bins) / n)
    if bins and tail_e < min_expected:
        last = bins.pop()
        lo, tail_e = last[0], last[3] + tail_e
    bins.append([lo, None, 0, tail_e])
    for length, count in observed.items():
        for b in bins:
            if length >= b[0] and (b[1] is None or length <= b[1]):
                b[2] += count
                break
    stat = sum((o - e) ** 2 / e for _lo, _hi, o, e in bins if e > 0)
    df = len(bins) - 1 - estimated_params
    p = chi2_sf(stat, df) if df >= 1 else None
    return ChiSquare(bins, stat, max(df, 0), p, alpha)


# --- Gilbert-Elliott --------------------------------------------------------------------------

@dataclass(frozen=True)
class GEParams:
    """netem's `loss gemodel p r 1-h 1-k`, as fractions."""

    p: float                 # P(good -> bad)
    r: float                 # P(bad -> good)
    loss_bad: float = 1.0    # 1 - h
    loss_good: float = 0.0   # 1 - k

    def __post_init__(self):
        for name in ("p", "r", "loss_bad", "loss_good"):
            v = getattr(self, name)
            if not 0 <= v <= 1:
                raise ValueError(f"GE parameter {name}={v} outside [0, 1]")
        if self.p + self.r == 0:
            raise ValueError("GE: p + r must be > 0 (else the chain never mixes)")

    def grammar(self) -> str:
        """The link-grammar words (netem's)."""
        f = lambda x: f"{x * 100:.10g}%"
        return (f"loss gemodel {f(self.p)} {f(self.r)} {f(self.loss_bad)} "
                f"{f(self.loss_good)}")


def ge_stationary(g: GEParams) -> tuple[float, float]:
    """(pi_good, pi_bad) = (r, p) / (p + r)."""
    s = g.p + g.r
    return g.r / s, g.p / s


def ge_loss_rate(g: GEParams) -> float:
    """Long-run loss probability: pi_good (1-k) + pi_bad (1-h)."""
    pg, pb = ge_stationary(g)
    return pg * g.loss_good + pb * g.loss_bad


def _vecmat(v: list[float], m: list[list[float]]) -> list[float]:
    return [v[0] * m[0][0] + v[1] * m[1][0], v[0] * m[0][1] + v[1] * m[1][1]]


def ge_variance_factor(g: GEParams) -> float:
    """How much more the loss rate measured over n frames varies under the
    chain than under independent loss of the same rate: n Var(rate) ->
    gamma_0 + 2 sum_k gamma_k, over gamma_0 = mu (1 - mu).

    The loss indicator's autocovariance at lag k >= 1 is c lambda^k, with
    lambda = 1 - p - r (the chain's second eigenvalue) and
    c = pi_good pi_bad (loss_bad - loss_good)^2 (the variance of the loss
    probability across states), so the factor is
    1 + 2 c lambda / ((1 - lambda) mu (1 - mu)). It is 1 for Bernoulli loss
    (r = 1 - p) and grows with burstiness."""
    mu = ge_loss_rate(g)
    if mu <= 0 or mu >= 1:
        return 1.0
    pg, pb = ge_stationary(g)
    lam = 1.0 - g.p - g.r
    c = pg * pb * (g.loss_bad - g.loss_good) ** 2
    return max(1.0, 1.0 + 2.0 * c * lam / ((1.0 - lam) * mu * (1.0 - mu)))


def ge_run_pmf(g: GEParams, kind: str, nmax: int) -> list[float]:
    """P(run length = n) for n = 1..nmax, of loss runs (kind="loss") or good
    runs (kind="good"), in the stationary chain.

    The loss sequence is a two-state hidden Markov chain: the state moves
    with T = [[1-p, p], [r, 1-r]] and each frame is lost with the current
    state's probability e = (loss_good, loss_bad). With A_x = T diag(P(x|s)),
    the probability of the pattern (other, x^n, other) is
    pi diag(P(other|s)) A_x^n A_other 1, and dividing by that of (other, x)
    conditions on a run of x starting. For the simple Gilbert model
    (loss_bad = 1, loss_good = 0) this is r (1-r)^(n-1) for loss runs and
    p (1-p)^(n-1) for good runs."""
    if kind not in ("loss", "good"):
        raise ValueError("kind must be 'loss' or 'good'")
    e = [g.loss_good, g.loss_bad]
    T = [[1 - g.p, g.p], [g.r, 1 - g.r]]
    x = e if kind == "loss" else [1 - e[0], 1 - e[1]]          # P(this symbol | s)
    o = [1 - e[0], 1 - e[1]] if kind == "loss" else e           # P(the other | s)
    Ax = [[T[i][j] * x[j] for j in range(2)] for i in range(2)]
    Ao1 = [sum(T[i][j] * o[j] for j in range(2)) for i in range(2)]   # A_other 1
    pi = ge_stationary(g)
    v = [pi[0] * o[0], pi[1] * o[1]]
    v = _vecmat(v, Ax)                                        # pi D_o A_x
    norm = v[0] + v[1]                                         # P(other, x)
    if norm <= 0:
        return [0.0] * nmax
    out = []
    for _ in range(nmax):
        out.append((v[0] * Ao1[0] + v[1] * Ao1[1]) / norm)
        v = _vecmat(v, Ax)
    return out


def ge_run_law(g: GEParams, kind: str, nmax: int = 100_000) -> Callable[[int], float]:
    """ge_run_pmf as a function of n (computed once up to nmax, 0 beyond)."""
    table = ge_run_pmf(g, kind, nmax)
    return lambda n: table[n - 1] if 1 <= n <= nmax else 0.0


def ge_mean_run(g: GEParams, kind: str) -> float:
    """Mean loss-run (or good-run) length; 1/r and 1/p for simple Gilbert."""
    pmf = ge_run_pmf(g, kind, 200_000)
    return math.fsum((i + 1) * q for i, q in enumerate(pmf))


def simulate_ge(g: GEParams, n: int, seed: int = 1) -> list[bool]:
    """A received/lost sequence (True = received) drawn from the chain with
    netem's order (loss decided in the current state, then the move); used
    by the tests to check the theory against a simulation."""
    import random
    rng = random.Random(seed)
    pg, _pb = ge_stationary(g)
    bad = rng.random() >= pg
    out = []
    for _ in range(n):
        lost = rng.random() < (g.loss_bad if bad else g.loss_good)
        out.append(not lost)
        if bad:
            if rng.random() < g.r:
                bad = False
        elif rng.random() < g.p:
            bad = True
    return out


# --- TCP ---------------------------------------------------------------------------------------

def cwnd_reductions(cwnds: Sequence[float]) -> int:
    """How many times a sampled congestion window went down."""
    return sum(1 for a, b in zip(cwnds, cwnds[1:]) if b < a)


def excess_histogram(excess, bins: int):
    """Histogram of delay excess for plots: `bins` equal bins from the
    minimum up to about p99.9, and the count of frames beyond them.
    Returns (lo, width, counts, above); every frame is counted exactly once
    (numpy's last bin is closed on the right, so `above` is strictly
    beyond it)."""
    import numpy as np
    excess = np.asarray(excess)
    lo = float(np.floor(excess.min()))
    hi = float(np.quantile(excess, 0.999))
    width = max(1.0, math.ceil((hi - lo) / bins))
    edge = lo + width * bins
    counts, _ = np.histogram(excess, bins=bins, range=(lo, edge))
    above = int((excess > edge).sum())
    return lo, width, [int(c) for c in counts], above
