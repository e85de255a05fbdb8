"""The registry of scenario axes: what a campaign's [matrix.*] may cross, each declared once.

An axis (chainlab.campaign.axis.Axis) says everything the rest of chainlab needs of it, as
values and callables: its TOML key and how a value is read and checked against the other
axes, its default (a matrix that leaves the axis out gets it, and an id names nothing at
it), its id token, its store column(s), its label and the order of its values in the
report, the `where` keys it offers, the engine flags it becomes on each side, the trust
anchors it replaces, what it adds to the estimate, what a non-default value needs of a
TLS stack, and what it makes of the scenario's handshake (`shape`:
chainlab.campaign.handshake), which the estimate, the stacks' check, other axes' rules and
the runner read in place of its key. The certificate axis is declared in
chainlab.campaign.certificates, the stack axis in chainlab.campaign.stacks and the rollout
axes in chainlab.campaign.rollout; the others here.

The loader (`tables.py`, `matrix_reader.py`, `loader.py`), matrix expansion and `where`
matching (`matrix.py`), ids (`ids.py`), a scenario's values (`model.py`), the store's
scenario columns (`chainlab.store.schema`), the summary and pairing, the estimate and the
runner's command lines (`runner/engine_args.py`) iterate over `registered()` instead of
naming axes one by one.

Four axes shape the id and the run themselves and keep their own code where noted: `kex`
leads the id, `hierarchy` is its positions (stored as depth and one algorithm per role),
`target` replaces the positions (a server chainlab does not start), `network` starts a link.
Every other axis is a *lever* (ARCHITECTURE.md, "A campaign axis", is the recipe).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from chainlab.campaign import anchors, certificates, profiles, rollout, stacks
from chainlab.campaign.algorithms import (
    CERT_COMPRESSIONS,
    DEFAULT_SERVED_CHAIN,
    DEFAULT_TRANSPORT,
    ENGINE_CHAIN,
    GROUPS,
    INTERMEDIATE_ANCHOR,
    MIX_ALLOWED,
    MIX_RE,
    NO_CLIENT_AUTH,
    SERVED_CHAINS,
    TRANSPORTS,
    canonical_group,
    is_handshake_mode,
    mode_of_ratio,
)
from chainlab.campaign.axis import NOT_MINE, Axis, hierarchy_part, hierarchy_token
from chainlab.campaign.handshake import Handshake
from chainlab.network.profile import LOOPBACK
from chainlab.schema import allowed, fmt

if TYPE_CHECKING:
    from chainlab.campaign.loader import Validator
    from chainlab.campaign.model import NetworkProfile, Scenario

# Values an id does not name (the defaults of the levers below).
DEFAULT_HANDSHAKE_MODE = "full"
DEFAULT_CERT_COMPRESSION = "none"

SERVED_TOKENS = {
    "leaf": "served_leaf",
    "full": "served_full",
    "intermediate-anchor": "served_intanchor",
}
CLIENT_PREFIX = "client_"


# -- readers of structural values ----------------------------------------------------------


def read_group(v: Validator, value: Any, at: str) -> str | None:
    """A key-exchange group, in any accepted spelling."""
    if not isinstance(value, str):
        v.bad(at, f"expected a key-exchange group name, got {fmt(value)}")
        return None
    canon = canonical_group(value)
    if canon is None:
        v.bad(at, f"unknown key-exchange group {value!r}; allowed: {allowed(GROUPS, value)}")
    return canon


def _algorithm(v: Validator, item: Any, at: str) -> str | None:
    return v.resolve_alg(item, at)


# -- the four structural axes ------------------------------------------------------------

KEX = Axis(
    key="kex",
    label="key exchange",
    default=None,  # required
    read=read_group,
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
    read=lambda v, item, at: v.read_hierarchy(item, at),
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
    not_with_target=True,
    where_read={
        "depth": lambda v, item, at: v.integer(item, at, 1, 4),
        "root": _algorithm,
        "int": _algorithm,
        "leaf": _algorithm,
        "algorithm": _algorithm,
    },
    structural=True,
)


def _target(v: Validator, item: Any, at: str) -> Any:
    """A matrix's target: the name of one of the file's [targets.<name>] tables."""
    if not v.target_names:
        v.bad(at, f"bad value {fmt(item)}; allowed: the name of a [targets.<name>] table (none "
              "declared)")  # fmt: skip
        return None
    return v.string(item, at, choices=v.target_names)


TARGET = Axis(
    key="target",
    label="target",
    default=None,
    read=_target,
    id_words=("target",),
    where={"target": lambda t: {t} if t else set()},
    structural=True,
)
NETWORK = Axis(
    key="network",
    label="network",
    default=LOOPBACK,
    read=lambda v, item, at: v.string(item, at, choices=[LOOPBACK, *v.declared_networks]),
    order={LOOPBACK: 0},
    id_part=lambda n, _: f"net_{n}",
    id_read=lambda p, _: p[4:] if p.startswith("net_") else NOT_MINE,
    id_help="net_<profile>",
    id_words=("net",),
    describe=str,
    structural=True,
)


# -- the levers ----------------------------------------------------------------------------


def client_auth_name(h: tuple[str, ...]) -> str:
    """The store's `client_auth`: the client hierarchy's algorithms root first, comma-
    separated, or 'none'."""
    return ",".join(h) if h else NO_CLIENT_AUTH


def _check_anchor(v: Validator, sid: str, h: Handshake, with_load: bool) -> None:
    """An intermediate can be the trust anchor only where the hierarchy has one."""
    depth = len(h.hierarchy)
    if h.parts["served_chain"] == INTERMEDIATE_ANCHOR and depth < 3:
        v.bad(
            "matrix",
            f"scenario {sid}: served_chain {INTERMEDIATE_ANCHOR!r} at depth {depth}: the "
            "leaf's issuer is no intermediate; allowed: depth 3 or 4 (exclude the others, "
            f'e.g. exclude = [{{ served_chain = "{INTERMEDIATE_ANCHOR}", depth = [1, 2] }}])',
        )


def _served_chain_client(chain: str, s: Scenario, files: Any, _seed: int) -> list[str]:
    """A client of a server that sends less than the leaf's issuers."""
    if chain == "leaf" and s.depth >= 3:
        # The server omits the intermediates: the client gets them as untrusted path
        # material, as a browser with an intermediate cache would.
        return ["--untrusted", str(files.pki_dir / "intermediates.pem")]
    if chain == INTERMEDIATE_ANCHOR:
        # The Trust Anchor IDs model: the client trusts the leaf's issuer itself and
        # verifies the leaf alone (a partial chain, ending at a non-self-signed anchor).
        return ["--partial-chain"]
    return []


def _served(chain: str, h: Handshake) -> Handshake:
    """What the server sends (a trust-anchor intermediate's client gets the leaf alone),
    where the client's anchor sits, and the engine's --chain."""
    anchored = chain == INTERMEDIATE_ANCHOR
    return replace(
        h,
        sent="leaf" if anchored else chain,
        anchor_depth=len(h.hierarchy) - 2 if anchored else 0,
        engine_chain=ENGINE_CHAIN.get(chain, chain),
    )


SERVED_CHAIN = Axis(
    params_always=True,
    key="served_chain",
    label="served chain",
    default=DEFAULT_SERVED_CHAIN,
    read=SERVED_CHAINS,
    order={"intermediate-anchor": -1, "leaf": 0, "leaf+intermediates": 1, "full": 2},
    id_part=lambda v, _: SERVED_TOKENS[v],
    id_read=lambda p, _: {t: v for v, t in SERVED_TOKENS.items()}.get(p, NOT_MINE),
    id_help=", ".join(SERVED_TOKENS.values()),
    id_words=("served",),
    not_with_target=True,
    describe=lambda v: f"sends {v}",
    shape=_served,
    check=_check_anchor,
    client_flags=_served_chain_client,
    needs=lambda v, h: [
        *([stacks.need("client", "partial_chain")] if v == INTERMEDIATE_ANCHOR else []),
        *(
            [stacks.need("client", "untrusted_intermediates")]
            if v == "leaf" and len(h.hierarchy) >= 3
            else []
        ),
    ],
)
CERTIFICATE = certificates.CERTIFICATE


# A matrix may give its handshake modes as resumption ratios instead (0 full, 1 resumed).
RATIO_KEY = "resumption_ratio"


def read_ratios(v: Validator, raw: Any, at: str) -> list[str]:
    """`resumption_ratio = [0, 0.5, 0.9]`: the handshake modes these ratios are."""
    items = v.listish(raw)
    if not items:
        v.bad(at, "empty array; allowed: at least one value")
    modes = []
    for i, item in enumerate(items):
        iat = f"{at}[{i}]" if isinstance(raw, list) else at
        mode = None
        if isinstance(item, int | float) and not isinstance(item, bool):
            mode = mode_of_ratio(float(item))
        if mode is None:
            v.bad(
                iat,
                f"bad value {fmt(item)}; allowed: a share from 0 to 1 in whole per cent "
                "(0, 0.5, 0.9, 0.99, 1)",
            )
        elif mode not in modes:
            modes.append(mode)
    return modes


def read_modes(v: Validator, m: Mapping[str, Any], at: str) -> list[str] | None:
    """A matrix's handshake modes: `handshake_mode`, or `resumption_ratio` (not both)."""
    if RATIO_KEY not in m:
        return v.axis_values(HANDSHAKE_MODE, m, at)
    modes = read_ratios(v, m[RATIO_KEY], f"{at}.{RATIO_KEY}")
    if HANDSHAKE_MODE.key in m:
        v.bad(
            f"{at}.{RATIO_KEY}",
            "given with handshake_mode; allowed: one of the two (a ratio of 0 is "
            "handshake_mode 'full', 1 'resumed')",
        )
        return None
    return modes or None


def read_handshake_mode(v: Validator, item: Any, at: str) -> str | None:
    """A handshake mode: full, resumed, or a resumption mix resumeNN."""
    got = v.string(item, at, what="a handshake mode")
    if got is not None and not is_handshake_mode(got):
        v.bad(at, f"bad value {fmt(got)}; allowed: {MIX_ALLOWED}")
        return None
    return None if got is None else str(got)


def _resumption_client(mode: str, s: Scenario, files: Any, seed: int) -> list[str]:
    if mode == "resumed":
        return ["--resume"]
    if mode == DEFAULT_HANDSHAKE_MODE:
        return []
    # A resumption mix: each handshake offers the ticket with the scenario's ratio, seeded
    # per batch so a rerun with the run's seed repeats the mix.
    return ["--resume-ratio", f"{s.handshake.resumed_share:g}", "--resume-seed", str(seed)]


HANDSHAKE_MODE = Axis(
    params_always=True,
    key="handshake_mode",
    label="handshake mode",
    default=DEFAULT_HANDSHAKE_MODE,
    read=read_handshake_mode,
    order={"full": 0, "resumed": 1},
    id_part=lambda v, _: v,
    id_read=lambda p, _: p if p == "resumed" or MIX_RE.match(p) else NOT_MINE,
    id_help="resumed, resume<NN>",
    id_words=("resumed", "full"),
    matrix_read=lambda v, m, at: read_modes(v, m, at),
    matrix_keys=(RATIO_KEY,),
    describe=str,
    shape=lambda mode, h: replace(h, mode=mode),
    server_flags=lambda mode, s, files: ["--tickets", "0" if mode == "full" else "1"],
    client_flags=_resumption_client,
    needs=lambda v, _: [stacks.need("client", "resumption_mix")] if MIX_RE.match(v) else [],
)
CERT_COMPRESSION = Axis(
    params_always=True,
    key="cert_compression",
    label="certificate compression",
    default=DEFAULT_CERT_COMPRESSION,
    read=CERT_COMPRESSIONS,
    order={"none": 0},
    id_part=lambda v, _: v,
    id_read=lambda p, _: p if p in CERT_COMPRESSIONS and p != "none" else NOT_MINE,
    id_help=", ".join(c for c in CERT_COMPRESSIONS if c != "none"),
    id_words=CERT_COMPRESSIONS,
    flags=lambda v: ["--cert-compression", v],
    describe=lambda v: f"comp {v}",
    shape=lambda v, h: replace(h, compression=v),
)


def read_client_auth(v: Validator, item: Any, at: str) -> tuple[str, ...] | None:
    """A client certificate: 'none', or its hierarchy (an array of algorithms root to leaf,
    or a [hierarchies] name)."""
    if item == NO_CLIENT_AUTH:
        return ()
    if isinstance(item, str) and item not in v.hierarchies:
        v.bad(
            at,
            f"bad value {fmt(item)}; allowed: 'none', a [hierarchies] name "
            f"({allowed(v.hierarchies, item) or 'none declared'}) or an array of "
            "algorithms root to leaf",
        )
        return None
    return v.read_hierarchy(item, at)


CLIENT_AUTH = Axis(
    params=lambda h: {"client_auth": client_auth_name(h)},
    params_always=True,
    key="client_auth",
    label="client certificate",
    default=(),
    read=read_client_auth,
    store=lambda h: (client_auth_name(h),),
    order={NO_CLIENT_AUTH: 0},
    id_part=hierarchy_token(CLIENT_PREFIX),
    id_read=hierarchy_part(CLIENT_PREFIX, "client certificate"),
    id_help="client_<alg>[_<alg>...]",
    id_words=("client",),
    not_with_target=True,
    where={"client_leaf": lambda h: {h[-1] if h else NO_CLIENT_AUTH}},
    where_read={
        # A client certificate's leaf algorithm, or 'none' (no client certificate).
        "client_leaf": lambda v, item, at: (
            item if item == NO_CLIENT_AUTH else _algorithm(v, item, at)
        ),
    },
    shape=lambda v, h: replace(h, client_hierarchy=v),
    server_flags=lambda h, s, files: (
        ["--client-ca", str(files.client_pki_dir / "ca.pem")] if h else []
    ),
    client_flags=lambda h, s, files, _seed: ["--cert-pki", str(files.client_pki_dir)] if h else [],
    needs=lambda h, _: [stacks.need("both", "client_auth")] if h else [],
)


def _check_transport(v: Validator, sid: str, h: Handshake, with_load: bool) -> None:
    """QUIC scenarios: what the engine's QUIC transport does not do yet is refused here,
    never found failing at run time (docs/engine-records.md, "QUIC")."""
    if not h.quic or h.target is None:
        return
    v.bad(
        "matrix",
        f"scenario {sid}: transport 'quic' with target {h.target!r}: targets are "
        "probed over TCP; allowed: transport 'tcp' for targets (exclude = [{ transport "
        f'= "quic", target = "{h.target}" }}])',
    )


TRANSPORT = Axis(
    key="transport",
    label="transport",
    default=DEFAULT_TRANSPORT,
    read=TRANSPORTS,
    id_part=lambda v, _: v,
    id_read=lambda p, _: p if p in TRANSPORTS and p != DEFAULT_TRANSPORT else NOT_MINE,
    id_help=", ".join(t for t in TRANSPORTS if t != DEFAULT_TRANSPORT),
    id_words=TRANSPORTS,
    flags=lambda v: ["--transport", v],
    describe=str,
    shape=lambda v, h: replace(h, quic=v == "quic"),
    check=_check_transport,
    needs=lambda v, _: [stacks.need("both", "quic")] if v != DEFAULT_TRANSPORT else [],
)


STACK = stacks.STACK
# Staged rollout's axes, declared with their subject (chainlab.campaign.rollout): a second
# chain, a client population, the server's group order, whose order picks the chain.
SECOND_CHAIN = rollout.SECOND_CHAIN
POPULATION = rollout.POPULATION
SERVER_GROUPS = rollout.SERVER_GROUPS
CHAIN_ORDER = rollout.CHAIN_ORDER

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
    needs=lambda v, _: [stacks.need("both", "signature_impl_liboqs")] if v == "liboqs" else [],
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
    CHAIN_ORDER,
    SIGNATURE_IMPL,
    anchors.TRUST_ANCHORS,
    profiles.CLIENT_PROFILE,
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
    return tuple(k for a in _AXES for k in (a.key, *a.matrix_keys))


def where_keys() -> tuple[str, ...]:
    """Scenario properties a `where` table may test: the id, then every axis's keys."""
    return ("scenario", *(k for a in _AXES for k in a.where_facts()))


def lever_columns() -> tuple[str, ...]:
    """The scenario columns of the levers (what a comparison of hierarchies holds fixed,
    besides the key exchange and the network)."""
    return tuple(c for a in levers() for c in a.column_names)


def lever_labels(row: Mapping[str, Any], only: set[str] | None = None) -> list[str]:
    """Each lever of a scenario (`row`: its stored columns) at a value other than its
    default, as its axis labels it, in registry order; the stacks left out (a report names
    them itself). `only`: just the levers one of whose columns is in it."""
    out = []
    for a in levers():
        if a is STACK or (only is not None and not only.intersection(a.column_names)):
            continue
        if not all(c in row for c in a.column_names):
            continue  # a frame without the lever (an older store's, a test's)
        values = tuple(row[c] for c in a.column_names)
        if tuple(map(str, values)) != tuple(map(str, a.column_values(a.default))):
            out.append(a.label_of(*values))
    return out


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


def needs_of(h: Handshake) -> list[tuple[str, str, str]]:
    """(side, capability, text) that a scenario's axis values need of the TLS stacks (`h`:
    its handshake, chainlab.campaign.handshake, whose `parts` are the values)."""
    return [n for a in _AXES if a.needs is not None for n in a.needs(h.parts[a.key], h)]


def default_params() -> dict[str, Any]:
    """What a scenario's stored params say of the levers they name even at their default
    (`Axis.params_always`), at the default: what a scenario stored before one of them
    existed had."""
    return {k: v for a in levers() if a.params_always for k, v in a.params_of(a.default).items()}


def handshake(parts: Mapping[str, Any], network_profile: NetworkProfile | None = None) -> Handshake:
    """What a scenario's axis values (`parts`) make of its handshake and run: each axis's
    `shape` in registry order (chainlab.campaign.handshake)."""
    h = Handshake(
        parts=parts,
        kex=parts["kex"],
        hierarchy=tuple(parts["hierarchy"]),
        target=parts["target"],
        network_profile=network_profile,
    )
    for a in _AXES:
        if a.shape is not None:
            h = a.shape(parts[a.key], h)
    return h


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
