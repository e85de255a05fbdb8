"""What a validated campaign file becomes: scenarios, their sampling policies, campaigns."""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from chainlab import axes
from chainlab.axes import stack
from chainlab.axes.algorithms import GROUPS
from chainlab.axes.handshake import Handshake
from chainlab.errors import ChainlabError

# Roles of the positions of a hierarchy of each depth, root first (the store's column names).
ROLES = {
    1: ("self",),
    2: ("root", "leaf"),
    3: ("root", "int", "leaf"),
    4: ("root", "int1", "int2", "leaf"),
}

# The scenario columns (store schema) that identify a scenario apart from its network: a
# scenario and its twin on another network share them (chainlab.axes).
SCENARIO_KEYS = axes.scenario_keys()

# The store's name of a role (certificates.role) where it differs from the id's.
STORE_ROLES = {"self": "self-signed", "int": "int1"}


# The sampling rule (chainlab.runner.sampler): from this many successful handshakes on, a
# batch goes straight to the predicted count: the sample standard deviation's relative
# standard error is about 1 / sqrt(2 n), 2.5 % at 800, so n* is known within ~5 %. Below it
# a batch at most multiplies n by SAMPLE_GROWTH. Each batch is an engine process (its start,
# its warm-up, its records read: ~0.05 s beside a 1-2 ms handshake): a 6000-handshake scenario
# took 7 batches when every one could only double, 5 with SETTLED_N = 1000 and doubling,
# and takes 3 (200, 800, n*) with these.
SETTLED_N = 800
# Growth below SETTLED_N: at n = 200 (a campaign's usual `min`) n* is known within ~10 %, so
# a batch to 4 n overshoots only a scenario whose n* lies below 4 n, and by no more than that
# error; doubling had cost the paper matrix's ML-DSA scenarios two more engine processes each.
SAMPLE_GROWTH = 4


@dataclass(frozen=True)
class SamplingPolicy:
    """How many handshakes a scenario gets. See docs/sampling.md for the adaptive rule."""

    mode: str  # "fixed" | "adaptive"
    count: int  # fixed mode: measured handshakes
    target_rel_halfwidth: float  # adaptive: stop when CI half-width / mean <= this
    confidence: float  # level of that interval
    min: int  # adaptive: never stop on the CI before this many successful handshakes
    max: int  # adaptive: never measure more than this many handshakes
    time_cap_s: float | None  # stop a scenario's sampling after this long (None: no cap)
    warmup: int  # warm-up handshakes before the first batch (recorded, not analysed)
    batch_warmup: int  # warm-up handshakes at the start of each later batch (new client)
    timeout_ms: int  # connect + handshake timeout handed to the engine client
    max_failed_fraction: float  # more failed handshakes than this marks the scenario failed

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class NetworkProfile:
    """An emulated link, as declared in `[network.<name>]` (None = not set, link default).
    The keys are those of chainlab/network/profile.py, which validates them again."""

    name: str
    delay_ms: float = 0.0
    jitter_ms: float = 0.0
    rate_mbit: float | None = None
    loss: float = 0.0
    mtu: int = 1500
    queue_packets: int | None = None
    initcwnd: int | None = None
    backend: str = "tun"
    # The link's random seed (jitter, loss), so a profile replays identically; None: the
    # run's seed (campaign.seed, or --seed), filled in by the runner.
    seed: int | None = None
    congestion_control: str | None = None  # None: the link's default (cubic)
    description: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# How chainlab.runner.primitives measures (the run-time estimate prices the same steps:
# chainlab.model.run_estimate).
# A pilot batch: enough operations for a first variance.
PILOT = 5
# Fewest operations a primitive's interval is computed from.
MIN_SAMPLES = 5
# Batches per primitive at most (pilot included): a safety bound only. Each batch is sized
# from the variance so far (usually one or two follow the pilot) and the time cap ends any
# primitive, so a primitive is left short of its interval only if this many batches all
# fell short (a later run would then measure it further).
MAX_BATCHES = 20
# A batch's timed operations last at most this long (by the mean so far), and the host is
# read between batches: each batch is scaled by the readings around it (runner.primitives.
# time_item), so a spell of the host inside a long primitive weighs on its own batches
# only. Taken whole between two readings, OpenSSL 3.5's 5,347 ML-DSA-65 signatures (10 s,
# 2026-11-30) ran 1.5x slower for 2.5 s of it while both readings found the host fast, and
# were priced 37 % too slow (composite.toml's OpenSSL server +27 %). A primitive capped at
# `time_cap_s` takes about that many seconds' batches beyond MAX_BATCHES.
BATCH_MAX_S = 1.0
# Measured handshakes per reference (after REFERENCE_WARMUP each round): each costs 1-3 ms
# here, so a reference takes about a second; 300 put the mean's 95 % interval near 2 % (CV
# about 0.2).
REFERENCE_COUNT = 300
REFERENCE_WARMUP = 20
# The references of a stack are taken in this many rounds, interleaved (ecdsa, ecdsa resumed,
# mldsa, then again), so that a slow second of the host weighs on every reference a little
# rather than on one of them whole: one of 300 ML-DSA handshakes taken at once here measured
# 1.06 ms of client CPU (median) in one run and 0.76 ms in the next, the ECDSA ones unmoved, and
# the overhead line through the two predicted +31 % for that stack's ML-DSA scenarios.
REFERENCE_ROUNDS = 3
# The path references (reference_specs.PATH_REFERENCES over each emulated profile a campaign
# runs): one
# round of 30 after 3 warm-ups each. Over a 50 ms path each handshake takes ~0.15 s, so a
# profile costs ~10 s a stack; the path's extra CPU (0.15-0.5 ms a side) is measured within
# a few per cent of a 1 ms figure.
PATH_REFERENCE_COUNT = 30
PATH_REFERENCE_WARMUP = 3
# The wait reference (reference_specs.WAIT_REFERENCE, per stack whose client waits long in a
# campaign):
# one round of 30 after 3 warm-ups, each ~45 ms of the server's SLH-DSA-SHAKE-128f
# signature, ~1.5 s a stack; its client's 3-4 ms of CPU a handshake (CV ~0.1) give the
# wake-up's 0.4-0.8 ms within ~0.05 ms.
WAIT_REFERENCE_COUNT = 30
WAIT_REFERENCE_WARMUP = 3
# A reference set is complete with this share of its handshakes: a handshake whose server CPU
# the engine left null is dropped, and OpenSSL's QUIC server leaves it null when the previous
# connection was still closing as the next arrived (0-4 of 300 one at a time here; TCP none).
REFERENCE_KEPT_SHARE = 0.95


@dataclass(frozen=True)
class PrimitivesPlan:
    """[primitives]: the cost model's primitives, measured before the scenarios."""

    measure: bool = True
    target_rel_halfwidth: float = 0.02
    confidence: float = 0.95
    time_cap_s: float = 8.0  # per operation, of timed operations


@dataclass(frozen=True)
class LoadPlan:
    """The campaign's [load] table: open-loop load steps run on every scenario after its
    single-connection measurement (docs/campaigns.md)."""

    rates: tuple[float, ...] | None  # absolute offered loads (attempts/s), or
    fractions: tuple[float, ...] | None  # offered / the capacity measured first
    arrivals: str  # constant | poisson
    step_s: float  # length of each step's schedule
    capacity_s: float  # length of each capacity-measurement attempt
    max_in_flight: int | None  # None: sized per step (chainlab.runner.load.in_flight)
    server_cpus: str
    generator_cpus: str
    server_model: str  # event | threads (the engine's --server-model)
    server_workers: int
    warmup: int  # unscheduled handshakes before the first step
    verify: bool  # the generator verifies the server's chain
    generator_stack: str | None = None  # the generator's TLS stack (None: the client's)
    # Steps of the sustainable-rate search (chainlab.runner.load: `fractions` are of its
    # result); 0: none, `fractions` of the overload throughput.
    search_steps: int = 3

    @property
    def server_cores(self) -> int:
        return len(cpu_list(self.server_cpus))

    @property
    def generator_cores(self) -> int:
        return len(cpu_list(self.generator_cpus))

    def generator_of(self, client_stack: str) -> str:
        """The generator's TLS stack in a scenario whose client is `client_stack`."""
        return self.generator_stack or client_stack

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# Instruction sources a campaign may ask for ([measure] instructions; "none": the wall-clock
# samples only, with the hardware counter's instructions where the host has one).
INSTRUCTION_SOURCES = ("none", "callgrind")
# Where the counted handshakes' random bytes come from ([measure] random): the system's, or a
# stream fixed by the run's seed, the scenario, the side and the connection (the engines'
# `--random-seed`), so every run counts the same handshakes
# (docs/methods/instructions.md#instructions-per-handshake).
RANDOM_SOURCES = ("system", "seeded")


@dataclass(frozen=True)
class MeasurePlan:
    """[measure] for one scenario (chainlab.campaign.measure_plan): instructions counted per
    connection and side under callgrind, for `count` handshakes after `warmup` ones, drawing
    `random` bytes."""

    instructions: str = "none"
    count: int = 10
    warmup: int = 1
    random: str = "system"

    @property
    def counts_instructions(self) -> bool:
        return self.instructions != "none"


def cpu_list(text: str) -> list[int]:
    """The CPUs of a list such as "0,2-3" (already checked against its pattern)."""
    out: set[int] = set()
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.update(range(int(lo), int(hi or lo) + 1))
    return sorted(out)


@dataclass(frozen=True)
class Target:
    """A [targets.<name>] table: a TLS 1.3 server chainlab measures but does not start."""

    name: str
    address: str  # host:port
    servername: str  # SNI and the name the certificate must carry
    ca: str  # 'system', 'none' (no chain verification) or a PEM file, as written
    sigalgs: str | None = None  # the client's offered signature schemes (None: the library's)
    description: str = ""
    # `ca` resolved against the campaign file's directory (a file), for the runner only: a
    # path of this machine, never stored.
    ca_file: Path | None = field(default=None, compare=False, repr=False)

    @property
    def host(self) -> str:
        return self.address.rsplit(":", 1)[0].strip("[]")

    @property
    def port(self) -> int:
        return int(self.address.rsplit(":", 1)[1])

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "address": self.address,
            "servername": self.servername,
            "ca": self.ca,
            "sigalgs": self.sigalgs,
        }


@dataclass(frozen=True)
class Scenario:
    """One point of the matrix: everything that defines a measured configuration.

    Its fields are the four structural axes (the key exchange, the hierarchy, the network,
    a target) and what the run needs besides; every other axis's value is a lever
    (chainlab.axes), read as `s.value(key)`, its store columns as `s.columns()`.
    What the values make of the handshake (stacks, QUIC, the mode, what is sent, the
    credential) is `s.handshake` (`s.handshake.anchor_depth`, `s.handshake.engine_chain`):
    nothing is looked up by name at run time."""

    scenario_id: str
    kex: str
    hierarchy: tuple[str, ...]  # canonical algorithm names, root first, leaf last
    network: str
    sampling: SamplingPolicy = field(compare=False)
    # The `[network.<name>]` profile `network` names (None for loopback), for the run-time
    # estimate and the runner; not part of the scenario's identity or its stored params.
    network_profile: NetworkProfile | None = field(default=None, compare=False, repr=False)
    # The campaign's [load] plan (None: no load steps); not part of the identity either.
    load: LoadPlan | None = field(default=None, compare=False, repr=False)
    # The campaign's [measure] plan where it counts instructions (None: it does not).
    measure: MeasurePlan | None = field(default=None, compare=False, repr=False)
    # A server chainlab does not start ([targets.<name>]): its name is part of the identity
    # (the hierarchy is then empty: the server serves its own chain); the table itself not.
    target: str | None = None
    target_spec: Target | None = field(default=None, compare=False, repr=False)
    # The levers' values where not at their default, as (axis key, value) pairs in registry
    # order; part of the identity.
    levers: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        given = dict(self.levers)
        unknown = set(given) - {a.key for a in axes.levers()}
        if unknown:
            raise ValueError(f"not a lever: {', '.join(sorted(unknown))}")
        kept = tuple(
            (a.key, given[a.key])
            for a in axes.levers()
            if a.key in given and given[a.key] != a.default
        )
        object.__setattr__(self, "levers", kept)

    @classmethod
    def from_parts(cls, scenario_id: str, parts: dict[str, Any], **rest: Any) -> Scenario:
        """A scenario from its parts (axis key -> value, as ids and matrices give them)."""
        own = {f.name for f in fields(cls)}
        kw = {k: v for k, v in parts.items() if k in own}
        more = tuple((k, v) for k, v in parts.items() if k not in own)
        return cls(scenario_id=scenario_id, levers=more, **kw, **rest)

    def value(self, key: str) -> Any:
        """The scenario's value of axis `key` (its default where the scenario predates it)."""
        if key in self.__dataclass_fields__:
            return getattr(self, key)
        return dict(self.levers).get(key, axes.get(key).default)

    def parts(self) -> dict[str, Any]:
        """Axis key -> value, for every registered axis."""
        return {a.key: self.value(a.key) for a in axes.registered()}

    def columns(self) -> dict[str, Any]:
        """The store's scenario columns of every axis (chainlab.axes)."""
        return axes.values_of(self.parts())

    @property
    def keeps_server(self) -> bool:
        """Whether a run keeps this scenario's server to serve later visits with the same
        server (chainlab.runner.servers): on loopback, over TCP, on a stack whose server
        answers a sync, without load steps or instruction counts."""
        return (
            self.network_profile is None
            and self.target_spec is None
            and not self.handshake.quic
            and self.load is None
            and self.measure is None
            and stack.CAPABILITIES[self.handshake.stacks[1]].serves_visits
        )

    @property
    def shares_link(self) -> bool:
        """Whether a run keeps this scenario's emulated link for the next scenario on its
        profile (chainlab.runner.links): its packets depend on nothing but the clock (a
        delay and a rate; loss and jitter draws would go on from one scenario into the
        next) and its forwarder may run on any core (load steps pin it)."""
        p = self.network_profile
        return (
            p is not None
            and self.load is None
            and p.backend == "tun"
            and not p.loss
            and not p.jitter_ms
        )

    @functools.cached_property
    def handshake(self) -> Handshake:
        """What the scenario's axis values make of its handshake and run."""
        return axes.handshake(self.parts(), self.network_profile)

    @property
    def depth(self) -> int:
        return len(self.hierarchy)

    @property
    def kex_family(self) -> str:
        return GROUPS[self.kex]

    @property
    def leaf_alg(self) -> str | None:
        return self.hierarchy[-1] if self.hierarchy else None

    @property
    def root_alg(self) -> str | None:
        return self.hierarchy[0] if self.depth >= 2 else None

    @property
    def int1_alg(self) -> str | None:
        return self.hierarchy[1] if self.depth >= 3 else None

    @property
    def int2_alg(self) -> str | None:
        return self.hierarchy[2] if self.depth >= 4 else None

    @property
    def roles(self) -> tuple[str, ...]:
        return ROLES.get(self.depth, ())

    @property
    def certificate_roles(self) -> tuple[str, ...]:
        """The store's role of each certificate, leaf first (position 0)."""
        return tuple(STORE_ROLES.get(r, r) for r in reversed(self.roles))

    def params(self) -> dict[str, Any]:
        """The scenario's defining parameters (stored as `scenarios.params`): the structural
        axes, then what each lever says of its value (`Axis.params_of`)."""
        out = {
            "scenario_id": self.scenario_id,
            "kex": self.kex,
            "kex_family": self.kex_family,
            "depth": self.depth,
            "hierarchy": list(self.hierarchy),
            "root_alg": self.root_alg,
            "int1_alg": self.int1_alg,
            "int2_alg": self.int2_alg,
            "leaf_alg": self.leaf_alg,
            "network": self.network,
            **({"target": self.target_spec.to_dict()} if self.target_spec is not None else {}),
        }
        for a in axes.levers():
            out.update(a.params_of(self.value(a.key)))
        return out


@dataclass
class Campaign:
    """A validated, expanded campaign file."""

    path: Path
    text: str
    sha256: str
    name: str
    description: str
    seed: int
    order: str
    baseline: str | None
    aliases: dict[str, str]
    networks: dict[str, NetworkProfile]
    scenarios: dict[str, Scenario]  # every scenario of every campaign, in declaration order
    campaigns: dict[str, list[str]]  # campaign name -> scenario ids, declaration order
    analysis: dict[str, Any]
    notes: list[str] = field(default_factory=list)  # non-fatal remarks for `validate`
    load: LoadPlan | None = None
    measure: MeasurePlan = field(default_factory=MeasurePlan)
    primitives: PrimitivesPlan = field(default_factory=PrimitivesPlan)
    cluster: str | None = None  # [cluster] address: a Dask scheduler
    placement: str = "whole"  # [cluster] placement: whole | split

    def select(self, names: list[str] | None = None) -> list[Scenario]:
        """Scenarios of the named campaigns (all when None), each once, declaration order."""
        chosen = names if names else list(self.campaigns)
        for n in chosen:
            if n not in self.campaigns:
                raise ChainlabError(
                    f"{self.path.name}: no campaign {n!r}; allowed: {', '.join(self.campaigns)}"
                )
        wanted = {sid for n in chosen for sid in self.campaigns[n]}
        return [s for sid, s in self.scenarios.items() if sid in wanted]

    def memberships(self, names: list[str] | None = None) -> list[tuple[str, str]]:
        """(campaign, scenario_id) pairs of the named campaigns (all when None)."""
        chosen = names if names else list(self.campaigns)
        return [(c, sid) for c in chosen for sid in self.campaigns[c]]
