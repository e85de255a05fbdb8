"""The campaign file's tables read one by one ([aliases], [hierarchies], [targets],
[network.*], [sampling], [primitives], [analysis], `where` tables): the loader's validator
(chainlab.campaign.loader) mixes these readers in. Each reports its problems through the
validator's `bad` and returns what is valid; the loader then applies the rules that span
scenarios.
"""

from __future__ import annotations

import base64
import binascii
import re
from pathlib import Path
from typing import Any, cast

from chainlab import axes
from chainlab.axes.algorithms import (
    canonical_algorithm,
    token,
)
from chainlab.axes.axis import AxisReader, read_with
from chainlab.campaign import ids
from chainlab.campaign.analysis_settings import parse_analysis
from chainlab.campaign.fields import (
    ALIAS_RE,
    NETWORK_FIELDS,
    NETWORK_NAME_RE,
    PRIMITIVES_FIELDS,
    SAMPLING_DEFAULTS,
    SAMPLING_FIELDS,
    TARGET_FIELDS,
)
from chainlab.campaign.model import (
    NetworkProfile,
    PrimitivesPlan,
    Target,
)
from chainlab.campaign.reading import Reading
from chainlab.network import profile as network_profile
from chainlab.network.profile import LOOPBACK
from chainlab.schema import allowed, fmt


class TableReaders(Reading):
    """Readers of the campaign file's tables (methods of the loader's validator)."""

    def read_primitives(self, value: Any) -> PrimitivesPlan:
        """[primitives]: how the cost model's primitives are measured before the scenarios."""
        table = self.table(value, "primitives")
        got = self.p.check(PRIMITIVES_FIELDS, table, "primitives")
        given = {k: v for k, v in got.items() if v is not None}
        return PrimitivesPlan(**given)

    def check_analysis(self, table: dict[str, Any], baseline: str | None) -> None:
        """[analysis] belongs to the report; its settings' own fields say what it accepts."""
        parse_analysis(table, str(self.path), baseline, problems=self.p)

    def read_aliases(self, value: Any) -> dict[str, str]:
        out: dict[str, str] = {}
        by_alg: dict[str, str] = {}
        # Aliases already reported as bad: their uses are not reported again.
        self.bad_aliases = set()
        for alias, alg in self.table(value, "aliases").items():
            at = f"aliases.{alias}"
            self.bad_aliases.add(alias)
            if not ALIAS_RE.match(alias):
                self.bad(
                    at,
                    f"bad alias name {alias!r}; allowed: lower-case letters and digits, "
                    "starting with a letter",
                )
                continue
            if alias in ids.RESERVED:
                self.bad(
                    at,
                    f"alias {alias!r} is a word of scenario ids; allowed: any other "
                    f"name (not {', '.join(sorted(ids.RESERVED))})",
                )
                continue
            if not isinstance(alg, str):
                self.bad(at, f"expected an algorithm name, got {fmt(alg)}")
                continue
            canon = canonical_algorithm(alg, self.algorithms)
            if canon is None:
                self.bad(at, f"unknown algorithm {alg!r}; allowed: {allowed(self.algorithms, alg)}")
                continue
            if canon in by_alg:
                self.bad(
                    at,
                    f"{canon} already has the alias {by_alg[canon]!r}; allowed: one "
                    "alias per algorithm (so each scenario has one id)",
                )
                continue
            by_alg[canon] = alias
            out[alias] = canon
            self.bad_aliases.discard(alias)
        return out

    def algorithm_tokens(self) -> dict[str, str]:
        """token -> algorithm: aliases, plus the plain token of every un-aliased algorithm."""
        tokens = dict(self.aliases)
        aliased = set(self.aliases.values())
        for alg in self.algorithms:
            t = token(alg)
            if alg in aliased:
                continue
            if t in tokens:
                self.bad(
                    f"aliases.{t}",
                    f"alias {t!r} is the id token of {alg}; allowed: a name "
                    "that is not another algorithm's token",
                )
                continue
            tokens[t] = alg
        return tokens

    def alg_token(self, alg: str) -> str:
        for t, a in self.aliases.items():
            if a == alg:
                return t
        return token(alg)

    def resolve_alg(self, ref: Any, where: str) -> str | None:
        if not isinstance(ref, str):
            self.bad(where, f"expected an algorithm name or alias, got {fmt(ref)}")
            return None
        if ref in self.aliases:
            return self.aliases[ref]
        canon = canonical_algorithm(ref, self.algorithms)
        if canon is None and ref in getattr(self, "bad_aliases", ()):
            # Its [aliases] entry was reported; one mistake is one problem.
            return None
        if canon is None:
            names = [*self.aliases, *self.algorithms]
            self.bad(where, f"unknown algorithm or alias {ref!r}; allowed: {allowed(names, ref)}")
        return canon

    def read_hierarchy(self, value: Any, where: str) -> tuple[str, ...] | None:
        if isinstance(value, str):
            if value in self.hierarchies:
                return self.hierarchies[value]
            self.bad(
                where,
                f"unknown hierarchy {value!r}; allowed: a [hierarchies] name "
                f"({allowed(self.hierarchies, value) or 'none declared'}) or an array of "
                "algorithms root to leaf",
            )
            return None
        if not isinstance(value, list):
            self.bad(where, f"expected an array of algorithms (root to leaf), got {fmt(value)}")
            return None
        if not 1 <= len(value) <= 4:
            self.bad(
                where,
                f"impossible depth {len(value)} ({fmt(value)}); allowed: 1 to 4 "
                "certificates (self-signed leaf; root+leaf; root+int+leaf; "
                "root+int1+int2+leaf)",
            )
            return None
        algs = [self.resolve_alg(a, f"{where}[{i}]") for i, a in enumerate(value)]
        resolved = [a for a in algs if a is not None]
        return tuple(resolved) if len(resolved) == len(algs) else None

    def read_hierarchies(self, value: Any) -> dict[str, tuple[str, ...]]:
        self.hierarchies = {}
        for hname, h in self.table(value, "hierarchies").items():
            got = self.read_hierarchy(h if not isinstance(h, str) else [h], f"hierarchies.{hname}")
            if got is not None:
                self.hierarchies[hname] = got
        return self.hierarchies

    def read_targets(self, value: Any) -> dict[str, Target]:
        """[targets.<name>]: servers chainlab measures but does not start."""
        out: dict[str, Target] = {}
        # Every declared name, a refused one too: a matrix naming it is not a second problem.
        self.target_names = list(self.table(value, "targets"))
        for tname, spec in self.table(value, "targets").items():
            at = f"targets.{tname}"
            if not NETWORK_NAME_RE.match(tname):
                self.bad(
                    at,
                    f"bad target name {tname!r}; allowed: lower-case letters, digits and "
                    "single '_'",
                )
                continue
            got = self.p.check(TARGET_FIELDS, self.table(spec, at), at)
            if "address" not in spec:
                self.bad(f"{at}.address", 'missing; allowed: host:port, e.g. "example.com:443"')
                continue
            if got.get("address") is None:
                continue
            ca = got.get("ca") or "system"
            ca_file = None
            if ca not in ("system", "none"):
                ca_file = (self.path.parent / ca).resolve()
                problem = (
                    "no such file next to the campaign file"
                    if not ca_file.is_file()
                    else trust_anchor_problem(ca_file)
                )
                if problem:
                    self.bad(
                        f"{at}.ca",
                        f"bad value {ca!r}: {problem}; allowed: 'system' (this machine's CA "
                        "bundle), 'none' (no chain verification) or a PEM file of trust "
                        "anchors",
                    )
                    continue
            host = got["address"].rsplit(":", 1)[0].strip("[]")
            out[tname] = Target(
                name=tname,
                address=got["address"],
                servername=got.get("servername") or host,
                ca=ca,
                sigalgs=got.get("sigalgs"),
                description=got.get("description") or "",
                ca_file=ca_file,
            )
        return out

    def read_networks(self, value: Any) -> dict[str, NetworkProfile]:
        out: dict[str, NetworkProfile] = {}
        # Names of declared profiles, valid or not: a matrix naming a profile whose values
        # are bad gets no second, misleading problem (the file stops on the first anyway).
        self.declared_networks = []
        for nname, spec in self.table(value, "network").items():
            at = f"network.{nname}"
            if nname == LOOPBACK:
                self.bad(at, "'loopback' is built in; allowed: another name")
                continue
            if not NETWORK_NAME_RE.match(nname):
                self.bad(
                    at,
                    f"bad profile name {nname!r}; allowed: lower-case letters, digits "
                    "and single '_'",
                )
                continue
            self.declared_networks.append(nname)
            kw = network_profile.check_rules(
                self.p.check(NETWORK_FIELDS, self.table(spec, at), at), at, self.p
            )
            if None in kw.values():
                continue
            profile = NetworkProfile(name=nname, **kw)
            out[nname] = profile
        return out

    def sampling_values(self, table: dict[str, Any], where: str) -> dict[str, Any]:
        """Checked sampling keys of `table` (only those present and valid)."""
        got = self.p.check(SAMPLING_FIELDS, table, where, also=("override", "where"))
        return {k: v for k, v in got.items() if v is not None}

    def read_sampling(self, value: Any) -> Any:
        table = self.table(value, "sampling")
        base = dict(SAMPLING_DEFAULTS)
        base.update(self.sampling_values(table, "sampling"))
        overrides = []
        ovs = table.get("override", [])
        if not isinstance(ovs, list):
            self.bad(
                "sampling.override",
                f"expected an array of tables ([[sampling.override]]), got {fmt(ovs)}",
            )
            ovs = []
        for i, ov in enumerate(ovs):
            at = f"sampling.override[{i}]"
            ov = self.table(ov, at)
            if "where" not in ov:
                self.bad(
                    f"{at}.where",
                    "missing; allowed: a table of scenario properties "
                    f"({', '.join(axes.where_keys())})",
                )
                continue
            where = self.read_where(ov["where"], f"{at}.where")
            values = self.sampling_values(ov, at)
            overrides.append((where, values))
        return base, overrides

    def read_overrides(
        self, value: Any, at: str, fields: dict[str, Any]
    ) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """An array of override tables (`[[load.override]]`, `[[measure.override]]`): each
        a `where` table of scenario properties and values of `fields` for what it matches."""
        if not isinstance(value, list):
            self.bad(at, f"expected an array of tables, got {fmt(value)}")
            return []
        out = []
        for i, ov in enumerate(value):
            here = f"{at}[{i}]"
            ov = self.table(ov, here)
            if "where" not in ov:
                self.bad(f"{here}.where", "missing; allowed: a table of scenario properties")
                continue
            where = self.read_where(ov["where"], f"{here}.where")
            out.append((where, self.p.check(fields, ov, here, also=("where",))))
        return out

    def read_where(self, value: Any, where: str) -> dict[str, Any]:
        """A `where` table: each key a scenario property an axis offers
        (chainlab.axes), read as that axis says; `scenario` is a scenario id."""
        table = self.table(value, where)
        keys = axes.where_keys()
        self.keys(table, keys, where)
        out: dict[str, set[Any]] = {}
        for k, raw in table.items():
            if k not in keys:
                continue
            if k == "scenario":
                reader = None
            else:
                reader = next(a for a in axes.registered() if k in a.where_facts()).where_reader(k)
            vals = set()
            for i, item in enumerate(self.listish(raw)):
                at = f"{where}.{k}" if not isinstance(raw, list) else f"{where}.{k}[{i}]"
                if reader is None:
                    got = self.string(item, at, what="a scenario id")
                else:
                    got = self.read_value(reader, item, at)
                if got is not None:
                    vals.add(got)
            out[k] = vals
        return out

    def read_value(self, reader: Any, item: Any, at: str) -> Any:
        """One value as an axis reads it (chainlab.axes.axis.read_with): one of a set of
        strings, or through the axis's reader; None after reporting a bad one."""
        # The loader's validator is every reader at once (chainlab.campaign.loader).
        return read_with(reader, cast("AxisReader", self), item, at)


PEM_CERTIFICATE = re.compile(
    rb"-----BEGIN CERTIFICATE-----\s*([A-Za-z0-9+/=\s]+?)-----END CERTIFICATE-----"
)


def trust_anchor_problem(path: Path) -> str | None:
    """Why a file cannot be a client's trust anchors (no PEM certificate in it, unreadable),
    or None: checked where the user named it, before any copy is made."""
    try:
        data = path.read_bytes()[: 16 << 20]
    except OSError as e:
        return f"cannot be read ({e.strerror})"
    blocks = PEM_CERTIFICATE.findall(data)
    if not blocks:
        return "holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
    try:
        for b in blocks:
            base64.b64decode(b"".join(b.split()), validate=True)
    except binascii.Error:
        return "holds a PEM certificate whose base64 does not decode"
    return None
