"""Emulated links a run keeps from one scenario to the next (chainlab.network.link).

A link's set-up and teardown (two namespaces, their devices, the forwarder) cost each
scenario visit about 0.1 s: composite.toml's eight visits of its 50 ms path took 0.65 s to
open and 0.41 s to close (2026-11-30), and mtc.toml visits its path about eighty times. A
link a scenario may share (`Scenario.shares_link`: its packets depend on nothing but the
clock, and its forwarder may run on any core) serves every such scenario of its profile in a
run. Each visit reads the forwarder's counters at its start and its end
(`Visit`): the timer's wake-ups and lateness in between, and the largest lateness and queue
wait since the start (chainlab-link's `*_max_window`, which each reading starts again), so a
visit's link figures are its own, as on a link of its own. The run closes its links at its
end (`SharedLinks.close`), whatever ends it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass

from chainlab.campaign.model import NetworkProfile
from chainlab.errors import ChainlabError
from chainlab.network import calibrate
from chainlab.network.link import Link

# The forwarder's two directions, as its statistics name them.
DIRECTIONS = ("a_to_b", "b_to_a")


class SharedLinks:
    """A run's links by profile name, each opened by its first visit and closed with the
    run."""

    def __init__(self) -> None:
        self._stack = contextlib.ExitStack()
        self._links: dict[str, Link] = {}

    def get(
        self, name: str, open_link: Callable[[], AbstractContextManager[Link]]
    ) -> tuple[Link, bool]:
        """The run's link of profile `name`, opened by `open_link` if it has none yet (True:
        opened now)."""
        if name in self._links:
            return self._links[name], False
        link = self._stack.enter_context(open_link())
        self._links[name] = link
        return link, True

    def drop(self, name: str) -> None:
        """Forgets a link that stopped answering: the next visit opens another; this one is
        closed with the run."""
        self._links.pop(name, None)

    def close(self) -> None:
        """Closes every link of the run (namespaces, devices, forwarders)."""
        self._links.clear()
        self._stack.close()


@dataclass
class Visit:
    """One visit's use of a shared link: the forwarder's counters at its start."""

    link: Link
    start: dict

    @classmethod
    def begin(cls, link: Link, gone: Callable[[], None]) -> Visit:
        """A visit from now on; where the forwarder no longer answers, `gone` (the run
        forgets the link) and the error."""
        try:
            return cls(link, link.forwarder_stats())
        except ChainlabError:
            gone()
            raise

    def end(self) -> dict | None:
        """The visit's own timer and queue figures, shaped as a link's final statistics
        (None: the forwarder no longer answers)."""
        try:
            end = self.link.forwarder_stats()
        except ChainlabError:
            return None
        return window(self.start, end)


def window(start: dict, end: dict) -> dict:
    """What the forwarder counted between two readings: wake-ups and lateness as
    differences, the largest lateness and queue waits from the later reading's window."""
    t0, t1 = start["timer"], end["timer"]
    return {
        "timer": {
            "wakeups": t1["wakeups"] - t0["wakeups"],
            "late_ns_total": t1["late_ns_total"] - t0["late_ns_total"],
            "late_ns_max": t1["late_ns_max_window"],
        },
        **{d: {"queue_wait_ns_max": end[d]["queue_wait_ns_max_window"]} for d in DIRECTIONS},
    }


def link_timing(link_stats: list[dict], profile: NetworkProfile | None) -> dict:
    """The forwarder's timer lateness and bottleneck queueing over a scenario's links (each
    visit's `stats`); flagged when its packets were late on average by more than `profile`
    allows. Nothing without links."""
    if not link_stats or profile is None:
        return {}
    wakeups = sum(st["timer"]["wakeups"] for st in link_stats)
    late = sum(st["timer"]["late_ns_total"] for st in link_stats)
    late_max = max(st["timer"]["late_ns_max"] for st in link_stats)
    wait_max = max(st[d].get("queue_wait_ns_max", 0) for st in link_stats for d in DIRECTIONS)
    allowed_ms = calibrate.link_allowance_ms(profile)
    return {
        "link_timer_late_us_mean": late / wakeups / 1e3 if wakeups else None,
        "link_timer_late_us_max": late_max / 1e3,
        "link_queue_wait_us_max": wait_max / 1e3,
        "link_flagged": bool(wakeups) and late / wakeups / 1e6 > allowed_ms,
    }
