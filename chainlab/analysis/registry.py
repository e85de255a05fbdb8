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

A store of probes only (`chainlab probe`) has no lab scenario: every analysis but the
probes' and the metadata is then empty (`EMPTY_FOR_PROBES`) without running.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pandas as pd

# name -> (the function, every name it produces, in the order it returns them)
_PRODUCERS: dict[str, tuple[Callable[[Analysis], Any], tuple[str, ...]]] = {}

# Analyses that run in a store of probes only; the others are empty there.
FOR_PROBES = ("metadata", "targets", "target_chains", "target_beside", "target_load")
PROBES_ONLY_NOTE = "the store holds probes of servers chainlab did not start only"


def produces(*names: str):
    """Registers a function of an `Analysis` as the producer of `names` (it returns their
    values in that order, or the one value)."""

    def register(fn):
        for n in names:
            if n in _PRODUCERS:
                raise ValueError(f"analysis {n!r} is produced twice")
            _PRODUCERS[n] = (fn, names)
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
        fn, names = _PRODUCERS[name]
        if name in self._running:
            raise RuntimeError(f"analysis {name!r} asks for itself: {' -> '.join(self._running)}")
        if self.probes_only and name not in FOR_PROBES:
            values = tuple(_empty(n) for n in names)
        else:
            self._running.append(name)
            try:
                got = fn(self)
            finally:
                self._running.pop()
            values = (got,) if len(names) == 1 else tuple(got)
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


def _empty(name: str):
    """An analysis's value in a store of probes only."""
    if name == "summary":
        return empty_summary()
    if name == "baseline_note":
        return PROBES_ONLY_NOTE
    if name in ("baseline", "reference_network", "network", "monte_carlo"):
        return None
    if name == "findings":
        return []
    if name == "placement_study":
        return False
    return pd.DataFrame()
