"""Reads a campaign file, validates every key and value, expands its matrices.

Nothing runs and nothing is written before a file passes. Every problem is reported as one
line: the file, the key path (`matrix.B.hierarchy[2][0]`), the bad value and what is allowed.
All problems found are reported together; docs/campaigns.md is the reference for the format.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import replace
from pathlib import Path

from chainlab import engine
from chainlab.campaign import ids, load_plan, matrix, stacks
from chainlab.campaign.algorithms import (
    ALGORITHM_NAMES,
    CERT_COMPRESSIONS,
    GROUPS,
    INTERMEDIATE_ANCHOR,
    MIX_ALLOWED,
    NO_CLIENT_AUTH,
    SERVED_CHAINS,
    TRANSPORTS,
    canonical_algorithm,
    canonical_group,
    is_handshake_mode,
    mode_of_ratio,
    token,
)
from chainlab.campaign.analysis_settings import parse_analysis
from chainlab.campaign.fields import (
    ALIAS_RE,
    CAMPAIGN_FIELDS,
    CAMPAIGNS_KEYS,
    CLUSTER_FIELDS,
    MATRIX_KEYS,
    NAME_RE,
    NETWORK_FIELDS,
    NETWORK_NAME_RE,
    PRIMITIVES_FIELDS,
    SAMPLING_DEFAULTS,
    SAMPLING_FIELDS,
    TARGET_FIELDS,
    TOP_KEYS,
)
from chainlab.campaign.matrix import MATRIX_AXES, WHERE_KEYS, matches
from chainlab.campaign.model import (
    Campaign,
    NetworkProfile,
    PrimitivesPlan,
    SamplingPolicy,
    Scenario,
    Target,
)
from chainlab.campaign.stacks import DEFAULT_STACK, STACKS
from chainlab.errors import ChainlabError
from chainlab.network import profile as network_profile
from chainlab.network.profile import LOOPBACK
from chainlab.schema import ConfigError, Int, Problems, Str, allowed, fmt

# A campaign file that does not validate; `problems` has one line per problem.
CampaignError = ConfigError


def load(path, algorithms: tuple[str, ...] | None = None) -> Campaign:
    """Reads, validates and expands a campaign file; raises CampaignError listing problems.

    `algorithms` is the list of accepted signature algorithms (the engine's `info` table);
    default: the engine's if it is built, else the copy in chainlab.campaign.algorithms.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise CampaignError([f"{path}: cannot read campaign file: {e.strerror}"]) from None
    try:
        text = raw.decode("utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError as e:
        raise CampaignError([f"{path}: not UTF-8 text ({e.reason} at byte {e.start})"]) from None
    except tomllib.TOMLDecodeError as e:
        raise CampaignError([f"{path}: invalid TOML: {e}"]) from None
    if algorithms is None:
        algorithms = allowed_algorithms()
    v = _Validator(path, data, algorithms)
    campaign = v.run()
    campaign.text = text
    campaign.sha256 = hashlib.sha256(raw).hexdigest()
    return campaign


def allowed_algorithms() -> tuple[str, ...]:
    """The engine's algorithm names when the engine is built, else the kept copy."""
    try:
        return tuple(a["name"] for a in engine.info()["algorithms"])
    except ChainlabError:
        return ALGORITHM_NAMES


def split_problem(scenarios, load) -> str | None:
    """Why these scenarios cannot run with split placement, or None. Split placement
    measures over the real network between two hosts: no emulated link, no target (no
    server of chainlab's), no load steps (they read the server's host)."""
    for s in scenarios:
        what = None
        if s.network != LOOPBACK:
            what = f"runs on the emulated profile {s.network!r}"
        elif s.target is not None:
            what = f"probes target {s.target!r}"
        elif s.transport != "tcp":
            what = f"runs over {s.transport}"
        if what:
            return (
                f"'split' but scenario {s.scenario_id} {what}; allowed: split placement for "
                "scenarios of chainlab's own servers over TCP without an emulated link"
            )
    if load is not None:
        return "'split' with [load]; allowed: one of the two"
    return None


class _Validator:
    def __init__(self, path: Path, data: dict, algorithms: tuple[str, ...]):
        self.path = path
        self.data = data
        self.algorithms = algorithms
        self.p = Problems(str(path))
        self.notes: list[str] = []

    # -- reporting: chainlab.schema -----------------------------------------------------

    def bad(self, key: str, message: str):
        self.p.bad(key, message)

    def check(self):
        self.p.raise_if_any()

    def keys(self, table: dict, names, where: str) -> None:
        self.p.keys(table, names, where)

    def table(self, value, where: str) -> dict:
        return self.p.table(value, where)

    def string(self, value, where: str, choices=None, what="a string"):
        return Str(choices=tuple(choices) if choices is not None else None, what=what).check(
            value, where, self.p
        )

    def integer(self, value, where: str, lo: int, hi: int | None = None):
        return Int(lo, hi).check(value, where, self.p)

    @staticmethod
    def listish(value) -> list:
        """An array, or a single value standing for a one-element array."""
        return value if isinstance(value, list) else [value]

    # -- sections ----------------------------------------------------------------------

    def run(self) -> Campaign:
        d = self.data
        self.keys(d, TOP_KEYS, "")
        head = self.table(d.get("campaign", {}), "campaign")
        head = self.p.check(CAMPAIGN_FIELDS, head, "campaign")
        name = head.get("name") or self.path.stem
        description = head.get("description") or ""
        seed = head.get("seed", 1)
        order = head.get("order", "random")
        baseline = head.get("baseline")

        self.aliases = self.read_aliases(d.get("aliases", {}))
        self.tokens = self.algorithm_tokens()
        self.hierarchies = self.read_hierarchies(d.get("hierarchies", {}))
        self.networks = self.read_networks(d.get("network", {}))
        self.targets = self.read_targets(d.get("targets", {}))
        base_sampling, overrides = self.read_sampling(d.get("sampling", {}))
        matrices = self.read_matrices(d.get("matrix", {}))
        load = load_plan.read(self, d.get("load"))
        primitives = self.read_primitives(d.get("primitives", {}))
        cluster_table = self.p.check(
            CLUSTER_FIELDS, self.table(d.get("cluster", {}), "cluster"), "cluster"
        )
        cluster = cluster_table.get("address")
        placement = cluster_table.get("placement") or "whole"
        analysis = self.table(d.get("analysis", {}), "analysis")
        self.check_analysis(analysis, baseline)
        self.check()

        # Expand the matrices (declaration order, ids unique), then the campaigns.
        parts_by_id: dict[str, dict] = {}
        matrix_ids: dict[str, list[str]] = {}
        for mname, m in matrices.items():
            matrix_ids[mname] = self.expand(mname, m, parts_by_id)
        campaigns = self.read_campaigns(d.get("campaigns"), matrices, matrix_ids, parts_by_id)
        self.check()
        used = {m for m in matrices if any(m in c for c in self.campaign_matrices.values())}
        for mname in matrices:
            if mname not in used:
                self.notes.append(f"matrix {mname!r} is in no campaign and will not run")

        scenarios: dict[str, Scenario] = {}
        for sid, parts in parts_by_id.items():
            if not any(sid in members for members in campaigns.values()):
                continue
            policy = self.resolve_sampling(sid, parts, base_sampling, overrides)
            self.check_anchor(sid, parts)
            self.check_transport(sid, parts)
            scenario_load = load_plan.for_scenario(self, load, parts, sid)
            self.check_stacks(sid, parts, scenario_load is not None)
            scenarios[sid] = Scenario(
                scenario_id=sid,
                sampling=policy,
                network_profile=self.networks.get(parts["network"]),
                load=scenario_load,
                target_spec=self.targets.get(parts["target"]),
                **parts,
            )
            plan = scenarios[sid].load
            if parts["target"] is not None and plan is not None and plan.rates is None:
                self.bad(
                    "load.fractions",
                    f"scenario {sid} probes target {parts['target']!r}, whose capacity "
                    "chainlab cannot measure (its server's CPU is not chainlab's to read); "
                    "allowed: `rates` (attempts per second) for targets",
                )
        for i, (ov_where, _) in enumerate(overrides):
            if not any(matches(ov_where, p, sid) for sid, p in parts_by_id.items()):
                self.notes.append(f"sampling.override[{i}] matches no scenario")
        if baseline is not None and baseline not in scenarios:
            self.bad(
                "campaign.baseline",
                f"bad value {baseline!r}: not a scenario of this file; allowed: "
                + allowed(scenarios, baseline),
            )
        if load is not None:
            load_plan.check_steps(self, scenarios)
        if placement == "split":
            self.check_split(scenarios, load)
        if not scenarios:
            self.bad(
                "matrix",
                "the file declares no scenario; allowed: at least one matrix "
                "or campaign with scenarios",
            )
        self.check()
        return Campaign(
            path=self.path,
            text="",
            sha256="",
            name=name,
            description=description,
            seed=seed,
            order=order,
            baseline=baseline,
            aliases=dict(self.aliases),
            networks=dict(self.networks),
            scenarios=scenarios,
            campaigns=campaigns,
            analysis=analysis,
            notes=self.notes,
            load=load,
            primitives=primitives,
            cluster=cluster,
            placement=placement,
        )

    def read_primitives(self, value) -> PrimitivesPlan:
        """[primitives]: how the cost model's primitives are measured before the scenarios."""
        table = self.table(value, "primitives")
        got = self.p.check(PRIMITIVES_FIELDS, table, "primitives")
        given = {k: v for k, v in got.items() if v is not None}
        return PrimitivesPlan(**given)

    def check_analysis(self, table: dict, baseline: str | None) -> None:
        """[analysis] belongs to the report; its settings' own fields say what it accepts."""
        parse_analysis(table, str(self.path), baseline, problems=self.p)

    def read_aliases(self, value) -> dict[str, str]:
        out: dict[str, str] = {}
        by_alg: dict[str, str] = {}
        for alias, alg in self.table(value, "aliases").items():
            at = f"aliases.{alias}"
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

    def resolve_alg(self, ref, where: str) -> str | None:
        if not isinstance(ref, str):
            self.bad(where, f"expected an algorithm name or alias, got {fmt(ref)}")
            return None
        if ref in self.aliases:
            return self.aliases[ref]
        canon = canonical_algorithm(ref, self.algorithms)
        if canon is None:
            names = [*self.aliases, *self.algorithms]
            self.bad(where, f"unknown algorithm or alias {ref!r}; allowed: {allowed(names, ref)}")
        return canon

    def read_hierarchy(self, value, where: str) -> tuple[str, ...] | None:
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
        return None if None in algs else tuple(algs)

    def read_hierarchies(self, value) -> dict[str, tuple[str, ...]]:
        self.hierarchies = {}
        for hname, h in self.table(value, "hierarchies").items():
            got = self.read_hierarchy(h if not isinstance(h, str) else [h], f"hierarchies.{hname}")
            if got is not None:
                self.hierarchies[hname] = got
        return self.hierarchies

    def read_targets(self, value) -> dict[str, Target]:
        """[targets.<name>]: servers chainlab measures but does not start."""
        out: dict[str, Target] = {}
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
                if not ca_file.is_file():
                    self.bad(
                        f"{at}.ca",
                        f"bad value {ca!r}: no such file next to the campaign file; allowed: "
                        "'system' (this machine's CA bundle), 'none' (no chain verification) "
                        "or a PEM file of trust anchors",
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

    def read_networks(self, value) -> dict[str, NetworkProfile]:
        out: dict[str, NetworkProfile] = {}
        # Names of declared profiles, valid or not: a matrix naming a profile whose values
        # are bad gets no second, misleading problem (the file stops on the first anyway).
        self.declared_networks: list[str] = []
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

    def sampling_values(self, table: dict, where: str) -> dict:
        """Checked sampling keys of `table` (only those present and valid)."""
        got = self.p.check(SAMPLING_FIELDS, table, where, also=("override", "where"))
        return {k: v for k, v in got.items() if v is not None}

    def read_sampling(self, value):
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
                    f"missing; allowed: a table of scenario properties ({', '.join(WHERE_KEYS)})",
                )
                continue
            where = self.read_where(ov["where"], f"{at}.where")
            values = self.sampling_values(ov, at)
            overrides.append((where, values))
        return base, overrides

    def read_where(self, value, where: str) -> dict:
        table = self.table(value, where)
        self.keys(table, WHERE_KEYS, where)
        out: dict[str, set] = {}
        for k, raw in table.items():
            if k not in WHERE_KEYS:
                continue
            vals = set()
            for i, item in enumerate(self.listish(raw)):
                at = f"{where}.{k}" if not isinstance(raw, list) else f"{where}.{k}[{i}]"
                if k in ("root", "int", "leaf", "algorithm"):
                    got = self.resolve_alg(item, at)
                elif k == "client_leaf":
                    got = item if item == NO_CLIENT_AUTH else self.resolve_alg(item, at)
                elif k == "target":
                    got = self.string(item, at, choices=list(self.targets))
                elif k == "kex":
                    got = self.group(item, at)
                elif k == "kex_family":
                    got = self.string(item, at, choices=("classical", "hybrid", "pure_pq"))
                elif k == "depth":
                    got = self.integer(item, at, 1, 4)
                elif k == "served_chain":
                    got = self.string(item, at, choices=SERVED_CHAINS)
                elif k == "handshake_mode":
                    got = self.handshake_mode(item, at)
                elif k == "cert_compression":
                    got = self.string(item, at, choices=CERT_COMPRESSIONS)
                elif k == "transport":
                    got = self.string(item, at, choices=TRANSPORTS)
                elif k in ("stack", "client_stack", "server_stack"):
                    got = self.string(item, at, choices=STACKS)
                elif k == "network":
                    got = self.string(item, at, choices=[LOOPBACK, *self.declared_networks])
                else:  # scenario
                    got = self.string(item, at, what="a scenario id")
                if got is not None:
                    vals.add(got)
            out[k] = vals
        return out

    def group(self, value, where: str) -> str | None:
        if not isinstance(value, str):
            self.bad(where, f"expected a key-exchange group name, got {fmt(value)}")
            return None
        canon = canonical_group(value)
        if canon is None:
            self.bad(
                where, f"unknown key-exchange group {value!r}; allowed: {allowed(GROUPS, value)}"
            )
        return canon

    def read_matrices(self, value) -> dict[str, dict]:
        out = {}
        for mname, m in self.table(value, "matrix").items():
            at = f"matrix.{mname}"
            m = self.table(m, at)
            self.keys(m, MATRIX_KEYS, at)
            if "target" in m:
                self.check_target_matrix(m, at)
            for req in ("kex", "hierarchy") if "target" not in m else ("kex",):
                if req not in m:
                    self.bad(
                        f"{at}.{req}",
                        "missing; allowed: an array of "
                        + ("key-exchange groups" if req == "kex" else "hierarchies"),
                    )
            axes: dict[str, list] = {}
            for axis in MATRIX_AXES:
                raw = m.get(axis)
                if axis == "stack":
                    pairs = self.stack_pairs(m, at)
                    if pairs:
                        axes["stack"] = pairs
                    continue
                if raw is None:
                    continue
                if axis == "hierarchy":
                    # One hierarchy given as a flat array of names is a common slip: say so.
                    if (
                        isinstance(raw, list)
                        and raw
                        and all(isinstance(x, str) for x in raw)
                        and (any(x not in self.hierarchies for x in raw))
                    ):
                        self.bad(
                            f"{at}.hierarchy",
                            f"expected an array of hierarchies, got "
                            f'{raw!r}; allowed: e.g. [["ml", "ml"]] or names of '
                            "[hierarchies] entries",
                        )
                        continue
                    items = self.listish(raw)
                else:
                    items = self.listish(raw)
                if not items:
                    self.bad(f"{at}.{axis}", "empty array; allowed: at least one value")
                    continue
                vals = []
                for i, item in enumerate(items):
                    iat = f"{at}.{axis}[{i}]" if isinstance(raw, list) else f"{at}.{axis}"
                    if axis == "kex":
                        got = self.group(item, iat)
                    elif axis == "hierarchy":
                        got = self.read_hierarchy(item, iat)
                    elif axis == "served_chain":
                        got = self.string(item, iat, choices=SERVED_CHAINS)
                    elif axis == "handshake_mode":
                        got = self.handshake_mode(item, iat)
                    elif axis == "cert_compression":
                        got = self.string(item, iat, choices=CERT_COMPRESSIONS)
                    elif axis == "client_auth":
                        got = self.client_auth(item, iat)
                    elif axis == "transport":
                        got = self.string(item, iat, choices=TRANSPORTS)
                    elif axis == "target":
                        got = self.string(item, iat, choices=list(self.targets))
                    else:
                        got = self.string(item, iat, choices=[LOOPBACK, *self.declared_networks])
                    if got is not None and got not in vals:
                        vals.append(got)
                axes[axis] = vals
            if "target" in m:
                axes["hierarchy"] = [()]  # a target serves its own chain
            if "resumption_ratio" in m:
                modes = self.resumption_ratios(m["resumption_ratio"], f"{at}.resumption_ratio")
                if "handshake_mode" in m:
                    self.bad(
                        f"{at}.resumption_ratio",
                        "given with handshake_mode; allowed: one of the two (a ratio of 0 is "
                        "handshake_mode 'full', 1 'resumed')",
                    )
                elif modes:
                    axes["handshake_mode"] = modes
            excludes = []
            ex = m.get("exclude", [])
            if not isinstance(ex, list):
                self.bad(f"{at}.exclude", f"expected an array of tables, got {fmt(ex)}")
                ex = []
            for i, e in enumerate(ex):
                excludes.append(self.read_where(e, f"{at}.exclude[{i}]"))
            out[mname] = {"axes": axes, "exclude": excludes}
        return out

    def stack_pairs(self, m: dict, at: str) -> list[tuple[str, str]]:
        """The (client, server) stack pairs of a matrix: `stack` (both sides alike), or
        `client_stack` x `server_stack` (a side left out is on the default stack)."""
        if "stack" in m and ("client_stack" in m or "server_stack" in m):
            self.bad(
                f"{at}.stack",
                "given with client_stack/server_stack; allowed: `stack` (both sides on one "
                "stack) or client_stack and server_stack (each side its own)",
            )
            return []
        chosen = {}
        for key in ("stack", "client_stack", "server_stack"):
            if key not in m:
                continue
            raw = m[key]
            items = self.listish(raw)
            if not items:
                self.bad(f"{at}.{key}", "empty array; allowed: at least one value")
            vals = []
            for i, item in enumerate(items):
                iat = f"{at}.{key}[{i}]" if isinstance(raw, list) else f"{at}.{key}"
                got = self.string(item, iat, choices=STACKS)
                if got is not None and got not in vals:
                    vals.append(got)
            chosen[key] = vals
        if "stack" in chosen:
            return [(s, s) for s in chosen["stack"]]
        if not chosen:
            return []
        clients = chosen.get("client_stack", [DEFAULT_STACK])
        servers = chosen.get("server_stack", [DEFAULT_STACK])
        return [(c, s) for c in clients for s in servers]

    def check_target_matrix(self, m: dict, at: str) -> None:
        """A matrix of targets sets only what the client chooses."""
        for key in ("hierarchy", "served_chain", "client_auth"):
            if key in m:
                self.bad(
                    f"{at}.{key}",
                    "given with target; allowed: only what the client chooses (kex, "
                    "handshake_mode or resumption_ratio, cert_compression): a target serves "
                    "its own chain",
                )
        nets = self.listish(m.get("network", LOOPBACK))
        if any(n != LOOPBACK for n in nets):
            self.bad(
                f"{at}.network",
                "given with target; allowed: loopback only (a target is reached over the "
                "real network between this machine and it)",
            )

    def client_auth(self, item, at: str) -> tuple[str, ...] | None:
        """A client certificate: 'none', or its hierarchy (an array of algorithms root to
        leaf, or a [hierarchies] name)."""
        if item == NO_CLIENT_AUTH:
            return ()
        if isinstance(item, str) and item not in self.hierarchies:
            self.bad(
                at,
                f"bad value {fmt(item)}; allowed: 'none', a [hierarchies] name "
                f"({allowed(self.hierarchies, item) or 'none declared'}) or an array of "
                "algorithms root to leaf",
            )
            return None
        return self.read_hierarchy(item, at)

    def handshake_mode(self, item, at: str) -> str | None:
        """A handshake mode: full, resumed, or a resumption mix resumeNN."""
        got = self.string(item, at, what="a handshake mode")
        if got is not None and not is_handshake_mode(got):
            self.bad(at, f"bad value {fmt(got)}; allowed: {MIX_ALLOWED}")
            return None
        return got

    def resumption_ratios(self, raw, at: str) -> list[str]:
        """`resumption_ratio = [0, 0.5, 0.9]`: the handshake modes these ratios are."""
        items = self.listish(raw)
        if not items:
            self.bad(at, "empty array; allowed: at least one value")
        modes = []
        for i, item in enumerate(items):
            iat = f"{at}[{i}]" if isinstance(raw, list) else at
            mode = None
            if isinstance(item, int | float) and not isinstance(item, bool):
                mode = mode_of_ratio(float(item))
            if mode is None:
                self.bad(
                    iat,
                    f"bad value {fmt(item)}; allowed: a share from 0 to 1 in whole per cent "
                    "(0, 0.5, 0.9, 0.99, 1)",
                )
            elif mode not in modes:
                modes.append(mode)
        return modes

    def expand(self, mname: str, m: dict, parts_by_id: dict[str, dict]) -> list[str]:
        """The scenario ids of matrix `mname` (matrix.expand), with what it reports."""
        ids_, unused = matrix.expand(m["axes"], m["exclude"], self.alg_token, parts_by_id)
        for i in unused:
            self.notes.append(f"matrix.{mname}.exclude[{i}] excludes no scenario")
        if not ids_:
            self.bad(
                f"matrix.{mname}",
                "every combination is excluded; allowed: a matrix leaving at least one scenario",
            )
        return ids_

    def read_campaigns(self, value, matrices, matrix_ids, parts_by_id) -> dict[str, list[str]]:
        self.campaign_matrices: dict[str, list[str]] = {}
        if value is None:
            # No [campaigns]: one campaign, named after the file, of every matrix.
            name = self.path.stem
            self.campaign_matrices[name] = list(matrices)
            return {name: [sid for m in matrices for sid in matrix_ids.get(m, [])]}
        out = {}
        for cname, c in self.table(value, "campaigns").items():
            at = f"campaigns.{cname}"
            if not NAME_RE.match(cname):
                self.bad(
                    at, f"bad campaign name {cname!r}; allowed: letters, digits, '.', '_', '-'"
                )
                continue
            c = self.table(c, at)
            self.keys(c, CAMPAIGNS_KEYS, at)
            if "description" in c:
                self.string(c["description"], f"{at}.description")
            members: list[str] = []
            mlist = self.listish(c.get("matrices", []))
            self.campaign_matrices[cname] = []
            for i, mname in enumerate(mlist):
                mat = f"{at}.matrices[{i}]"
                if self.string(mname, mat, choices=list(matrices)) is None:
                    continue
                self.campaign_matrices[cname].append(mname)
                members += [s for s in matrix_ids.get(mname, []) if s not in members]
            for i, sid in enumerate(self.listish(c.get("scenarios", []))):
                sat = f"{at}.scenarios[{i}]"
                if self.string(sid, sat, what="a scenario id") is None:
                    continue
                if sid not in parts_by_id:
                    try:
                        parts = ids.decode(sid, self.tokens, set(self.networks), set(self.targets))
                    except ValueError as e:
                        self.bad(sat, f"bad scenario id {sid!r}: {e}")
                        continue
                    parts_by_id[sid] = parts
                if sid not in members:
                    members.append(sid)
            if not members:
                self.bad(at, "no scenarios; allowed: a campaign with `matrices` and/or `scenarios`")
            out[cname] = members
        return out

    def check_split(self, scenarios: dict, load) -> None:
        problem = split_problem(scenarios.values(), load)
        if problem:
            self.bad("cluster.placement", problem)

    def check_transport(self, sid: str, parts: dict) -> None:
        """QUIC scenarios: what the engine's QUIC transport does not do yet is refused here,
        never found failing at run time (docs/engine-records.md, "QUIC")."""
        if parts["transport"] != "quic":
            return
        if parts["target"] is not None:
            self.bad(
                "matrix",
                f"scenario {sid}: transport 'quic' with target {parts['target']!r}: targets are "
                "probed over TCP; allowed: transport 'tcp' for targets (exclude = [{ transport "
                f'= "quic", target = "{parts["target"]}" }}])',
            )

    def check_stacks(self, sid: str, parts: dict, with_load: bool) -> None:
        """What a side's TLS stack cannot do is refused here, one line per problem, never
        found failing at run time (chainlab.campaign.stacks, docs/stacks.md)."""
        for problem in stacks.problems(parts, with_load):
            self.bad("matrix", f"scenario {sid}: {problem}; exclude it or choose another stack")

    def check_anchor(self, sid: str, parts: dict) -> None:
        """An intermediate can be the trust anchor only where the hierarchy has one."""
        depth = len(parts["hierarchy"])
        if parts["served_chain"] == INTERMEDIATE_ANCHOR and depth < 3:
            self.bad(
                "matrix",
                f"scenario {sid}: served_chain {INTERMEDIATE_ANCHOR!r} at depth {depth}: the "
                "leaf's issuer is no intermediate; allowed: depth 3 or 4 (exclude the others, "
                f'e.g. exclude = [{{ served_chain = "{INTERMEDIATE_ANCHOR}", depth = [1, 2] }}])',
            )

    def resolve_sampling(self, sid, parts, base, overrides) -> SamplingPolicy:
        values = dict(base)
        sources = {k: "sampling" for k in values}
        for i, (where, ov) in enumerate(overrides):
            if matches(where, parts, sid):
                values.update(ov)
                sources.update({k: f"sampling.override[{i}]" for k in ov})
        policy = SamplingPolicy(**values)
        if policy.min > policy.max:
            self.bad(
                f"{sources['min']}.min",
                f"bad value {policy.min} for scenario {sid}: min exceeds max ({policy.max}); "
                "allowed: min <= max",
            )
        if parts["handshake_mode"] == "resumed" and (policy.warmup < 1 or policy.batch_warmup < 1):
            key = "warmup" if policy.warmup < 1 else "batch_warmup"
            self.bad(
                f"{sources[key]}.{key}",
                f"bad value {getattr(policy, key)} for resumed scenario {sid}: each client's "
                "first handshake is a full one; allowed: >= 1",
            )
        return replace(policy)
