"""Number formatting for report tables: significant digits that keep an interval readable.

An estimate and its interval share one precision, chosen so the three printed numbers are
distinct when the values are (at least 3 and at most 7 significant digits).
"""

from __future__ import annotations

import math
import numbers


def _finite(x) -> bool:
    # numbers.Real also takes numpy's integer and float scalars (not bools)
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x)


def num(x, digits: int = 3) -> str:
    """A number with `digits` significant digits (all integer digits of larger numbers),
    thousands separators, no scientific notation above 1e-4; 'n/a' for missing values."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    if not _finite(x):
        return str(x)
    if x == 0:
        return "0"
    if abs(x) < 1e-4:
        return f"{x:.{digits - 1}e}"
    mag = math.floor(math.log10(abs(x)))
    if mag < digits - 1:  # round first, so 0.09999 counts as 0.100 (magnitude -1)
        x = float(f"{x:.{digits}g}")
        mag = math.floor(math.log10(abs(x)))
    decimals = max(0, digits - 1 - mag)
    return f"{x:,.{decimals}f}"


def integer(x) -> str:
    if not _finite(x):
        return "n/a"
    return f"{round(x):,}"


def _digits_for(values: list[float], base: int = 3, cap: int = 7) -> int:
    vals = [v for v in values if _finite(v)]
    for d in range(base, cap + 1):
        printed = [num(v, d) for v in vals]
        if len(set(printed)) == len({float(v) for v in vals}):
            return d
    return cap


def ci(est, lo, hi, digits: int = 3) -> str:
    """'0.809 [0.801, 0.817]'; the estimate alone when the interval is missing."""
    if not _finite(est):
        return "n/a"
    if not (_finite(lo) or _finite(hi)):
        return f"{num(est, digits)} (no CI)"
    if not (_finite(lo) and _finite(hi)):
        d = _digits_for([v for v in (est, lo, hi) if _finite(v)], digits)
        return f"{num(est, d)} [{num(lo, d)}, {num(hi, d)}]"
    d = _digits_for([est, lo, hi], digits)
    if lo == est == hi:
        return f"{num(est, d)} (exact)"
    return f"{num(est, d)} [{num(lo, d)}, {num(hi, d)}]"


def pct(x, digits: int = 3) -> str:
    if not _finite(x):
        return "n/a"
    return f"{num(x, digits)} %" if x <= 0 else f"+{num(x, digits)} %"


def yes_no(x) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return "yes" if bool(x) else "no"


def round_trips(r: dict) -> str:
    """A pair's round trips, the scenario's then its twin's (the model's), with the
    measured ones in brackets where an emulated profile gave them: "2 vs 3 (2.04 vs 3.01)"."""

    def whole(x) -> str:
        return f"{int(x)}" if _finite(x) else "n/a"

    text = f"{whole(r['round_trips'])} vs {whole(r['twin_round_trips'])}"
    if _finite(r["observed_round_trips"]):
        text += f" ({r['observed_round_trips']:.2f} vs {r['twin_observed_round_trips']:.2f})"
    return text
