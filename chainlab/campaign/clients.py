"""Staged rollout in a campaign file: the [clients.<kind>] table, the values of the axes
`second_chain`, `population` and `server_groups` (chainlab.campaign.rollout), and the rules a
rollout scenario must keep. The loader's validator mixes these readers in; each reports its
problems through the validator's `bad`.
"""

from __future__ import annotations

from dataclasses import replace

from chainlab.campaign import certificates, ids, rollout, stacks
from chainlab.campaign.algorithms import GROUPS, canonical_group
from chainlab.campaign.rollout import Kind
from chainlab.schema import allowed, fmt

CLIENT_KEYS = ("groups", "signatures", "description")
_SHARE_SLACK = 1e-9


class ClientReaders:
    """Readers of [clients] and the rollout axes' values (methods of the loader's
    validator)."""

    def read_clients(self, value) -> dict[str, Kind]:
        """[clients.<name>]: a kind of client, the groups and signature algorithms it offers
        in its order of preference (a population draws kinds by share)."""
        self.clients: dict[str, Kind] = {}
        for name, spec in self.table(value, "clients").items():
            at = f"clients.{name}"
            if not rollout.KIND_RE.match(name) or name in ids.RESERVED:
                self.bad(
                    at,
                    f"bad kind name {name!r}; allowed: lower-case letters only, not a word of "
                    f"scenario ids ({', '.join(sorted(ids.RESERVED))})",
                )
                continue
            t = self.table(spec, at)
            self.keys(t, CLIENT_KEYS, at)
            if "description" in t:
                self.string(t["description"], f"{at}.description")
            groups, schemes = [], []
            for key in ("groups", "signatures"):
                if not isinstance(t.get(key), list) or not t[key]:
                    self.bad(
                        f"{at}.{key}",
                        f"expected a non-empty array, got {fmt(t.get(key))}; allowed: the "
                        + ("key-exchange groups" if key == "groups" else "signature algorithms")
                        + " the kind offers, in its order of preference",
                    )
            listed = {
                k: t[k] if isinstance(t.get(k), list) else [] for k in ("groups", "signatures")
            }
            for i, g in enumerate(listed["groups"]):
                canon = canonical_group(g) if isinstance(g, str) else None
                if canon is None:
                    self.bad(f"{at}.groups[{i}]", f"unknown group {fmt(g)}; allowed: "
                             + allowed(GROUPS, str(g)))  # fmt: skip
                else:
                    groups.append(canon)
            for i, a in enumerate(listed["signatures"]):
                alg = self.resolve_alg(a, f"{at}.signatures[{i}]")
                if alg is not None:
                    schemes.append(rollout.TLS_SCHEME[alg])
            if groups and schemes:
                self.clients[name] = Kind(
                    name, 0.0, tuple(dict.fromkeys(groups)), tuple(dict.fromkeys(schemes))
                )
        return self.clients

    def population(self, item, at: str) -> str | None:
        """A population: "none", or a table of [clients] kinds and their shares (whole per
        cent, summing to 1), e.g. { pq = 0.1, classical = 0.9 }."""
        if item == rollout.NO_POPULATION:
            return item
        if not isinstance(item, dict):
            self.bad(
                at,
                f"expected a table of kinds and shares, got {fmt(item)}; allowed: 'none' or "
                "e.g. { pq = 0.1, classical = 0.9 } (kinds of [clients])",
            )
            return None
        kinds = []
        for name, share in item.items():
            if name not in self.clients:
                self.bad(
                    f"{at}.{name}",
                    f"unknown kind of client {name!r}; allowed: a [clients] kind "
                    f"({allowed(self.clients, name) or 'none declared'})",
                )
                continue
            ok = isinstance(share, int | float) and not isinstance(share, bool)
            if not ok or not 0 <= share <= 1 or abs(share * 100 - round(share * 100)) > 1e-6:
                self.bad(
                    f"{at}.{name}",
                    f"bad share {fmt(share)}; allowed: 0 to 1 in whole per cent (0.1, 0.35)",
                )
                continue
            kinds.append(replace(self.clients[name], share=round(share * 100) / 100))
        if len(kinds) != len(item):
            return None
        total = sum(k.share for k in kinds)
        if abs(total - 1) > _SHARE_SLACK:
            self.bad(at, f"the shares sum to {total:g}; allowed: shares summing to 1")
            return None
        return rollout.compose(kinds)

    def resolve_population(self, spec: str, at: str) -> str | None:
        """A population an id names (kinds and shares) with its kinds from [clients]."""
        if spec == rollout.NO_POPULATION:
            return spec
        return self.population({k.name: k.share for k in rollout.parse(spec)}, at)

    def second_chain(self, item, at: str) -> tuple[str, ...] | None:
        """A second chain the server holds: 'none', or a hierarchy (an array of algorithms
        root to leaf, or a [hierarchies] name)."""
        if item == rollout.NO_SECOND_CHAIN:
            return ()
        return self.read_hierarchy(item, at)

    def server_groups(self, item, at: str) -> str | None:
        """The server's group policy: 'client' (the client's order), or the server's own
        preference, an array of groups."""
        if item == rollout.CLIENT_ORDER:
            return item
        if not isinstance(item, list) or not item:
            self.bad(
                at,
                f"bad value {fmt(item)}; allowed: 'client' (each client's order) or an array "
                'of groups the server prefers in its order, e.g. ["X25519MLKEM768", "X25519"]',
            )
            return None
        groups = []
        for i, g in enumerate(item):
            canon = canonical_group(g) if isinstance(g, str) else None
            if canon is None:
                self.bad(
                    f"{at}[{i}]", f"unknown group {fmt(g)}; allowed: {allowed(GROUPS, str(g))}"
                )
                return None
            groups.append(canon)
        return ":".join(dict.fromkeys(groups))

    def check_rollout(self, sid: str, parts: dict) -> None:
        """A second chain: TCP, uncompressed X.509 chains whose leaves differ in key type,
        each side's stack able to use it. A population: each kind's groups on the client's
        stack, the server's groups covering theirs; a kind no chain serves is noted."""
        second, spec = parts["second_chain"], parts["population"]
        hierarchy = parts["hierarchy"]
        client_stack, server_stack = parts["stack"]
        if second:
            why = None
            if parts["target"] is not None:
                why = "a target serves its own chains"
            elif parts["transport"] != "tcp":
                why = f"transport {parts['transport']!r}"
            elif parts["cert_compression"] != "none":
                why = f"cert_compression {parts['cert_compression']!r}"
            elif parts["certificate"] != certificates.X509:
                why = "a Merkle Tree Certificate"
            elif parts["served_chain"] == "intermediate-anchor":
                why = "served_chain 'intermediate-anchor'"
            elif rollout.key_type(second[-1]) == rollout.key_type(hierarchy[-1]):
                why = (
                    f"two leaves of one key type ({hierarchy[-1]}, {second[-1]}): libssl "
                    "holds one certificate per key type"
                )
            if why:
                self.bad(
                    "matrix",
                    f"scenario {sid}: second_chain with {why}; allowed: a second chain over "
                    "TCP without compression, X.509, leaves of different key types",
                )
            for side, stack, algs in (
                ("server", server_stack, second[-1:]),
                ("client", client_stack, second),
            ):
                have = stacks.CAPABILITIES[stack].signature_algorithms
                for alg in algs if have is not None else ():
                    if alg not in have:
                        verb = "sign with" if side == "server" else "verify"
                        self.bad(
                            "matrix",
                            f"scenario {sid}: {side} stack {stack} cannot {verb} {alg} of "
                            "the second chain; exclude it or choose another stack",
                        )
        kinds = rollout.parse(spec)
        client_groups = stacks.CAPABILITIES[client_stack].groups
        for k in kinds:
            for g in k.groups:
                if client_groups is not None and g not in client_groups:
                    self.bad(
                        "matrix",
                        f"scenario {sid}: client stack {client_stack} has no key-exchange "
                        f"group {g} (kind {k.name}); exclude it or choose another stack",
                    )
            chains = [hierarchy, *([second] if second else [])]
            if k.share > 0 and rollout.chain_for(k, chains) is None:
                self.notes.append(
                    f"scenario {sid}: kind {k.name!r} offers no scheme a chain of the server "
                    "signs with: its attempts will fail as no_shared_sigalg"
                )
        policy = parts["server_groups"]
        if policy != rollout.CLIENT_ORDER and kinds:
            offered = {g for k in kinds for g in k.groups}
            if not offered & set(policy.split(":")):
                self.bad(
                    "matrix",
                    f"scenario {sid}: server_groups {policy!r} shares no group with the "
                    "population's kinds; allowed: groups the kinds offer",
                )
