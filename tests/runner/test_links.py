"""The run's shared links (chainlab.runner.links): which profiles share one, each visit's own
figures from the forwarder's counters, and closing them with the run."""

import contextlib
import dataclasses
from pathlib import Path

import pytest

from chainlab.campaign import load
from chainlab.campaign.model import NetworkProfile
from chainlab.errors import ChainlabError
from chainlab.runner import links

REPO = Path(__file__).resolve().parents[2]


def stats(wakeups, late, late_max, late_window, waits=(0, 0)):
    return {
        "timer": {
            "wakeups": wakeups,
            "late_ns_total": late,
            "late_ns_max": late_max,
            "late_ns_max_window": late_window,
        },
        "a_to_b": {"queue_wait_ns_max": 99, "queue_wait_ns_max_window": waits[0]},
        "b_to_a": {"queue_wait_ns_max": 99, "queue_wait_ns_max_window": waits[1]},
    }


class FakeLink:
    def __init__(self, readings):
        self.readings = list(readings)

    def forwarder_stats(self):
        if not self.readings:
            raise ChainlabError("forwarder_stats: this link has no running forwarder")
        return self.readings.pop(0)


def test_only_a_link_that_draws_nothing_and_is_not_pinned_is_shared():
    composite = load(REPO / "campaigns" / "composite.toml").scenarios
    over = next(s for sid, s in composite.items() if sid.endswith("__net_wan50"))
    on_loopback = next(s for s in composite.values() if s.network_profile is None)

    def on(profile, plan=None):
        return dataclasses.replace(over, network_profile=profile, load=plan)

    plain = NetworkProfile(name="p", delay_ms=25.0, rate_mbit=10.0)
    assert over.shares_link and on(plain).shares_link
    assert not on_loopback.shares_link  # no link at all
    assert not on(plain, plan=object()).shares_link  # load steps pin the forwarder
    for drawn in ({"loss": 0.01}, {"jitter_ms": 1.0}, {"backend": "netem"}):
        assert not on(NetworkProfile(name="d", delay_ms=25.0, **drawn)).shares_link


def test_a_visit_counts_its_own_wakeups_and_the_largest_since_its_start():
    start = stats(100, 5_000, 900, 900)
    end = stats(130, 5_600, 900, 40, waits=(7, 3))
    visit = links.Visit(FakeLink([end]), start)
    assert visit.end() == {
        "timer": {"wakeups": 30, "late_ns_total": 600, "late_ns_max": 40},
        "a_to_b": {"queue_wait_ns_max": 7},
        "b_to_a": {"queue_wait_ns_max": 3},
    }
    # A forwarder that no longer answers: no figures for the visit, and a visit cannot begin
    # on it (the run forgets the link).
    assert links.Visit(FakeLink([]), start).end() is None
    gone = []
    with pytest.raises(ChainlabError):
        links.Visit.begin(FakeLink([]), lambda: gone.append(True))
    assert gone == [True]
    assert links.Visit.begin(FakeLink([start]), lambda: gone.append(False)).start == start


def test_each_profile_opens_once_and_closes_with_the_run():
    events = []

    def opener(name):
        @contextlib.contextmanager
        def open_link():
            events.append(f"open {name}")
            yield FakeLink([])
            events.append(f"close {name}")

        return open_link

    run = links.SharedLinks()
    a, opened = run.get("a", opener("a"))
    assert opened
    again, opened = run.get("a", opener("a"))
    assert again is a and not opened
    run.get("b", opener("b"))
    # A link that stopped answering is forgotten: the next visit opens another.
    run.drop("a")
    _, opened = run.get("a", opener("a"))
    assert opened
    run.close()
    assert events == ["open a", "open b", "open a", "close a", "close b", "close a"]


def test_a_scenarios_link_timing_is_flagged_only_past_its_profiles_allowance():
    from chainlab.network import calibrate

    profile = NetworkProfile("wan", delay_ms=40.0)
    allowed_ns = calibrate.link_allowance_ms(profile) * 1e6
    visits = [stats(10, 10 * allowed_ns * 0.5, 2e6, 0), stats(10, 10 * allowed_ns, 5e6, 0)]
    timing = links.link_timing(visits, profile)
    # Over both visits: a mean of 0.75 of the allowance, the largest lateness and wait.
    assert timing["link_timer_late_us_mean"] == pytest.approx(allowed_ns * 0.75 / 1e3)
    assert timing["link_timer_late_us_max"] == 5e3
    assert timing["link_queue_wait_us_max"] == 99 / 1e3
    assert not timing["link_flagged"]
    late = [stats(10, 10 * allowed_ns * 1.5, 5e6, 0)]
    assert links.link_timing(late, profile)["link_flagged"]
    # No link, or no profile (loopback): nothing.
    assert links.link_timing([], profile) == {} and links.link_timing(visits, None) == {}
