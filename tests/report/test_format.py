"""Number formatting in report tables."""

import math

from chainlab.report import format as f


def test_num_significant_digits_and_separators():
    assert f.num(0.80912) == "0.809"
    assert f.num(1464.933) == "1,465"
    assert f.num(1234567.0) == "1,234,567"
    assert f.num(0.0) == "0"
    assert f.num(math.nan) == "n/a"
    assert f.num(0.00001234) == "1.23e-05"


def test_ci_keeps_the_three_numbers_distinct():
    assert f.ci(1.0, 0.99, 1.01) == "1.00 [0.990, 1.01]"
    assert f.ci(1.3796, 1.3773, 1.3819) == "1.380 [1.377, 1.382]"
    assert f.ci(2.0, 2.0, 2.0) == "2.00 (exact)"
    assert f.ci(2.0, math.nan, math.nan) == "2.00 (no CI)"
    assert f.ci(1430.0, 1428.0, math.nan) == "1,430 [1,428, n/a]"
    assert f.num(0.0999999) == "0.100"
    assert f.ci(math.nan, 1, 2) == "n/a"


def test_pct_and_yes_no():
    assert f.pct(12.345) == "+12.3 %" and f.pct(-5) == "-5.00 %"
    assert f.yes_no(True) == "yes" and f.yes_no(None) == "n/a"
