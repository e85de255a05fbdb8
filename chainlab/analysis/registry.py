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

Each name is declared on `Analysis` with its type (`mtc = computed[pd.DataFrame]()`), so a
type checker holds every reader to it and a misspelt name is an error before anything runs;
tests/analysis/test_registry.py holds the declarations and the producers to each other.

A store of probes only (`chainlab probe`) has no lab scenario: there an analysis runs only
if it was registered with `probes=True` (the probes' own, the metadata); every other is its
`empty()` value without running (an empty frame unless it says otherwise).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

import pandas as pd

if TYPE_CHECKING:
    # Named by the declarations below, in quotes (each module imports this one).
    from chainlab.analysis.compare import MonteCarlo  # noqa: F401
    from chainlab.analysis.network import NetworkAnalysis  # noqa: F401

T = TypeVar("T")


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


def declared() -> tuple[str, ...]:
    """Every analysis name `Analysis` declares."""
    return tuple(n for n, v in vars(Analysis).items() if isinstance(v, computed))


class computed(Generic[T]):  # noqa: N801 (read as a declaration: `summary = computed[...]()`)
    """An analysis of `Analysis`, of type T: computed by its producer the first time it is
    read, then kept on the instance (this descriptor defines no __set__, so the kept value
    is what later reads find)."""

    name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, a: None, owner: type) -> computed[T]: ...
    @overload
    def __get__(self, a: Analysis, owner: type) -> T: ...
    def __get__(self, a: Analysis | None, owner: type) -> computed[T] | T:
        if a is None:
            return self
        return a.compute(self.name)  # type: ignore[no-any-return]


class Analysis:
    """The analyses of one store, each computed when first asked for. `data` is the store's
    frames (chainlab.analysis.load.StoreData), `config` its settings."""

    # Every analysis, in the order of the modules that produce them.
    summary = computed[pd.DataFrame]()
    failures = computed[pd.DataFrame]()
    exposure = computed[pd.DataFrame]()
    trust_anchors = computed[pd.DataFrame]()
    by_position = computed[pd.DataFrame]()
    by_position_best = computed[pd.DataFrame]()
    monte_carlo = computed["MonteCarlo"]()
    baseline = computed[str]()
    baseline_note = computed[str]()
    multipliers = computed[pd.DataFrame]()
    strategy = computed[pd.DataFrame]()
    pairs = computed[pd.DataFrame]()
    table7 = computed[pd.DataFrame]()
    classes = computed[pd.DataFrame]()
    placement_study = computed[bool]()
    capacity = computed[pd.DataFrame]()
    all_capacity = computed[pd.DataFrame]()
    service_scenarios = computed[pd.DataFrame]()
    service_classes = computed[pd.DataFrame]()
    client_auth = computed[pd.DataFrame]()
    composite_placements = computed[pd.DataFrame]()
    composite_cheapest = computed[pd.DataFrame]()
    paper_matches = computed[pd.DataFrame]()
    paper_scenarios = computed[pd.DataFrame]()
    paper_classes = computed[pd.DataFrame]()
    paper_correlations = computed[pd.DataFrame]()
    paper_depth = computed[pd.DataFrame]()
    paper_kex = computed[pd.DataFrame]()
    compression = computed[pd.DataFrame]()
    compression_verdicts = computed[pd.DataFrame]()
    correlations = computed[pd.DataFrame]()
    counterexamples = computed[pd.DataFrame]()
    cost_model = computed[pd.DataFrame]()
    cost_model_stacks = computed[pd.DataFrame]()
    primitives = computed[pd.DataFrame]()
    decomposition = computed[pd.DataFrame]()
    decomposition_classes = computed[pd.DataFrame]()
    findings = computed[list[dict[str, Any]]]()
    network = computed["NetworkAnalysis | None"]()
    reference_network = computed["str | None"]()
    network_rank = computed["dict[str, tuple[Any, ...]] | None"]()
    projection = computed["pd.DataFrame | None"]()
    intermediates = computed[pd.DataFrame]()
    interop = computed[pd.DataFrame]()
    rollout_kinds = computed[pd.DataFrame]()
    rollout_load_kinds = computed[pd.DataFrame]()
    rollout_shares = computed[pd.DataFrame]()
    rollout_rule = computed[pd.DataFrame]()
    landmark_lag = computed[pd.DataFrame]()
    landmark_lag_rule = computed[pd.DataFrame]()
    load_steps = computed[pd.DataFrame]()
    host_speed = computed[pd.DataFrame]()
    load_capacity = computed[pd.DataFrame]()
    mtc = computed[pd.DataFrame]()
    mtc_proofs = computed[pd.DataFrame]()
    targets = computed[pd.DataFrame]()
    target_chains = computed[pd.DataFrame]()
    target_beside = computed[pd.DataFrame]()
    target_load = computed[pd.DataFrame]()
    client_profiles = computed[pd.DataFrame]()
    quic = computed[pd.DataFrame]()
    resumption = computed[pd.DataFrame]()
    server_cpu = computed[pd.DataFrame]()
    stacks = computed[pd.DataFrame]()
    stack_orderings = computed[pd.DataFrame]()
    stack_cost_split = computed[pd.DataFrame]()
    metadata = computed[list[tuple[str, str]]]()

    def __init__(self, data: Any) -> None:
        self.data = data
        self.config = data.config
        self.probes_only = data.scenarios.empty and not data.targets.empty
        self.computed: list[str] = []  # analyses in the order they ran
        self._running: list[str] = []

    def compute(self, name: str) -> Any:
        """Analysis `name` (and the others its producer gives), computed now and kept."""
        producer = _PRODUCERS.get(name)
        if producer is None:
            raise LookupError(f"analysis {name!r} has no producer (known: {', '.join(known())})")
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
        for n, v in zip(producer.names, values, strict=True):
            self.__dict__[n] = v
        self.computed.extend(producer.names)
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
