"""Estimators and intervals of chainlab.stats against known answers and brute force."""

import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats as st

from chainlab import stats


def test_mean_ci_is_the_student_t_interval():
    x = np.array([1.0, 2.0, 3.0, 4.0, 10.0])
    m, lo, hi = stats.mean_ci(x)
    half = st.t.ppf(0.975, 4) * x.std(ddof=1) / math.sqrt(5)
    assert m == pytest.approx(4.0)
    assert (lo, hi) == pytest.approx((4.0 - half, 4.0 + half))
    assert stats.relative_halfwidth(x) == pytest.approx(half / 4.0)


def test_mean_ci_edge_cases():
    assert all(math.isnan(v) for v in stats.mean_ci([]))
    m, lo, hi = stats.mean_ci([3.0])
    assert m == 3.0 and math.isnan(lo) and math.isnan(hi)
    assert stats.relative_halfwidth([3.0]) == math.inf


def test_mean_ci_from_moments_matches_mean_ci():
    x = np.random.default_rng(1).lognormal(0, 0.5, 300)
    assert stats.mean_ci_from_moments(x.mean(), x.var(ddof=1), x.size) == pytest.approx(
        stats.mean_ci(x)
    )


def delta_ratio(ma, va, na, mb, vb, nb, cov_ab=None, level=0.95):
    """The delta-method ratio interval as the summary builds it: ratio_log_se, log_interval."""
    r, se = stats.ratio_log_se(ma, va, na, mb, vb, nb, cov_ab)
    return (r, *stats.log_interval(r, se, level))


def bootstrap_ratio(a, b, resamples, rng):
    """The oracle: mean(a) / mean(b) by a percentile bootstrap of each sample apart (Efron &
    Tibshirani §13), against which the delta method is checked."""
    ra = rng.choice(a, size=(resamples, a.size)).mean(axis=1)
    rb = rng.choice(b, size=(resamples, b.size)).mean(axis=1)
    return (a.mean() / b.mean(), *stats.percentile_interval(ra / rb))


def test_ratio_of_constants_is_exact():
    assert delta_ratio(10.0, 0.0, 50, 2.0, 0.0, 50) == (5.0, 5.0, 5.0)


def test_ratio_delta_interval_agrees_with_the_bootstrap():
    rng = np.random.default_rng(7)
    a = rng.lognormal(math.log(3.0), 0.4, 400)
    b = rng.lognormal(math.log(1.0), 0.3, 300)
    r, lo, hi = delta_ratio(a.mean(), a.var(ddof=1), a.size, b.mean(), b.var(ddof=1), b.size)
    rb, blo, bhi = bootstrap_ratio(a, b, 3000, np.random.default_rng(2))
    assert r == pytest.approx(rb)
    width = hi - lo
    assert abs(lo - blo) < 0.1 * width and abs(hi - bhi) < 0.1 * width
    # The same interval from the two log-scale standard errors (what twins and compare use).
    se_a = stats.se_mean(a.var(ddof=1), a.size) / a.mean()
    se_b = stats.se_mean(b.var(ddof=1), b.size) / b.mean()
    assert stats.ratio_ci(a.mean(), se_a, b.mean(), se_b) == pytest.approx((r, lo, hi))


def test_ratio_ci_is_reciprocal_and_nan_for_non_positive_estimates():
    r, lo, hi = stats.ratio_ci(4.0, 0.1, 2.0, 0.2)
    ri, loi, hii = stats.ratio_ci(2.0, 0.2, 4.0, 0.1)
    assert (r * ri, lo * hii, hi * loi) == pytest.approx((1.0, 1.0, 1.0))
    assert all(math.isnan(v) for v in stats.ratio_ci(0.0, 0.1, 2.0, 0.2))


def test_difference_ci_is_welch_large_sample():
    # 10 - 4 with standard errors 3 and 4: half-width 1.959964 x 5.
    est, lo, hi = stats.difference_ci(10.0, 3.0, 4.0, 4.0)
    assert est == 6.0
    assert (lo, hi) == pytest.approx((6 - 9.799820, 6 + 9.799820), abs=1e-5)


def test_se_mean_and_t_value_known_answers():
    assert stats.se_mean(4.0, 16) == 0.5
    assert math.isnan(stats.se_mean(4.0, 1)) and math.isnan(stats.se_mean(None, 10))
    assert stats.t_value(0.95, 9) == pytest.approx(2.262157, abs=1e-6)


def test_quantiles_match_scipy_stats_at_every_level_and_dof():
    for level in (0.5, 0.9, 0.95, 0.99, 0.999):
        assert stats.z_value(level) == pytest.approx(st.norm.ppf(0.5 + level / 2), rel=1e-12)
        for dof in (1, 2, 4, 9, 30, 1000):
            want = st.t.ppf(0.5 + level / 2, dof)
            assert stats.t_value(level, dof) == pytest.approx(want, rel=1e-12)


def test_a_run_does_not_import_scipy_stats():
    # scipy.stats takes 0.4-0.9 s to import; running a campaign needs only t and z quantiles.
    probe = (
        "import sys, chainlab.commands.run, chainlab.runner.campaign\n"
        "print(sorted(m for m in sys.modules if m.startswith('scipy.stats')))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_paired_covariance_narrows_the_ratio_interval():
    rng = np.random.default_rng(3)
    common = rng.normal(10, 2, 500)
    x = common + rng.normal(0, 0.1, 500)
    y = common + rng.normal(0, 0.1, 500)
    args = (x.mean(), x.var(ddof=1), 500, y.mean(), y.var(ddof=1), 500)
    _, lo_ind, hi_ind = delta_ratio(*args)
    _, lo_pair, hi_pair = delta_ratio(*args, cov_ab=np.cov(x, y)[0, 1])
    assert (hi_pair - lo_pair) < 0.2 * (hi_ind - lo_ind)


def test_quantile_nearest_rank():
    x = np.arange(1, 101, dtype=float)
    assert stats.quantile_nearest_rank(x, 0.95) == 95.0
    assert stats.quantile_nearest_rank(x, 0.5) == 50.0
    assert stats.quantile_nearest_rank(x, 0.99) == 99.0
    assert stats.quantile_nearest_rank(np.array([7.0]), 0.95) == 7.0


def test_quantile_ci_covers_the_true_median_at_the_nominal_rate():
    rng = np.random.default_rng(11)
    hits = 0
    reps = 400
    for _ in range(reps):
        x = np.sort(rng.exponential(1.0, 101))
        _, lo, hi = stats.quantile_ci(x, 0.5)
        hits += lo <= math.log(2) <= hi
    assert hits / reps >= 0.92


def test_quantile_ci_says_nan_when_the_sample_is_too_small():
    x = np.sort(np.random.default_rng(1).random(50))
    est, lo, hi = stats.quantile_ci(x, 0.99)
    assert est == x[-1] and math.isnan(hi)


def test_quantile_bootstrap_matches_brute_force_resampling():
    rng = np.random.default_rng(5)
    x = np.sort(rng.lognormal(0, 1, 200))
    exact = stats.quantile_bootstrap(x, 0.95, 20000, np.random.default_rng(1))
    idx = np.random.default_rng(2).integers(0, x.size, size=(4000, x.size))
    brute = np.sort(x[idx], axis=1)[:, math.ceil(0.95 * x.size) - 1]
    assert exact.mean() == pytest.approx(brute.mean(), rel=0.02)
    assert exact.std() == pytest.approx(brute.std(), rel=0.08)


def test_pearson_of_a_linear_relationship_is_one():
    x = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    assert stats.pearson_ci(x, 3 * x + 2) == (1.0, 1.0, 1.0)
    assert stats.pearson_ci(x, -x)[0] == pytest.approx(-1.0)


def test_pearson_interval_is_fisher_z():
    rng = np.random.default_rng(4)
    x = rng.normal(size=30)
    y = x + rng.normal(size=30)
    r, lo, hi = stats.pearson_ci(x, y)
    z, se = math.atanh(r), 1 / math.sqrt(27)
    assert r == pytest.approx(st.pearsonr(x, y).statistic)
    assert (lo, hi) == pytest.approx((math.tanh(z - 1.959964 * se), math.tanh(z + 1.959964 * se)))


def test_spearman_of_a_monotone_relationship_is_one_with_bonett_wright_interval():
    x = np.arange(1.0, 11.0)
    assert stats.spearman_ci(x, np.exp(x)) == (1.0, 1.0, 1.0)
    y = np.array([2.0, 1.0, 4.0, 3.0, 6.0, 5.0, 8.0, 7.0, 10.0, 9.0])
    rho, lo, hi = stats.spearman_ci(x, y)
    se = math.sqrt((1 + rho * rho / 2) / 7)
    assert rho == pytest.approx(st.spearmanr(x, y).statistic)
    assert lo == pytest.approx(math.tanh(math.atanh(rho) - 1.959964 * se))


def test_correlations_need_three_points_and_variation():
    assert all(math.isnan(v) for v in stats.pearson_ci([1, 2], [1, 2]))
    assert all(math.isnan(v) for v in stats.spearman_ci([1, 1, 1], [1, 2, 3]))
    r, lo, hi = stats.pearson_ci([1.0, 2.0, 3.0], [1.0, 3.0, 2.0])
    assert r == pytest.approx(0.5) and math.isnan(lo)


def test_lognormal_draws_are_centred_and_scaled():
    d = stats.lognormal_draws(10.0, 0.02, 20000, np.random.default_rng(0))
    assert np.median(d) == pytest.approx(10.0, rel=0.01)
    assert np.std(np.log(d)) == pytest.approx(0.02, rel=0.05)
    assert np.all(np.isnan(stats.lognormal_draws(10.0, math.nan, 5, np.random.default_rng(0))))
    assert np.array_equal(
        stats.lognormal_draws(10.0, 0.0, 3, np.random.default_rng(0)), [10.0, 10.0, 10.0]
    )


def test_log_interval():
    lo, hi = stats.log_interval(2.0, 0.1)
    assert (lo, hi) == pytest.approx((2.0 * math.exp(-0.1959964), 2.0 * math.exp(0.1959964)))
    assert all(math.isnan(v) for v in stats.log_interval(-1.0, 0.1))


def test_seeded_rng_depends_on_seed_and_keys_only():
    a = stats.seeded_rng(1, "x", "y").random(3)
    assert np.array_equal(a, stats.seeded_rng(1, "x", "y").random(3))
    assert not np.array_equal(a, stats.seeded_rng(1, "x", "z").random(3))
    assert not np.array_equal(a, stats.seeded_rng(2, "x", "y").random(3))


def test_proportion_interval_is_wilsons():
    # Wilson's interval solves |k/n - p| = z sqrt(p(1-p)/n) for p: check the defining
    # equation at both bounds, and the closed form's values at the edges.
    z = st.norm.ppf(0.975)
    for k, n in ((5, 10), (18, 30), (1, 200)):
        est, lo, hi = stats.proportion_ci(k, n)
        assert est == k / n and lo < est < hi
        for p in (lo, hi):
            assert abs(k / n - p) == pytest.approx(z * math.sqrt(p * (1 - p) / n))
    est, lo, hi = stats.proportion_ci(0, 20)
    assert (est, lo) == (0.0, 0.0) and hi == pytest.approx(z * z / (20 + z * z))
    est, lo, hi = stats.proportion_ci(20, 20)
    assert (est, hi) == (1.0, 1.0) and lo == pytest.approx(20 / (20 + z * z))
    assert all(math.isnan(v) for v in stats.proportion_ci(0, 0))
    # a narrower level gives a narrower interval
    assert stats.proportion_ci(5, 10, 0.8)[2] < stats.proportion_ci(5, 10, 0.95)[2]


def test_poisson_rate_interval_is_garwoods():
    # 10 events: the exact 95 % interval of the count is [4.795, 18.39] (Garwood 1936).
    rate, lo, hi = stats.poisson_rate_ci(10, 2.0)
    assert rate == 5.0
    assert lo == pytest.approx(4.7954 / 2, rel=1e-4) and hi == pytest.approx(18.3904 / 2, rel=1e-4)
    assert stats.poisson_rate_ci(0, 1.0)[1] == 0.0
    assert all(math.isnan(x) for x in stats.poisson_rate_ci(5, 0.0))


def test_kendall_tau_counts_concordant_pairs():
    assert stats.kendall_tau([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert stats.kendall_tau([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    # One swapped pair of six: (5 - 1) / 6.
    assert stats.kendall_tau([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(4 / 6)
    assert math.isnan(stats.kendall_tau([1], [1]))
    assert math.isnan(stats.kendall_tau([1, 1, 1], [1, 2, 3]))
