"""Staged rollout (docs/campaigns.md, "Staged rollout"): a server holding two chains, a mixed
population of clients, and the server's group policy: the axes `second_chain`,
`population` and `server_groups`, declared here whole (how a campaign file gives their
values, their rules with the other axes, what the engines get; the registry is
chainlab.axes).

A *population* is one client process whose attempts each draw a kind of client, with the
kinds' shares as probabilities (the engine's `--population`). Its value everywhere (axis,
store column, engine flag) is one canonical string, kinds sorted by name:

    classical=0.9/X25519/ecdsa_secp256r1_sha256,pq=0.1/X25519MLKEM768:X25519/mldsa65

each kind `name=share/groups/schemes`, groups in OpenSSL's spelling and signature schemes in
TLS's, both in the kind's preference order. A kind is *post-quantum capable* when it offers
a post-quantum signature scheme or key-exchange group; `pq_share` sums their shares. A kind
may end with the Merkle Tree Certificate landmarks it holds, `/<k>` (up to k landmark
intervals old) or `/none` (chainlab.axes.landmark_lag).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chainlab.axes.handshake import Handshake

import re
from dataclasses import dataclass, replace

from chainlab.axes import stack as stacks
from chainlab.axes.algorithms import (
    ALGORITHM_FAMILY,
    GROUPS,
    SIGNATURE_ALGORITHMS,
    canonical_group,
)
from chainlab.axes.axis import NOT_MINE, Axis, AxisReader, hierarchy_part, hierarchy_token
from chainlab.schema import allowed, fmt

# The population axis's default: every attempt is the scenario's one client.
NO_POPULATION = "none"
# The second-chain axis's store value without one.
NO_SECOND_CHAIN = "none"
# The server-groups axis's default: the server supports the scenario's key exchange and every
# group its clients offer, and takes each client's preference (a post-quantum group goes only
# to a client that asks for it first: the guide's canary by capability).
CLIENT_ORDER = "client"
# A dual-chain server's own order (`chain_order`): its post-quantum chain first.
SERVER_ORDER = "server"
CHAIN_ORDERS = (CLIENT_ORDER, SERVER_ORDER)
CHAIN_ORDER_PREFIX = "corder_"
# The signature families of a classical leaf; every other family's is post-quantum.
CLASSICAL_FAMILIES = ("ecdsa", "rsa", "ed-dsa")

POPULATION_PREFIX = "pop_"
SECOND_CHAIN_PREFIX = "dual_"
SERVER_GROUPS_PREFIX = "sgrp_"
# A [clients.<name>] name: a word of scenario ids (its share follows it in the id).
KIND_RE = re.compile(r"^[a-z]+$")
# Shares are whole per cent, so that an id names each exactly.
SHARE_STEP = 0.01
_KIND_PART = re.compile(r"^([a-z]+)(\d{1,3})$")

# Signature families and group families that are post-quantum.
PQ_SIGNATURE_FAMILIES = ("ml-dsa", "slh-dsa")
TLS_SCHEME = {name: scheme for name, _, scheme in SIGNATURE_ALGORITHMS}
_PQ_SCHEMES = {TLS_SCHEME[a] for a, f in ALGORITHM_FAMILY.items() if f in PQ_SIGNATURE_FAMILIES}


@dataclass(frozen=True)
class Kind:
    """One kind of client of a population."""

    name: str
    share: float
    groups: tuple[str, ...] = ()  # OpenSSL names, preference order
    schemes: tuple[str, ...] = ()  # TLS signature scheme names, preference order
    # The MTC landmarks it holds: "" (not said), "none", or a lag in intervals ("0", "2").
    landmarks: str = ""

    @property
    def pq_capable(self) -> bool:
        return any(GROUPS.get(g) != "classical" for g in self.groups) or any(
            s in _PQ_SCHEMES for s in self.schemes
        )

    def spec(self) -> str:
        head = f"{self.name}={self.share:g}"
        if not self.groups:
            return head
        tail = f"/{self.landmarks}" if self.landmarks else ""
        return f"{head}/{':'.join(self.groups)}/{':'.join(self.schemes)}{tail}"


def parse(spec: str) -> tuple[Kind, ...]:
    """The kinds of a population's string (none for NO_POPULATION); a kind may be named with
    its share alone (an id's part, before the file's [clients] fill it in)."""
    if spec == NO_POPULATION:
        return ()
    out = []
    for part in spec.split(","):
        head, _, rest = part.partition("/")
        name, _, share = head.partition("=")
        groups, _, rest = rest.partition("/")
        schemes, _, landmarks = rest.partition("/")
        out.append(
            Kind(
                name=name,
                share=float(share),
                groups=tuple(groups.split(":")) if groups else (),
                schemes=tuple(schemes.split(":")) if schemes else (),
                landmarks=landmarks,
            )
        )
    return tuple(out)


def compose(kinds: Any) -> str:
    """The canonical string of a population: its kinds sorted by name."""
    if not kinds:
        return NO_POPULATION
    return ",".join(k.spec() for k in sorted(kinds, key=lambda k: k.name))


def population_of(h: Handshake) -> str:
    """A scenario's population (its canonical string), for the modules whose rules read it."""
    return str(h.parts["population"])


def pq_share(spec: str) -> float | None:
    """The share of post-quantum capable clients (None without a population)."""
    kinds = parse(spec)
    if not kinds:
        return None
    return round(sum(k.share for k in kinds if k.pq_capable), 6)


def store(spec: str) -> tuple[str, str]:
    """The store's (population, pq_share) of a population."""
    share = pq_share(spec)
    return (spec, NO_POPULATION if share is None else f"{share:g}")


def token(spec: str, _alg_token: object = None) -> str:
    """The id part: `pop_` and each kind's name with its share in per cent, by name
    (`pop_classical90_pq10`)."""
    return POPULATION_PREFIX + "_".join(f"{k.name}{round(k.share * 100)}" for k in parse(spec))


def untoken(part: str) -> str | None:
    """The population an id part names, kinds with their shares only (None: not one)."""
    if not part.startswith(POPULATION_PREFIX):
        return None
    kinds = []
    for word in part[len(POPULATION_PREFIX) :].split("_"):
        m = _KIND_PART.match(word)
        if m is None:
            raise ValueError(
                f"bad population part {part!r}; allowed: pop_ followed by <kind><per cent> "
                "words joined by '_', kinds by name (pop_classical90_pq10)"
            )
        kinds.append(Kind(m.group(1), int(m.group(2)) / 100))
    return compose(kinds)


def describe(spec: str, share: str) -> str:
    if spec == NO_POPULATION:
        return "one client"
    return f"PQ share {share} (" + ", ".join(f"{k.name} {k.share:.0%}" for k in parse(spec)) + ")"


def server_groups(kex: str, spec: str, policy: str) -> list[str]:
    """The server's `--groups` and policy flag: its own list, preferred, or (the default)
    the scenario's key exchange and every group a kind offers, in the clients' order."""
    if policy != CLIENT_ORDER:
        return ["--groups", policy, "--prefer-server-groups"]
    groups = [kex, *(g for k in parse(spec) for g in k.groups)]
    return ["--groups", ":".join(dict.fromkeys(groups))]


def server_groups_token(policy: str, _alg_token: object = None) -> str:
    return SERVER_GROUPS_PREFIX + "_".join(
        re.sub(r"[^a-z0-9]", "", g.lower()) for g in policy.split(":")
    )


def server_groups_untoken(part: str) -> str | None:
    if not part.startswith(SERVER_GROUPS_PREFIX):
        return None
    by_token = {re.sub(r"[^a-z0-9]", "", g.lower()): g for g in GROUPS}
    words = part[len(SERVER_GROUPS_PREFIX) :].split("_")
    if any(w not in by_token for w in words):
        raise ValueError(
            f"bad server groups part {part!r}; allowed: sgrp_ followed by group tokens "
            f"joined by '_' ({', '.join(by_token)})"
        )
    return ":".join(by_token[w] for w in words)


def second_chain_name(h: tuple[str, ...]) -> str:
    """The store's `second_chain`: its algorithms root first, comma-separated, or 'none'."""
    return ",".join(h) if h else NO_SECOND_CHAIN


def key_type(alg: str) -> str:
    """The type of key libssl holds one certificate of (ECDSA curves share one, RSA sizes
    too): a dual-chain server's two leaves must differ in it."""
    family = ALGORITHM_FAMILY[alg]
    return family if family in ("ecdsa", "rsa") else alg


def is_post_quantum(alg: str) -> bool:
    """Whether a leaf of `alg` makes a post-quantum chain: it signs no ECDSA, RSA or EdDSA
    scheme (chainlab_record::dual::is_classical on the engines' side)."""
    return ALGORITHM_FAMILY[alg] not in CLASSICAL_FAMILIES


def chain_for(kind: Kind, chains: list[tuple[str, ...]], order: str = CLIENT_ORDER) -> int | None:
    """The chain a server holding `chains` sends this kind (chainlab_record::dual::choose,
    on every stack): by the client's order, the one whose leaf signs the first of the
    kind's schemes it can; by the server's, the first post-quantum chain whose leaf signs
    a scheme the kind offers, then the classical ones; None: refused (no_shared_sigalg)."""
    if order == SERVER_ORDER:
        ranked = sorted(range(len(chains)), key=lambda i: not is_post_quantum(chains[i][-1]))
        return next((i for i in ranked if TLS_SCHEME[chains[i][-1]] in kind.schemes), None)
    for scheme in kind.schemes:
        for i, h in enumerate(chains):
            if TLS_SCHEME[h[-1]] == scheme:
                return i
    return None


def group_for(kind: Kind, kex: str, policy: str) -> str | None:
    """The group a server with `policy` (and the scenario's `kex`) agrees with this kind:
    the kind's first the server supports, or the server's first the kind offers."""
    if policy == CLIENT_ORDER:
        return kind.groups[0] if kind.groups else kex
    return next((g for g in policy.split(":") if g in kind.groups), None)


def mixture(
    hierarchy: tuple[str, ...],
    second: tuple[str, ...],
    spec: str,
    kex: str,
    policy: str,
    order: str = CLIENT_ORDER,
) -> list[tuple[float, tuple[str, ...], str]]:
    """What a scenario's successful handshakes are made of: (weight, chain sent, group) per
    kind that is served, weights its share among those; one entry without a population."""
    kinds = parse(spec)
    if not kinds:
        return [(1.0, hierarchy, kex)]
    chains = [hierarchy, *([second] if second else [])]
    served = []
    for k in kinds:
        i, g = chain_for(k, chains, order), group_for(k, kex, policy)
        if k.share > 0 and i is not None and g is not None:
            served.append((k.share, chains[i], g))
    total = sum(w for w, _, _ in served)
    return [(w / total, h, g) for w, h, g in served] if total else [(1.0, hierarchy, kex)]


# -- the axes: how a campaign file gives their values, their rules, what the engines get --

# How far a population's shares may sum from 1 (floating point).
_SHARE_SLACK = 1e-9


def read_population(v: AxisReader, item: Any, at: str) -> str | None:
    """A population: "none", or a table of [clients] kinds and their shares (whole per
    cent, summing to 1), e.g. { pq = 0.1, classical = 0.9 }."""
    if item == NO_POPULATION:
        return NO_POPULATION
    if not isinstance(item, dict):
        v.bad(
            at,
            f"expected a table of kinds and shares, got {fmt(item)}; allowed: 'none' or "
            "e.g. { pq = 0.1, classical = 0.9 } (kinds of [clients])",
        )
        return None
    kinds = []
    for name, share in item.items():
        if name not in v.clients:
            v.bad(
                f"{at}.{name}",
                f"unknown kind of client {name!r}; allowed: a [clients] kind "
                f"({allowed(v.clients, name) or 'none declared'})",
            )
            continue
        ok = isinstance(share, int | float) and not isinstance(share, bool)
        if not ok or not 0 <= share <= 1 or abs(share * 100 - round(share * 100)) > 1e-6:
            v.bad(
                f"{at}.{name}",
                f"bad share {fmt(share)}; allowed: 0 to 1 in whole per cent (0.1, 0.35)",
            )
            continue
        kinds.append(replace(v.clients[name], share=round(share * 100) / 100))
    if len(kinds) != len(item):
        return None
    total = sum(k.share for k in kinds)
    if abs(total - 1) > _SHARE_SLACK:
        v.bad(at, f"the shares sum to {total:g}; allowed: shares summing to 1")
        return None
    return compose(kinds)


def resolve_population(v: AxisReader, spec: str, at: str) -> str | None:
    """A population an id names (kinds and shares) with its kinds from [clients]."""
    if spec == NO_POPULATION:
        return spec
    return read_population(v, {k.name: k.share for k in parse(spec)}, at)


def read_second_chain(v: AxisReader, item: Any, at: str) -> tuple[str, ...] | None:
    """A second chain the server holds: 'none', or a hierarchy (an array of algorithms
    root to leaf, or a [hierarchies] name)."""
    if item == NO_SECOND_CHAIN:
        return ()
    return v.read_hierarchy(item, at)


def read_server_groups(v: AxisReader, item: Any, at: str) -> str | None:
    """The server's group policy: 'client' (the client's order), or the server's own
    preference, an array of groups."""
    if item == CLIENT_ORDER:
        return CLIENT_ORDER
    if not isinstance(item, list) or not item:
        v.bad(
            at,
            f"bad value {fmt(item)}; allowed: 'client' (each client's order) or an array "
            'of groups the server prefers in its order, e.g. ["X25519MLKEM768", "X25519"]',
        )
        return None
    groups = []
    for i, g in enumerate(item):
        canon = canonical_group(g) if isinstance(g, str) else None
        if canon is None:
            v.bad(f"{at}[{i}]", f"unknown group {fmt(g)}; allowed: {allowed(GROUPS, str(g))}")
            return None
        groups.append(canon)
    return ":".join(dict.fromkeys(groups))


def check(v: AxisReader, sid: str, h: Handshake, with_load: bool) -> None:
    """A second chain: TCP, uncompressed X.509 chains whose leaves differ in key type,
    each side's stack able to use it. A population: each kind's groups on the client's
    stack, the server's groups covering theirs; a kind no chain serves is noted (`h`:
    chainlab.axes.handshake)."""
    second, spec = h.parts["second_chain"], h.parts["population"]
    hierarchy = h.hierarchy
    on_client, on_server = h.stacks  # each side's TLS stack
    if second:
        why = None
        if h.target is not None:
            why = "a target serves its own chains"
        elif h.quic:
            why = "transport 'quic'"
        elif h.compression != "none":
            why = f"cert_compression {h.compression!r}"
        elif h.credential.is_mtc:
            why = "a Merkle Tree Certificate"
        elif h.anchor_depth:
            why = "served_chain 'intermediate-anchor'"
        elif key_type(second[-1]) == key_type(hierarchy[-1]):
            why = (
                f"two leaves of one key type ({hierarchy[-1]}, {second[-1]}): libssl "
                "holds one certificate per key type"
            )
        if why:
            v.bad(
                "matrix",
                f"scenario {sid}: second_chain with {why}; allowed: a second chain over "
                "TCP without compression, X.509, leaves of different key types",
            )
        for side, stack, algs in (
            ("server", on_server, second[-1:]),
            ("client", on_client, second),
        ):
            have = stacks.CAPABILITIES[stack].signature_algorithms
            for alg in algs if have is not None else ():
                if have is not None and alg not in have:
                    verb = "sign with" if side == "server" else "verify"
                    v.bad(
                        "matrix",
                        f"scenario {sid}: {side} stack {stack} cannot {verb} {alg} of "
                        "the second chain; exclude it or choose another stack",
                    )
    kinds = parse(spec)
    client_groups = stacks.CAPABILITIES[on_client].groups
    for k in kinds:
        for g in k.groups:
            if client_groups is not None and g not in client_groups:
                v.bad(
                    "matrix",
                    f"scenario {sid}: client stack {on_client} has no key-exchange "
                    f"group {g} (kind {k.name}); exclude it or choose another stack",
                )
        chains = [hierarchy, *([second] if second else [])]
        if k.share > 0 and chain_for(k, chains, h.parts["chain_order"]) is None:
            v.notes.append(
                f"scenario {sid}: kind {k.name!r} offers no scheme a chain of the server "
                "signs with: its attempts will fail as no_shared_sigalg"
            )
    policy = h.parts["server_groups"]
    if policy != CLIENT_ORDER and kinds:
        offered = {g for k in kinds for g in k.groups}
        if not offered & set(policy.split(":")):
            v.bad(
                "matrix",
                f"scenario {sid}: server_groups {policy!r} shares no group with the "
                "population's kinds; allowed: groups the kinds offer",
            )


def _mixture(spec: str, h: Handshake) -> Handshake:
    """A population's handshakes: the chain and group each kind gets, by its share."""
    if spec == NO_POPULATION or h.kex is None:  # a target's server is not chainlab's
        return replace(h, mixture=None)
    parts = h.parts
    got = mixture(
        h.hierarchy,
        parts["second_chain"],
        spec,
        h.kex,
        parts["server_groups"],
        parts["chain_order"],
    )
    return replace(h, mixture=tuple(got))


# The axes: a second chain the server holds and sends to the clients whose schemes ask for
# it, a mixed client population, the server's group order.
SECOND_CHAIN = Axis(
    key="second_chain",
    label="second chain",
    default=(),
    read=read_second_chain,
    store=lambda h: (second_chain_name(h),),
    order={NO_SECOND_CHAIN: 0},
    id_part=hierarchy_token(SECOND_CHAIN_PREFIX),
    id_read=hierarchy_part(SECOND_CHAIN_PREFIX, "second chain"),
    id_help="dual_<alg>[_<alg>...]",
    id_words=("dual",),
    where={},
    shape=lambda second, h: replace(h, second_hierarchy=second),
    check=check,
    server_flags=lambda h, s, files: ["--second-pki", str(files.second_pki_dir)] if h else [],
    trust=lambda h, files: ["--ca", str(files.trust_file)] if h else None,
    describe=lambda v: f"and chain {v}",
)
POPULATION = Axis(
    key="population",
    label="client population",
    default=NO_POPULATION,
    read=read_population,
    columns=("population", "pq_share"),
    store=store,
    order={NO_POPULATION: -1},
    id_part=token,
    id_read=lambda p, _: untoken(p) or NOT_MINE,
    id_help="pop_<kind><per cent>[_<kind><per cent>...]",
    id_words=("pop",),
    resolve=lambda v, spec, at: resolve_population(v, spec, at),
    where={},
    shape=_mixture,
    # Each client draws its kinds from the batch's seed: a rerun repeats the draws.
    client_flags=lambda spec, s, files, seed: (
        ["--population", spec, "--population-seed", str(seed)] if spec != NO_POPULATION else []
    ),
    # Each kind offers its own signature schemes.
    needs=lambda spec, _: (
        [stacks.need("client", "client_sigalgs")] if spec != NO_POPULATION else []
    ),
    describe=describe,
)
SERVER_GROUPS = Axis(
    key="server_groups",
    label="server groups",
    default=CLIENT_ORDER,
    read=read_server_groups,
    id_part=server_groups_token,
    id_read=lambda p, _: server_groups_untoken(p) or NOT_MINE,
    id_help="sgrp_<group>[_<group>...]",
    id_words=("sgrp",),
    where={},
    describe=lambda v: f"server prefers {v}",
    # The server's groups: its own preference, or the scenario's and its population's.
    server_flags=lambda policy, s, files: server_groups(s.kex, s.value("population"), policy),
    needs=lambda v, _: (
        [stacks.need("server", "server_group_preference")] if v != CLIENT_ORDER else []
    ),
)


def _check_chain_order(v: AxisReader, sid: str, h: Handshake, with_load: bool) -> None:
    """The server's order picks between two chains: it needs a second chain."""
    order = h.parts["chain_order"]
    if order != CLIENT_ORDER and not h.parts["second_chain"]:
        v.bad(
            "matrix",
            f"scenario {sid}: chain_order {order!r} without a second_chain; allowed: "
            "chain_order 'server' on a dual-chain server (second_chain), 'client' otherwise",
        )


# Whose order picks a dual-chain server's chain: each client's (its first scheme a leaf
# signs) or the server's own, post-quantum first (docs/methods/rollout.md, every stack).
CHAIN_ORDER = Axis(
    key="chain_order",
    label="chain order",
    default=CLIENT_ORDER,
    read=CHAIN_ORDERS,
    order={CLIENT_ORDER: 0},
    id_part=lambda v, _: None if v == CLIENT_ORDER else CHAIN_ORDER_PREFIX + v,
    id_read=lambda p, _: (
        p[len(CHAIN_ORDER_PREFIX) :]
        if p.startswith(CHAIN_ORDER_PREFIX) and p[len(CHAIN_ORDER_PREFIX) :] in CHAIN_ORDERS[1:]
        else NOT_MINE
    ),
    id_help=", ".join(CHAIN_ORDER_PREFIX + v for v in CHAIN_ORDERS[1:]),
    id_words=("corder",),
    check=_check_chain_order,
    server_flags=lambda v, s, files: ["--chain-order", v] if v != CLIENT_ORDER else [],
    describe=lambda v: f"chain by the {v}'s order",
)
