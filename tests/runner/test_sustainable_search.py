"""The sustainable-rate search's judgement of one step (chainlab.runner.load `kept_up`):
kept up only with nothing saturated, the achieved rate's interval reaching the offer and the
p99 within its bound. The search itself runs in tests/runner/test_load.py."""

import math

import pytest

from chainlab.runner.load import ANSWERED, fell_behind, kept_up, latency_unbounded, servable

pytestmark = pytest.mark.usefixtures("serial")  # measures: runs alone

MS = 1_000_000


def step(
    offered: float, achieved: float, saturated: int = 0, seconds: float = 5.0, failures=None
) -> dict:
    failures = failures or {}
    n_ok = round(achieved * seconds)
    return {
        "offered_rate": offered, "achieved_rate": achieved, "duration_s": seconds,
        "n_saturated": saturated, "n_ok": n_ok, "n_failed": sum(failures.values()),
        "failures": failures,
    }  # fmt: skip


def attempts(latency_ms: float, n: int = 500, slow: int = 0, slow_ms: float = 0) -> list[dict]:
    rows = [{"outcome": "ok", "latency_ns": int(latency_ms * MS)} for _ in range(n - slow)]
    rows += [{"outcome": "ok", "latency_ns": int(slow_ms * MS)} for _ in range(slow)]
    return rows


def test_an_offer_achieved_within_its_interval_at_bounded_latency_is_kept_up():
    # 100/s for 5 s: 495 completions' interval reaches 100/s.
    assert kept_up(step(100, 99), attempts(5), bound_ns=50 * MS)


def test_a_step_short_of_its_offer_beyond_its_interval_is_not():
    # The pattern: 536 of 564.5/s over 5 s, the interval's top below the offer.
    assert not kept_up(step(564.5, 536), attempts(5), bound_ns=50 * MS)


def test_a_saturated_step_or_one_whose_p99_left_its_bound_is_not():
    assert not kept_up(step(100, 100, saturated=3), attempts(5), bound_ns=50 * MS)
    # 2 % of attempts at 363 ms: p99 far above 10 x an unloaded 5 ms.
    assert not kept_up(step(100, 100), attempts(5, slow=10, slow_ms=363), bound_ns=50 * MS)
    assert not kept_up(step(100, 100), [], bound_ns=50 * MS)


def test_attempts_refused_by_an_answer_leave_the_offer_the_server_could_complete():
    # A rollout population with 10 % clients no chain serves: 510/s offered for 5 s, 447/s
    # completed, 260 refused with an alert. The servable offer is 510 x (1 - 260/2495).
    refused = step(510, 447, failures={"tls_alert": 260})
    assert abs(servable(refused) - 510 * (1 - 260 / 2495)) < 1e-9
    assert kept_up(refused, attempts(5), bound_ns=50 * MS)
    # The same shortfall by timeouts is the server's: not kept up.
    timed_out = step(510, 447, failures={"handshake_timeout": 260})
    assert servable(timed_out) == 510
    assert not kept_up(timed_out, attempts(5), bound_ns=50 * MS)
    # The store's JSON text of the same counts, as the analysis reads it.
    assert servable({**refused, "failures": '{"tls_alert": 260}'}) == servable(refused)
    assert {"no_shared_sigalg", "verify_failed", "tls_alert"} <= ANSWERED


def test_without_a_reference_latency_only_the_rate_decides():
    assert kept_up(step(100, 100), attempts(900), bound_ns=math.nan)


def test_one_rule_judges_a_step_for_the_search_and_the_analysis():
    assert not fell_behind(0, 99.0, 101.0, 100.0)
    assert fell_behind(1, 100.0, 110.0, 100.0)  # an attempt found every slot taken
    assert fell_behind(0, 90.0, 99.0, 100.0)  # the interval stops short of the offer
    assert not fell_behind(0, 99.0, float("nan"), 100.0)  # no interval: saturated() decides
    assert latency_unbounded(120.0, 100.0) and not latency_unbounded(80.0, 100.0)
    assert not latency_unbounded(120.0, float("nan"))
