"""Staged rollout (docs/campaigns.md, "Staged rollout"): a server holding two chains, a mixed
population of clients, and the server's group policy, as the axes `second_chain`,
`population` and `server_groups` (chainlab.campaign.axes) carry them.

A *population* is one client process whose attempts each draw a kind of client, with the
kinds' shares as probabilities (the engine's `--population`). Its value everywhere (axis,
store column, engine flag) is one canonical string, kinds sorted by name:

    classical=0.9/X25519/ecdsa_secp256r1_sha256,pq=0.1/X25519MLKEM768:X25519/mldsa65

each kind `name=share/groups/schemes`, groups in OpenSSL's spelling and signature schemes in
TLS's, both in the kind's preference order. A kind is *post-quantum capable* when it offers
a post-quantum signature scheme or key-exchange group; `pq_share` sums their shares.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chainlab.campaign.algorithms import ALGORITHM_FAMILY, GROUPS, SIGNATURE_ALGORITHMS

# The population axis's default: every attempt is the scenario's one client.
NO_POPULATION = "none"
# The second-chain axis's store value without one.
NO_SECOND_CHAIN = "none"
# The server-groups axis's default: the server supports the scenario's key exchange and every
# group its clients offer, and takes each client's preference (a post-quantum group goes only
# to a client that asks for it first: the guide's canary by capability).
CLIENT_ORDER = "client"

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

    @property
    def pq_capable(self) -> bool:
        return any(GROUPS.get(g) != "classical" for g in self.groups) or any(
            s in _PQ_SCHEMES for s in self.schemes
        )

    def spec(self) -> str:
        head = f"{self.name}={self.share:g}"
        if not self.groups:
            return head
        return f"{head}/{':'.join(self.groups)}/{':'.join(self.schemes)}"


def parse(spec: str) -> tuple[Kind, ...]:
    """The kinds of a population's string (none for NO_POPULATION); a kind may be named with
    its share alone (an id's part, before the file's [clients] fill it in)."""
    if spec == NO_POPULATION:
        return ()
    out = []
    for part in spec.split(","):
        head, _, rest = part.partition("/")
        name, _, share = head.partition("=")
        groups, _, schemes = rest.partition("/")
        out.append(
            Kind(
                name=name,
                share=float(share),
                groups=tuple(groups.split(":")) if groups else (),
                schemes=tuple(schemes.split(":")) if schemes else (),
            )
        )
    return tuple(out)


def compose(kinds) -> str:
    """The canonical string of a population: its kinds sorted by name."""
    if not kinds:
        return NO_POPULATION
    return ",".join(k.spec() for k in sorted(kinds, key=lambda k: k.name))


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


def token(spec: str, _alg_token=None) -> str:
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


def server_groups_token(policy: str, _alg_token=None) -> str:
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


def chain_for(kind: Kind, chains: list[tuple[str, ...]]) -> int | None:
    """The chain a server holding `chains` sends this kind: the one whose leaf signs the
    first of the kind's schemes it can (libssl's choice; the rustls engine's resolver makes
    the same one), or None (refused: no_shared_sigalg)."""
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
    hierarchy: tuple[str, ...], second: tuple[str, ...], spec: str, kex: str, policy: str
) -> list[tuple[float, tuple[str, ...], str]]:
    """What a scenario's successful handshakes are made of: (weight, chain sent, group) per
    kind that is served, weights its share among those; one entry without a population."""
    kinds = parse(spec)
    if not kinds:
        return [(1.0, hierarchy, kex)]
    chains = [hierarchy, *([second] if second else [])]
    served = []
    for k in kinds:
        i, g = chain_for(k, chains), group_for(k, kex, policy)
        if k.share > 0 and i is not None and g is not None:
            served.append((k.share, chains[i], g))
    total = sum(w for w, _, _ in served)
    return [(w / total, h, g) for w, h, g in served] if total else [(1.0, hierarchy, kex)]
