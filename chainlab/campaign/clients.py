"""The campaign file's [clients.<kind>] table: the kinds of client a population draws
(chainlab.axes.rollout, whose axes read populations of them). The loader's validator
mixes this reader in; it reports its problems through the validator's `bad`.
"""

from __future__ import annotations

from typing import Any

from chainlab.axes import landmark_lag, rollout
from chainlab.axes.algorithms import GROUPS, canonical_group
from chainlab.axes.rollout import Kind
from chainlab.campaign import ids
from chainlab.campaign.tables import TableReaders
from chainlab.schema import allowed, fmt

CLIENT_KEYS = ("groups", "signatures", "description", "landmark_lag")


class ClientReaders(TableReaders):
    """The reader of [clients] (a method of the loader's validator)."""

    def read_clients(self, value: Any) -> dict[str, Kind]:
        """[clients.<name>]: a kind of client, the groups and signature algorithms it offers
        in its order of preference (a population draws kinds by share), and the Merkle Tree
        Certificate landmarks it holds (chainlab.axes.landmark_lag)."""
        self.clients = {}
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
            landmarks = ""
            if "landmark_lag" in t:
                got = landmark_lag.read_kind(self, t["landmark_lag"], f"{at}.landmark_lag")
                if got is None:
                    continue
                landmarks = got
            if groups and schemes:
                self.clients[name] = Kind(
                    name, 0.0, tuple(dict.fromkeys(groups)), tuple(dict.fromkeys(schemes)),
                    landmarks,
                )  # fmt: skip
        return self.clients
