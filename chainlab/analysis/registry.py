"""Analyses on demand: each analysis module registers what it produces, and an `Analysis`
computes a result the first time something asks for it, then keeps it.

An analysis is a function of the `Analysis` (its store data, its settings and the other
analyses it asks for), registered with the names it produces:

    @produces("mtc", "mtc_proofs")
    def _mtc(a):
        return per_pair(a.summary, ...), proofs(a.summary)

`a.mtc` then runs it once (and `a.summary` whatever that needs), and `a.mtc_proofs` is
kept from the same run. A report section reads the attributes it needs, so a report
computes what its sections use and nothing else (`Analysis.computed` lists what ran).

A store of probes only (`chainlab probe`) has no lab scenario: there an analysis runs only
if it was registered with `probes=True` (the probes' own, the metadata); every other is its
`empty()` value without running (an empty frame unless it says otherwise).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd


@dataclass(frozen=True)
class Producer:
    """How a group of analyses is computed."""

    fn: Callable[[Analysis], Any]  # returns the values of `names`, in order (or the one)
    names: tuple[str, ...]
    # Their values in a store of probes only, where the analysis does not run (None: an
    # empty frame each).
    empty: Callable[[], Any] | None = None
    # Whether it runs in a store of probes only.
    probes: bool = False

    def empty_values(self) -> tuple:
        if self.empty is None:
            return tuple(pd.DataFrame() for _ in self.names)
        got = self.empty()
        return (got,) if len(self.names) == 1 else tuple(got)


# name -> the producer of it (and of the names computed with it)
_PRODUCERS: dict[str, Producer] = {}


def produces(*names: str, empty: Callable[[], Any] | None = None, probes: bool = False):
    """Registers a function of an `Analysis` as the producer of `names` (it returns their
    values in that order, or the one value); `empty` and `probes`: see `Producer`."""

    def register(fn):
        producer = Producer(fn, names, empty, probes)
        for n in names:
            if n in _PRODUCERS:
                raise ValueError(f"analysis {n!r} is produced twice")
            _PRODUCERS[n] = producer
        return fn

    return register


def known() -> tuple[str, ...]:
    """Every analysis name registered."""
    return tuple(_PRODUCERS)


class Analysis:
    """The analyses of one store, each computed when first asked for. `data` is the store's
    frames (chainlab.analysis.load.StoreData), `config` its settings."""

    def __init__(self, data):
        self.data = data
        self.config = data.config
        self.probes_only = data.scenarios.empty and not data.targets.empty
        self.computed: list[str] = []  # analyses in the order they ran
        self._running: list[str] = []

    def __getattr__(self, name: str):
        # Only reached for a name not yet set: an analysis to compute, or a true miss.
        if name.startswith("_") or name not in _PRODUCERS:
            raise AttributeError(f"no analysis {name!r} (known: {', '.join(sorted(known()))})")
        producer = _PRODUCERS[name]
        if name in self._running:
            raise RuntimeError(f"analysis {name!r} asks for itself: {' -> '.join(self._running)}")
        if self.probes_only and not producer.probes:
            values = producer.empty_values()
        else:
            self._running.append(name)
            try:
                got = producer.fn(self)
            finally:
                self._running.pop()
            values = (got,) if len(producer.names) == 1 else tuple(got)
        names = producer.names
        for n, v in zip(names, values, strict=True):
            self.__dict__[n] = v
        self.computed.extend(names)
        return self.__dict__[name]

    def with_config(self, config) -> Analysis:
        """The same store's analyses under other settings (none computed yet)."""
        data = copy.copy(self.data)
        data.config = config
        return Analysis(data)

    def reference_summary(self) -> pd.DataFrame:
        """The summary rows of the scenarios on the reference network."""
        return on_network(self.summary, self.reference_network)


def on_network(summ: pd.DataFrame, net: str | None) -> pd.DataFrame:
    """`summ` restricted to network `net` (the frame itself when nothing is left out)."""
    if net is None or summ.empty or "network" not in summ or (summ["network"] == net).all():
        return summ
    return summ[summ["network"] == net].reset_index(drop=True)


def empty_summary() -> pd.DataFrame:
    """The summary of a store without a scenario to summarise."""
    return pd.DataFrame(columns=["scenario_id", "status", "placement_class"])
