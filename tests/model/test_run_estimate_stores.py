"""The run-time estimate against runs that took place: every kept store that recorded what
its run had to make (schema 14 on) is estimated again from the store alone, and the estimate
must be within chainlab.analysis.run_time.ESTIMATE_TARGET of the wall time the run took.
A change to the estimate's model that moves it away from real runs fails here."""

from pathlib import Path

import pytest

from chainlab.analysis import run_time
from chainlab.store import Store

STORES = sorted((Path(__file__).parents[1] / "data" / "stores").glob("v*-*.duckdb"))
ESTIMATED = [p for p in STORES if int(p.name[1 : p.name.index("-")]) >= 14]


def test_there_is_a_kept_store_with_an_estimate():
    assert ESTIMATED, STORES


@pytest.mark.parametrize("path", ESTIMATED, ids=lambda p: p.name)
def test_the_estimate_made_again_is_within_the_target_of_the_wall_time(path):
    with Store.open(path) as st:
        got = run_time.of_store(st)
    assert not isinstance(got, str), got
    lo, hi = 1 - run_time.ESTIMATE_TARGET, 1 + run_time.ESTIMATE_TARGET
    assert lo <= got.ratio <= hi, (got.ratio, got.again.phases, got.wall_s)
    assert got.again.low_s <= got.wall_s * hi and got.wall_s * lo <= got.again.high_s


def test_an_older_store_says_why_it_has_no_estimate():
    old = next(p for p in STORES if p.name.startswith("v13-"))
    with Store.open(old) as st:
        got = run_time.of_store(st)
    assert got == (
        "the run recorded no estimate (it was made before schema 14, or not by `chainlab run`)"
    )
