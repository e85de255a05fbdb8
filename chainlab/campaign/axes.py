"""The scenario axes, each declared once: what a campaign's [matrix.*] may cross.

An axis says everything the rest of chainlab needs to know of it: its TOML key and the values
it accepts, its default (a matrix that leaves the axis out gets it, and an id names nothing
at it), its id token, its store column(s), its label and the order of its values in the
report, the `where` keys it offers (exclusions, sampling overrides), the engine flags it
becomes and what a non-default value needs of a TLS stack.

The loader (`tables.py`, `matrix_reader.py`), matrix expansion and `where` matching
(`matrix.py`), ids (`ids.py`), a scenario's values (`model.py`), the store's scenario
columns (`chainlab.store.schema`), the summary and pairing (`analysis/summary.py`,
`analysis/compare.py`, `analysis/twins.py`) and the runner's command lines
(`runner/engine_args.py`) iterate over `registered()` instead of naming axes one by one.

Four axes shape the id and the run themselves and keep their own code where noted: `kex`
leads the id, `hierarchy` is its positions (stored as depth and one algorithm per role),
`target` replaces the positions (a server chainlab does not start), `network` starts a link.
Every other axis is a *lever*: declared here and nowhere else (ARCHITECTURE.md, "A campaign
axis", is the recipe).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from chainlab.campaign import certificates, rollout, stacks
from chainlab.campaign.algorithms import (
    CERT_COMPRESSIONS,
    GROUPS,
    INTERMEDIATE_ANCHOR,
    MIX_RE,
    NO_CLIENT_AUTH,
    SERVED_CHAINS,
    TRANSPORTS,
)
from chainlab.network.profile import LOOPBACK

# Values an id does not name (the defaults of the levers below).
DEFAULT_SERVED_CHAIN = "leaf+intermediates"
DEFAULT_HANDSHAKE_MODE = "full"
DEFAULT_CERT_COMPRESSION = "none"
DEFAULT_TRANSPORT = "tcp"

SERVED_TOKENS = {
    "leaf": "served_leaf",
    "full": "served_full",
    "intermediate-anchor": "served_intanchor",
}
CLIENT_PREFIX = "client_"

# An id part an axis does not recognise (`Axis.id_read`).
NOT_MINE = object()


@dataclass(frozen=True)
class Axis:
    """One scenario axis. Only `key`, `label`, `default` and `read` are required: a lever
    whose value is one string of a fixed set needs nothing else but its id token."""

    key: str  # the [matrix.*] key, the `where` key, the scenario's attribute
    label: str  # what the report calls it ("certificate compression")
    default: Any  # a matrix that leaves the axis out gets this; the id names nothing then
    # How the loader reads one value: the allowed strings, or the name of a reader of the
    # loader's validator (`group`, `read_hierarchy`, `handshake_mode`, `client_auth`, ...).
    read: tuple[str, ...] | str
    # The scenario (store, summary) columns the axis sets; None: one column named `key`.
    columns: tuple[str, ...] | None = None
    # The store's value(s) of each column from the axis's value; None: the value itself.
    store: Callable[[Any], tuple] | None = None
    # The report's order of values (lower first; values not named come after, by name).
    order: Mapping[str, int] = field(default_factory=dict)
    # The id's part for a value (None at the default); `alg_token` names an algorithm.
    id_part: Callable[[Any, Callable[[str], str]], str | None] | None = None
    # The value an id part stands for, given the file's token -> algorithm map; NOT_MINE.
    id_read: Callable[[str, Mapping[str, str]], Any] | None = None
    # What the id grammar allows for this axis, for the message of an unknown part.
    id_help: str = ""
    # `where` keys the axis offers and the set of values a scenario's value has for each;
    # None: one key, `key`, tested against the value itself.
    where: Mapping[str, Callable[[Any], set]] | None = None
    # How the loader reads a value of each `where` key (as `read`); None: `read` for `key`.
    where_read: Mapping[str, tuple[str, ...] | str] | None = None
    # Engine flags both sides take for a value (None: the runner passes it its own way).
    flags: Callable[[Any], list[str]] | None = None
    # (side, capability) pairs a value needs of the stacks: checked against each stack's
    # missing features (chainlab.campaign.stacks), with the text it reads as.
    needs: Callable[[Any, Mapping[str, Any]], list[tuple[str, str, str]]] | None = None
    # How a scenario's label names its value where the axis varies in a store, from its
    # column values; None: "<key> <value>".
    describe: Callable[..., str] | None = None
    # Whether the axis is one of the four the id and the runner handle themselves.
    structural: bool = False

    @property
    def column_names(self) -> tuple[str, ...]:
        return self.columns if self.columns is not None else (self.key,)

    def column_values(self, value) -> tuple:
        """The store's values of `column_names` for an axis value."""
        return self.store(value) if self.store is not None else (value,)

    def where_facts(self) -> Mapping[str, Callable[[Any], set]]:
        return self.where if self.where is not None else {self.key: lambda v: {v}}

    def where_reader(self, key: str) -> tuple[str, ...] | str:
        """How the loader reads a value of `where` key `key`."""
        return (self.where_read or {}).get(key, self.read)

    def token(self, value, alg_token: Callable[[str], str]) -> str | None:
        """The id part of `value` (None at the default)."""
        if value == self.default:
            return None
        if self.id_part is not None:
            return self.id_part(value, alg_token)
        return f"{self.key}_{value}"

    def untoken(self, part: str, algorithms: Mapping[str, str]):
        """The value an id part stands for, or NOT_MINE."""
        if self.id_read is not None:
            return self.id_read(part, algorithms)
        prefix = f"{self.key}_"
        if part.startswith(prefix) and isinstance(self.read, tuple):
            value = part[len(prefix) :]
            if value in self.read and value != self.default:
                return value
        return NOT_MINE

    def label_of(self, *column_values) -> str:
        """What a scenario's label adds for this axis (where it varies in the store)."""
        if self.describe is not None:
            return self.describe(*column_values)
        return f"{self.key} {' '.join(map(str, column_values))}"

    def help(self) -> str:
        if self.id_help:
            return self.id_help
        if isinstance(self.read, tuple):
            return ", ".join(f"{self.key}_{v}" for v in self.read if v != self.default)
        return f"{self.key}_<value>"


# -- the four structural axes ------------------------------------------------------------

KEX = Axis(
    key="kex",
    label="key exchange",
    default=None,  # required
    read="group",
    columns=("kex", "kex_family"),
    store=lambda g: (g, GROUPS[g]),
    where={"kex": lambda g: {g}, "kex_family": lambda g: {GROUPS[g]}},
    where_read={"kex_family": ("classical", "hybrid", "pure_pq")},
    order={"classical": 0, "hybrid": 1, "pure_pq": 2},  # of its family
    structural=True,
)
HIERARCHY = Axis(
    key="hierarchy",
    label="hierarchy",
    default=None,  # required (a target's is empty)
    read="read_hierarchy",
    columns=("depth", "root_alg", "int1_alg", "int2_alg", "leaf_alg"),
    store=lambda h: (
        len(h),
        h[0] if len(h) >= 2 else None,
        h[1] if len(h) >= 3 else None,
        h[2] if len(h) >= 4 else None,
        h[-1] if h else None,
    ),
    where={
        "depth": lambda h: {len(h)},
        "root": lambda h: {h[0]} if len(h) >= 2 else set(),
        "int": lambda h: set(h[1:-1]),
        "leaf": lambda h: {h[-1]} if h else set(),
        "algorithm": lambda h: set(h),
    },
    where_read={
        "depth": "depth",
        "root": "resolve_alg",
        "int": "resolve_alg",
        "leaf": "resolve_alg",
        "algorithm": "resolve_alg",
    },
    structural=True,
)
TARGET = Axis(
    key="target",
    label="target",
    default=None,
    read="target",
    where={"target": lambda t: {t} if t else set()},
    structural=True,
)
NETWORK = Axis(
    key="network",
    label="network",
    default=LOOPBACK,
    read="network",
    order={LOOPBACK: 0},
    id_part=lambda n, _: f"net_{n}",
    id_read=lambda p, _: p[4:] if p.startswith("net_") else NOT_MINE,
    id_help="net_<profile>",
    describe=str,
    structural=True,
)


# -- the levers ----------------------------------------------------------------------------


def _need(side: str, feature: str) -> tuple[str, str, str]:
    """A capability a value needs of `side`'s stack ("client", "server" or "both"), with its
    text from the stacks' table (chainlab.campaign.stacks.FEATURE_TEXT)."""
    return (side, feature, stacks.FEATURE_TEXT[feature])


def _client_tokens(part: str, algorithms: Mapping[str, str]):
    if not part.startswith(CLIENT_PREFIX):
        return NOT_MINE
    tokens = part[len(CLIENT_PREFIX) :].split("_")
    if any(t not in algorithms for t in tokens) or not 1 <= len(tokens) <= 4:
        raise ValueError(
            f"bad client certificate part {part!r}; allowed: client_ followed by 1 to 4 "
            f"algorithm tokens root first, joined by '_' ({', '.join(sorted(algorithms))})"
        )
    return tuple(algorithms[t] for t in tokens)


def client_auth_name(h: tuple[str, ...]) -> str:
    """The store's `client_auth`: the client hierarchy's algorithms root first, comma-
    separated, or 'none'."""
    return ",".join(h) if h else NO_CLIENT_AUTH


SERVED_CHAIN = Axis(
    key="served_chain",
    label="served chain",
    default=DEFAULT_SERVED_CHAIN,
    read=SERVED_CHAINS,
    order={"intermediate-anchor": -1, "leaf": 0, "leaf+intermediates": 1, "full": 2},
    id_part=lambda v, _: SERVED_TOKENS[v],
    id_read=lambda p, _: {t: v for v, t in SERVED_TOKENS.items()}.get(p, NOT_MINE),
    id_help=", ".join(SERVED_TOKENS.values()),
    describe=lambda v: f"sends {v}",
    needs=lambda v, parts: [
        *([_need("client", "partial_chain")] if v == INTERMEDIATE_ANCHOR else []),
        *(
            [_need("client", "untrusted_intermediates")]
            if v == "leaf" and len(parts["hierarchy"]) >= 3
            else []
        ),
    ],
)
CERTIFICATE = Axis(
    key="certificate",
    label="certificate",
    default=certificates.X509,
    read="certificate",
    columns=("certificate", "mtc_batch", "mtc_signers", "mtc_landmark_held"),
    store=certificates.store,
    order={certificates.X509: 0, certificates.STANDALONE: 1, certificates.LANDMARK: 2},
    id_part=certificates.token,
    id_read=lambda p, algs: certificates.untoken(p, algs) or NOT_MINE,
    id_help="mtcl<batch>[_nolm], mtcs<batch>_<ca>[_<cosigner>...]",
    where={"certificate": lambda v: {certificates.parse(v).kind}},
    where_read={"certificate": certificates.KINDS},
    describe=certificates.describe,
)
HANDSHAKE_MODE = Axis(
    key="handshake_mode",
    label="handshake mode",
    default=DEFAULT_HANDSHAKE_MODE,
    read="handshake_mode",
    order={"full": 0, "resumed": 1},
    id_part=lambda v, _: v,
    id_read=lambda p, _: p if p == "resumed" or MIX_RE.match(p) else NOT_MINE,
    id_help="resumed, resume<NN>",
    describe=str,
    needs=lambda v, _: [_need("client", "resumption_mix")] if MIX_RE.match(v) else [],
)
CERT_COMPRESSION = Axis(
    key="cert_compression",
    label="certificate compression",
    default=DEFAULT_CERT_COMPRESSION,
    read=CERT_COMPRESSIONS,
    order={"none": 0},
    id_part=lambda v, _: v,
    id_read=lambda p, _: p if p in CERT_COMPRESSIONS and p != "none" else NOT_MINE,
    id_help=", ".join(c for c in CERT_COMPRESSIONS if c != "none"),
    flags=lambda v: ["--cert-compression", v],
    describe=lambda v: f"comp {v}",
)
CLIENT_AUTH = Axis(
    key="client_auth",
    label="client certificate",
    default=(),
    read="client_auth",
    store=lambda h: (client_auth_name(h),),
    order={NO_CLIENT_AUTH: 0},
    id_part=lambda h, alg_token: CLIENT_PREFIX + "_".join(alg_token(a) for a in h),
    id_read=_client_tokens,
    id_help="client_<alg>[_<alg>...]",
    where={"client_leaf": lambda h: {h[-1] if h else NO_CLIENT_AUTH}},
    where_read={"client_leaf": "client_leaf"},
    needs=lambda h, _: [_need("both", "client_auth")] if h else [],
)
TRANSPORT = Axis(
    key="transport",
    label="transport",
    default=DEFAULT_TRANSPORT,
    read=TRANSPORTS,
    id_part=lambda v, _: v,
    id_read=lambda p, _: p if p in TRANSPORTS and p != DEFAULT_TRANSPORT else NOT_MINE,
    id_help=", ".join(t for t in TRANSPORTS if t != DEFAULT_TRANSPORT),
    flags=lambda v: ["--transport", v],
    describe=str,
    needs=lambda v, _: [_need("both", "quic")] if v != DEFAULT_TRANSPORT else [],
)
STACK = Axis(
    key="stack",
    label="TLS stack",
    # (client stack, server stack): a matrix's `stack`, or `client_stack` x `server_stack`.
    default=(stacks.DEFAULT_STACK, stacks.DEFAULT_STACK),
    read="stack_pairs",
    columns=("client_stack", "server_stack"),
    store=lambda pair: pair,
    id_part=lambda pair, _: stacks.token(*pair),
    id_read=lambda p, _: stacks.decode(p) or NOT_MINE,
    id_help=f"stack_<tok>[_<tok>] ({', '.join(stacks.STACK_BY_TOKEN)})",
    where={
        # Either side's stack; client_stack / server_stack test one side.
        "stack": lambda pair: set(pair),
        "client_stack": lambda pair: {pair[0]},
        "server_stack": lambda pair: {pair[1]},
    },
    where_read={k: stacks.STACKS for k in ("stack", "client_stack", "server_stack")},
    describe=stacks.label,
)


def _second_chain_tokens(part: str, algorithms: Mapping[str, str]):
    if not part.startswith(rollout.SECOND_CHAIN_PREFIX):
        return NOT_MINE
    tokens = part[len(rollout.SECOND_CHAIN_PREFIX) :].split("_")
    if any(t not in algorithms for t in tokens) or not 1 <= len(tokens) <= 4:
        raise ValueError(
            f"bad second chain part {part!r}; allowed: dual_ followed by 1 to 4 algorithm "
            f"tokens root first, joined by '_' ({', '.join(sorted(algorithms))})"
        )
    return tuple(algorithms[t] for t in tokens)


# Staged rollout (chainlab.campaign.rollout): a second chain the server holds and sends to
# the clients whose schemes ask for it, a mixed client population, the server's group order.
SECOND_CHAIN = Axis(
    key="second_chain",
    label="second chain",
    default=(),
    read="second_chain",
    store=lambda h: (rollout.second_chain_name(h),),
    order={rollout.NO_SECOND_CHAIN: 0},
    id_part=lambda h, alg_token: rollout.SECOND_CHAIN_PREFIX + "_".join(alg_token(a) for a in h),
    id_read=_second_chain_tokens,
    id_help="dual_<alg>[_<alg>...]",
    where={},
    describe=lambda v: f"and chain {v}",
)
POPULATION = Axis(
    key="population",
    label="client population",
    default=rollout.NO_POPULATION,
    read="population",
    columns=("population", "pq_share"),
    store=rollout.store,
    order={rollout.NO_POPULATION: -1},
    id_part=rollout.token,
    id_read=lambda p, _: rollout.untoken(p) or NOT_MINE,
    id_help="pop_<kind><per cent>[_<kind><per cent>...]",
    where={},
    describe=rollout.describe,
)
SERVER_GROUPS = Axis(
    key="server_groups",
    label="server groups",
    default=rollout.CLIENT_ORDER,
    read="server_groups",
    id_part=rollout.server_groups_token,
    id_read=lambda p, _: rollout.server_groups_untoken(p) or NOT_MINE,
    id_help="sgrp_<group>[_<group>...]",
    where={},
    describe=lambda v: f"server prefers {v}",
    needs=lambda v, _: (
        [_need("server", "server_group_preference")] if v != rollout.CLIENT_ORDER else []
    ),
)

# Whose code signs and verifies ML-DSA (the engines' --signature-impl): the stack's own, or
# liboqs (the rustls stack): one algorithm across implementations. liboqs' own families
# (Falcon, MAYO, UOV, CROSS) are liboqs' whatever this says.
SIGNATURE_IMPLS = ("stack", "liboqs")
SIGNATURE_IMPL_PREFIX = "impl_"
SIGNATURE_IMPL = Axis(
    key="signature_impl",
    label="signature implementation",
    default="stack",
    read=SIGNATURE_IMPLS,
    order={"stack": 0},
    id_part=lambda v, _: SIGNATURE_IMPL_PREFIX + v,
    id_read=lambda p, _: (
        p[len(SIGNATURE_IMPL_PREFIX) :]
        if p.startswith(SIGNATURE_IMPL_PREFIX)
        and p[len(SIGNATURE_IMPL_PREFIX) :] in SIGNATURE_IMPLS[1:]
        else NOT_MINE
    ),
    id_help=", ".join(SIGNATURE_IMPL_PREFIX + v for v in SIGNATURE_IMPLS[1:]),
    flags=lambda v: ["--signature-impl", v] if v != "stack" else [],
    describe=lambda v: f"{v} signatures",
    needs=lambda v, _: [_need("both", "signature_impl_liboqs")] if v == "liboqs" else [],
)

# In the order an id names them: kex, the hierarchy (or a target), then the suffix parts.
_AXES: list[Axis] = [
    KEX,
    HIERARCHY,
    SERVED_CHAIN,
    CERTIFICATE,
    HANDSHAKE_MODE,
    CERT_COMPRESSION,
    CLIENT_AUTH,
    TRANSPORT,
    STACK,
    SECOND_CHAIN,
    POPULATION,
    SERVER_GROUPS,
    SIGNATURE_IMPL,
    NETWORK,
    TARGET,
]


def registered() -> tuple[Axis, ...]:
    """Every axis, in the order an id names them (the network last of the suffix parts)."""
    return tuple(_AXES)


def get(key: str) -> Axis:
    return next(a for a in _AXES if a.key == key)


def levers() -> tuple[Axis, ...]:
    """The axes besides the four structural ones."""
    return tuple(a for a in _AXES if not a.structural)


def suffix_axes() -> tuple[Axis, ...]:
    """The axes an id names after its positions, in id order (levers, then the network)."""
    return tuple(a for a in _AXES if not a.structural or a is NETWORK)


def matrix_keys() -> tuple[str, ...]:
    """The [matrix.*] keys that are axes (a stack pair may also be given side by side)."""
    return tuple(a.key for a in _AXES)


def where_keys() -> tuple[str, ...]:
    """Scenario properties a `where` table may test: the id, then every axis's keys."""
    return ("scenario", *(k for a in _AXES for k in a.where_facts()))


def lever_columns() -> tuple[str, ...]:
    """The scenario columns of the levers (what a comparison of hierarchies holds fixed,
    besides the key exchange and the network)."""
    return tuple(c for a in levers() for c in a.column_names)


def scenario_keys() -> tuple[str, ...]:
    """The scenario columns that identify a scenario apart from its network (and target): a
    scenario and its twin on another network share them."""
    return ("kex", *HIERARCHY.column_names, *lever_columns())


def labels() -> dict[str, str]:
    """Column -> the report's label, for every lever column and the structural ones a pair
    can differ in."""
    out = {"depth": "depth", "kex": KEX.label}
    for a in levers():
        if len(a.column_names) == 1:
            out[a.column_names[0]] = a.label
        else:
            for c in a.column_names:
                out[c] = f"{c.split('_', 1)[0]} {a.label}"
    out["network"] = NETWORK.label
    return out


def value_order() -> dict[str, Mapping[str, int]]:
    """Column -> the report's order of its values."""
    out: dict[str, Mapping[str, int]] = {"kex_family": KEX.order, "network": NETWORK.order}
    for a in levers():
        if a.order:
            for c in a.column_names:
                out[c] = a.order
    return out


def needs_of(parts: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(side, capability, text) that a scenario's axis values need of the TLS stacks."""
    return [n for a in _AXES if a.needs is not None for n in a.needs(parts[a.key], parts)]


def values_of(parts: Mapping[str, Any]) -> dict[str, Any]:
    """The store's scenario column values of every axis, from a scenario's parts."""
    out: dict[str, Any] = {}
    for a in _AXES:
        out.update(zip(a.column_names, a.column_values(parts[a.key]), strict=True))
    return out


@contextlib.contextmanager
def added(axis: Axis) -> Iterator[Axis]:
    """Registers `axis` (before the network, the last suffix part) for the duration of a
    `with`: how a test shows that an axis needs nothing but its declaration."""
    _AXES.insert(_AXES.index(NETWORK), axis)
    try:
        yield axis
    finally:
        _AXES.remove(axis)
