"""Statistics used by chainlab: one small module, each function citing its method.

Every interval here is a two-sided 95 % interval unless `level` says otherwise.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats as _st


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
    half = float(_st.t.ppf(0.5 + level / 2, n - 1) * x.std(ddof=1) / math.sqrt(n))
    return (m, m - half, m + half)


def relative_halfwidth(values, level: float = 0.95) -> float:
    """Half-width of `mean_ci` divided by the mean (the adaptive sampler's stopping statistic)."""
    m, lo, hi = mean_ci(values, level)
    if not math.isfinite(lo) or m == 0:
        return math.inf
    return (hi - lo) / 2 / abs(m)
