"""The engine parts a run of some scenarios needs built (chainlab.engine.ensure builds the
missing ones before anything else): the OpenSSL 3.5 engine always (it issues every
hierarchy, times the primitives and runs the host-speed reference), every stack a scenario
runs on either side, liboqs where a hierarchy holds one of its algorithms, the emulated
link's forwarder where a scenario runs on an emulated profile."""

from __future__ import annotations

from collections.abc import Iterable

from chainlab.axes.algorithms import ALGORITHM_FAMILY, LIBOQS_FAMILIES
from chainlab.axes.stack import DEFAULT_STACK
from chainlab.campaign.model import Scenario
from chainlab.network.profile import LOOPBACK
from chainlab.runner import pki


def needed(scenarios: Iterable[Scenario], seed: int) -> list[str]:
    """The parts (chainlab.engine.PARTS keys) `scenarios` need, the default engine first."""
    scenarios = list(scenarios)
    parts = [DEFAULT_STACK]
    algorithms = {a for s in scenarios for spec in pki.needed(s, seed) for a in spec[0]}
    if any(ALGORITHM_FAMILY.get(a) in LIBOQS_FAMILIES for a in algorithms):
        parts.append("liboqs")
    parts += sorted({st for s in scenarios for st in s.handshake.stacks} - {DEFAULT_STACK})
    if any(s.network != LOOPBACK for s in scenarios):
        parts.append("link")
    return parts
