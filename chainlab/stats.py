"""Statistics used by chainlab: one small module, each function citing its method.

Every interval here is a two-sided interval at `level` (95 % unless told otherwise), returned
as (estimate, low, high). A bound that the data cannot support is NaN, never invented.
docs/methods/ explains where the report uses which estimator.

References used below:
- Montgomery & Runger, *Applied Statistics and Probability for Engineers*, 6th ed., §8.2.
- Casella & Berger, *Statistical Inference*, 2nd ed., §5.5.4 (the delta method).
- Efron & Tibshirani, *An Introduction to the Bootstrap*, 1993, §13 (percentile interval).
- Welch, "The generalization of Student's problem...", Biometrika 34, 1947 (a difference of
  two means with unequal variances).
- Conover, *Practical Nonparametric Statistics*, 3rd ed., 1999, §3.2 (quantile intervals).
- Hutson & Ernst, "The exact bootstrap mean and variance of an L-estimator", JRSS B 62(1),
  2000 (the bootstrap distribution of an order statistic is a Beta mixture).
- Fisher, "On the probable error of a coefficient of correlation...", Metron 1, 1921 (z).
- Bonett & Wright, "Sample size requirements for estimating Pearson, Kendall and Spearman
  correlations", Psychometrika 65(1), 2000 (standard error of Fisher z for Spearman's rho).
"""

from __future__ import annotations

import hashlib
import math

import numpy as np
from scipy.special import ndtri, stdtrit  # the normal and Student-t inverse CDFs

# Resamples per bootstrap when a caller gives none: Efron & Tibshirani (§19.3) suggest
# 1000-2000 for percentile intervals; 2000 keeps the Monte-Carlo error of a 2.5 % quantile
# of the replicates near 0.35 percentage points of coverage.
DEFAULT_RESAMPLES = 2000


def mean_ci(values, level: float = 0.95) -> tuple[float, float, float]:
    """Mean and its Student-t confidence interval: mean ± t_{n-1} · s/√n.

    The interval for the mean of i.i.d. samples (e.g. Montgomery & Runger, *Applied
    Statistics and Probability for Engineers*, §8.2); by the central limit theorem it holds
    approximately for the skewed latency distributions of handshakes once n is in the tens.
    Returns (mean, low, high); with fewer than two values the bounds are NaN.
    """
    x = np.asarray(values, dtype=float)
    n = x.size
    if n == 0:
        return (math.nan, math.nan, math.nan)
    m = float(x.mean())
    if n < 2:
        return (m, math.nan, math.nan)
    half = t_value(level, n - 1) * float(x.std(ddof=1)) / math.sqrt(n)
    return (m, m - half, m + half)


def relative_halfwidth(values, level: float = 0.95) -> float:
    """Half-width of `mean_ci` divided by the mean (the adaptive sampler's stopping statistic)."""
    m, lo, hi = mean_ci(values, level)
    if not math.isfinite(lo) or m == 0:
        return math.inf
    return (hi - lo) / 2 / abs(m)


def mean_ci_from_moments(
    mean: float, var: float, n: int, level: float = 0.95
) -> tuple[float, float, float]:
    """`mean_ci` from summary moments (sample variance with n-1), as aggregated in SQL."""
    if n is None or n == 0 or not math.isfinite(mean):
        return (math.nan, math.nan, math.nan)
    if n < 2 or var is None or not math.isfinite(var):
        return (float(mean), math.nan, math.nan)
    half = t_value(level, n - 1) * se_mean(var, n)
    return (float(mean), mean - half, mean + half)


def z_value(level: float) -> float:
    """The two-sided standard normal quantile for `level` (1.96 at 95 %)."""
    return float(ndtri(0.5 + level / 2))


def t_value(level: float, dof: int) -> float:
    """The two-sided Student-t quantile for `level` at `dof` degrees of freedom (2.26 at 95 %
    and 9): the multiplier of a mean's standard error in `mean_ci` and the sampler's rule."""
    return float(stdtrit(dof, 0.5 + level / 2))


def _scipy_stats():
    """scipy.stats, imported where a function here first needs it: its import takes 0.4-0.9 s
    that a command which only samples (t and z quantiles, from scipy.special, imported with
    this module so that no run's clock counts it) need not pay."""
    # Deferred: scipy.stats' import, which a run and `validate` never need (the docstring).
    from scipy import stats

    return stats


def se_mean(var: float, n: int) -> float:
    """The standard error of a mean, √(s²/n), from the sample variance s² (n-1) of n
    values (Montgomery & Runger §8.2); NaN below n = 2 or where the variance is unknown."""
    if n is None or n < 2 or var is None or not math.isfinite(var):
        return math.nan
    return math.sqrt(max(var, 0.0) / n)


def ratio_ci(
    est_a: float, se_a: float, est_b: float, se_b: float, level: float = 0.95
) -> tuple[float, float, float]:
    """est_a / est_b of two independent positive estimates whose logarithms have standard
    errors se_a and se_b: exp(log r ± z·√(se_a² + se_b²)) (delta method on the log scale,
    Casella & Berger §5.5.4; docs/methods/statistics.md#ratios-between-scenarios). The interval of
    b/a is the reciprocal of
    the interval of a/b. NaN unless both estimates are positive."""
    if not (est_a > 0 and est_b > 0):
        return (math.nan, math.nan, math.nan)
    r = float(est_a / est_b)
    return (r, *log_interval(r, math.hypot(se_a, se_b), level))


def difference_ci(
    est_a: float, se_a: float, est_b: float, se_b: float, level: float = 0.95
) -> tuple[float, float, float]:
    """est_a - est_b of two independent estimates with standard errors se_a and se_b (in
    their own units): ± z·√(se_a² + se_b²), the large-sample Welch interval (Welch 1947;
    Montgomery & Runger §10.2)."""
    est = est_a - est_b
    half = z_value(level) * math.hypot(se_a, se_b)
    return (est, est - half, est + half)


def ratio_log_se(
    mean_a: float,
    var_a: float,
    n_a: int,
    mean_b: float,
    var_b: float,
    n_b: int,
    cov_ab: float | None = None,
) -> tuple[float, float]:
    """mean_a / mean_b and the delta-method standard error of its logarithm.

    log(r) has approximate variance s_a²/(n_a m_a²) + s_b²/(n_b m_b²) for independent samples
    (Casella & Berger §5.5.4); for paired samples (the same connections, n_a = n_b) pass the
    sample covariance `cov_ab` and the term -2 s_ab/(n m_a m_b) is added. `log_interval`
    turns it into an interval that stays positive and is symmetric in log space. (NaN, NaN)
    unless both means are positive; se NaN below n = 2 or where a moment is unknown."""
    if not (n_a and n_b) or not (mean_a > 0 and mean_b > 0):
        return (math.nan, math.nan)
    r = mean_a / mean_b
    moments = (var_a, var_b, 0.0 if cov_ab is None else cov_ab)
    if n_a < 2 or n_b < 2 or not all(math.isfinite(m) for m in moments):
        return (r, math.nan)
    v = max(var_a, 0.0) / (n_a * mean_a**2) + max(var_b, 0.0) / (n_b * mean_b**2)
    if cov_ab is not None:
        v -= 2.0 * cov_ab / (n_a * mean_a * mean_b)
    return (r, math.sqrt(max(v, 0.0)))


def log_interval(est: float, se: float, level: float = 0.95) -> tuple[float, float]:
    """est·exp(∓z·se): the interval of a positive estimate whose logarithm has standard error
    `se` (delta method on the log scale). NaN when est is not positive or se is unknown."""
    if not (est > 0 and math.isfinite(est) and se is not None and math.isfinite(se)):
        return (math.nan, math.nan)
    z = z_value(level)
    return (est * math.exp(-z * se), est * math.exp(z * se))


def lognormal_draws(est: float, se: float, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Draws of a positive estimate from its large-sample distribution on the log scale,
    est·exp(se·Z), Z standard normal: the approximation behind `log_interval` and
    `ratio_ci_delta`, used to propagate uncertainty through statistics of several scenario
    means (a class median, a cost per service class) by Monte Carlo: compute the statistic on
    each draw and take the percentile interval. NaN draws when est or se is unknown."""
    if not (est > 0 and math.isfinite(est) and se is not None and math.isfinite(se)):
        return np.full(resamples, math.nan)
    return est * np.exp(se * rng.standard_normal(resamples))


def quantile_nearest_rank(sorted_values: np.ndarray, q: float) -> float:
    """The q-quantile as the nearest-rank order statistic x_(⌈q·n⌉) (Hyndman & Fan type 1).

    The report uses this definition for p50/p95/p99 everywhere (DuckDB `quantile_disc`
    computes the same value), so a quantile is always an observed latency and its
    bootstrap distribution is exact (see `quantile_bootstrap`).
    """
    x = np.asarray(sorted_values)
    n = x.size
    if n == 0:
        return math.nan
    k = max(1, math.ceil(q * n - 1e-9))
    return float(x[k - 1])


def quantile_ci(
    sorted_values: np.ndarray, q: float, level: float = 0.95
) -> tuple[float, float, float]:
    """Distribution-free interval for the q-quantile from two order statistics.

    The number of observations below the true quantile is Binomial(n, q), so
    [x_(l), x_(u)] with l = F⁻¹_B(α/2) and u = F⁻¹_B(1-α/2) + 1 covers it with probability
    ≥ level (Conover 1999, §3.2). When u exceeds n or l is below 1 the sample is too small
    for that bound and it is NaN (e.g. a p99 interval needs a few hundred samples).
    """
    x = np.asarray(sorted_values, dtype=float)
    n = x.size
    est = quantile_nearest_rank(x, q)
    if n == 0:
        return (math.nan, math.nan, math.nan)
    alpha = 1 - level
    binom = _scipy_stats().binom
    lo_rank = int(binom.ppf(alpha / 2, n, q))
    hi_rank = int(binom.ppf(1 - alpha / 2, n, q)) + 1
    lo = float(x[lo_rank - 1]) if 1 <= lo_rank <= n else math.nan
    hi = float(x[hi_rank - 1]) if 1 <= hi_rank <= n else math.nan
    return (est, lo, hi)


def quantile_bootstrap(
    sorted_values: np.ndarray, q: float, resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """Bootstrap replicates of the nearest-rank q-quantile, drawn exactly in O(resamples).

    A resample of n values from the empirical distribution is F_n⁻¹(U_1..U_n) with uniform
    U_i, and F_n⁻¹ is monotone, so the resample's k-th order statistic is F_n⁻¹(U_(k)) with
    U_(k) ~ Beta(k, n-k+1) (Hutson & Ernst 2000). Drawing that Beta gives the same
    distribution as resampling n values and sorting them, without doing either.
    """
    x = np.asarray(sorted_values, dtype=float)
    n = x.size
    if n == 0:
        return np.full(resamples, math.nan)
    k = max(1, math.ceil(q * n - 1e-9))
    u = rng.beta(k, n - k + 1, size=resamples)
    idx = np.clip(np.ceil(u * n).astype(np.int64), 1, n) - 1
    return x[idx]


def percentile_interval(replicates: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The percentile interval of bootstrap replicates (Efron & Tibshirani §13.3)."""
    r = np.asarray(replicates, dtype=float)
    r = r[np.isfinite(r)]
    if r.size < 2:
        return (math.nan, math.nan)
    lo, hi = np.quantile(r, [0.5 - level / 2, 0.5 + level / 2])
    return (float(lo), float(hi))


def pearson_ci(x, y, level: float = 0.95) -> tuple[float, float, float]:
    """Pearson's r with the Fisher z interval tanh(atanh r ± z/√(n-3)) (Fisher 1921), as
    scipy.stats.pearsonr computes it.

    NaN with fewer than 3 points or a constant variable; the interval needs n ≥ 4.
    A perfect correlation (|r| = 1) has the degenerate interval [r, r].
    """
    a = np.asarray(x, dtype=float)
    b = np.asarray(y, dtype=float)
    n = a.size
    if n < 3 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return (math.nan, math.nan, math.nan)
    res = _scipy_stats().pearsonr(a, b)
    r = float(np.clip(res.statistic, -1.0, 1.0))
    if n < 4 or abs(abs(r) - 1.0) < 1e-12:  # no interval, or a degenerate one
        return _fisher_interval(r, n, 1.0, level)
    ci = res.confidence_interval(confidence_level=level)  # Fisher z, se 1/√(n-3)
    return (r, float(ci.low), float(ci.high))


def spearman_ci(x, y, level: float = 0.95) -> tuple[float, float, float]:
    """Spearman's rho with a Fisher z interval using Bonett & Wright's (2000) standard error
    √((1 + rho²/2)/(n-3)). NaN with fewer than 3 points or a constant variable."""
    a = np.asarray(x, dtype=float)
    b = np.asarray(y, dtype=float)
    n = a.size
    if n < 3 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return (math.nan, math.nan, math.nan)
    rho = float(np.clip(_scipy_stats().spearmanr(a, b).statistic, -1.0, 1.0))
    return _fisher_interval(rho, n, 1.0 + rho * rho / 2.0, level)


def _fisher_interval(r: float, n: int, var_factor: float, level: float):
    if abs(abs(r) - 1.0) < 1e-12:  # rounding of an exact (anti-)monotone/linear relation
        r = math.copysign(1.0, r)
    if n < 4:
        return (r, math.nan, math.nan)
    if abs(r) >= 1.0:
        return (r, r, r)
    se = math.sqrt(var_factor / (n - 3))
    z = math.atanh(r)
    q = z_value(level)
    return (r, math.tanh(z - q * se), math.tanh(z + q * se))


def seeded_rng(seed: int, *keys: str) -> np.random.Generator:
    """A generator determined by `seed` and the strings `keys` (e.g. two scenario ids), so an
    interval for one comparison does not change when other scenarios are added to a store."""
    digest = hashlib.sha256("\x1f".join(keys).encode()).digest()
    return np.random.default_rng([seed, int.from_bytes(digest[:8], "little")])


def proportion_ci(k: int, n: int, level: float = 0.95) -> tuple[float, float, float]:
    """A proportion k/n with the Wilson score interval (scipy's binomtest; Wilson, "Probable
    inference, the law of succession, and statistical inference", JASA 22, 1927): the p solving
    |k/n − p| = z·√(p(1 − p)/n). Unlike the Wald interval it stays inside [0, 1] and is not
    degenerate at k = 0 or k = n (e.g. 0 of 20 gives [0, 0.161]). NaN when n is 0."""
    if not n:
        return (math.nan, math.nan, math.nan)
    test = _scipy_stats().binomtest(int(k), int(n))
    ci = test.proportion_ci(confidence_level=level, method="wilson")
    # at k = 0 (k = n) the lower (upper) bound is exactly 0 (1); rounding would leave 1e-17
    lo = 0.0 if k == 0 else max(0.0, float(ci.low))
    hi = 1.0 if k == n else min(1.0, float(ci.high))
    return (k / n, lo, hi)


def poisson_rate_ci(k: int, seconds: float, level: float = 0.95) -> tuple[float, float, float]:
    """A rate k/seconds with the exact (Garwood 1936) interval of a Poisson count:
    chi2(α/2; 2k)/2 and chi2(1 − α/2; 2k + 2)/2 events, divided by the time. NaN when the
    time is not positive."""
    if not seconds > 0:
        return (math.nan, math.nan, math.nan)
    alpha = 1 - level
    chi2 = _scipy_stats().chi2
    lo = 0.0 if k == 0 else float(chi2.ppf(alpha / 2, 2 * k)) / 2
    hi = float(chi2.ppf(1 - alpha / 2, 2 * k + 2)) / 2
    return (k / seconds, lo / seconds, hi / seconds)


def kendall_tau(x, y) -> float:
    """Kendall's tau-b between two rankings (scipy; Kendall, "A new measure of rank
    correlation", Biometrika 1938): 1 when every pair is ordered alike, -1 when every pair
    is reversed. NaN with fewer than 2 points or a constant variable."""
    a = np.asarray(x, dtype=float)
    b = np.asarray(y, dtype=float)
    if a.size < 2 or np.ptp(a) == 0 or np.ptp(b) == 0:
        return math.nan
    return float(_scipy_stats().kendalltau(a, b).statistic)
