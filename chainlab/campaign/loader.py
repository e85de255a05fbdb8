"""Reads a campaign file, validates every key and value, expands its matrices.

Nothing runs and nothing is written before a file passes. Every problem is reported as one
line: the file, the key path (`matrix.B.hierarchy[2][0]`), the bad value and what is allowed.
All problems found are reported together; docs/campaigns.md is the reference for the format.
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import math
import re
import tomllib
from dataclasses import replace
from pathlib import Path

from chainlab.campaign import ids
from chainlab.campaign.algorithms import (
    ALGORITHM_NAMES,
    CERT_COMPRESSIONS,
    GROUPS,
    HANDSHAKE_MODES,
    SERVED_CHAINS,
    canonical_algorithm,
    canonical_group,
    token,
)
from chainlab.campaign.model import (
    DEFAULT_CERT_COMPRESSION,
    DEFAULT_HANDSHAKE_MODE,
    DEFAULT_SERVED_CHAIN,
    Campaign,
    NetworkProfile,
    SamplingPolicy,
    Scenario,
)
from chainlab.errors import ChainlabError
from chainlab.network import profile as network_profile
from chainlab.network.profile import LOOPBACK, parse_profile

TOP_KEYS = ("campaign", "aliases", "hierarchies", "network", "sampling", "matrix", "campaigns")
TOP_KEYS += ("analysis",)
CAMPAIGN_KEYS = ("name", "description", "seed", "order", "baseline")
ORDERS = ("random", "interleaved", "declared")
MATRIX_AXES = ("kex", "hierarchy", "served_chain", "handshake_mode", "cert_compression", "network")
MATRIX_KEYS = (*MATRIX_AXES, "exclude", "description")
CAMPAIGNS_KEYS = ("description", "matrices", "scenarios")
WHERE_KEYS = (
    "scenario",
    "kex",
    "kex_family",
    "depth",
    "root",
    "int",
    "leaf",
    "algorithm",
    "served_chain",
    "handshake_mode",
    "cert_compression",
    "network",
)
NETWORK_KEYS = tuple(k for k in network_profile.KEYS if k != "name")  # name is the table's
# What the link accepts (chainlab/network/profile.py): "veth" is a plain pair that emulates
# nothing, the reference `chainlab bench link` compares the forwarder against.
NETWORK_BACKENDS = ("tun", "netem", "veth")
# Keys that shape a link; a "veth" profile may set none of them.
NETWORK_SHAPING_KEYS = ("delay_ms", "jitter_ms", "rate_mbit", "loss")
# A kernel TCP congestion control name (TCP_CA_NAME_MAX is 16 with the NUL), as
# chainlab/network/profile.py accepts it.
CONGESTION_CONTROL_RE = re.compile(r"^[a-z0-9_]{1,15}$")

# Defaults of [sampling]; docs/sampling.md explains each.
SAMPLING_DEFAULTS = {
    "mode": "adaptive",
    "count": 1000,
    "target_rel_halfwidth": 0.01,
    "confidence": 0.95,
    "min": 100,
    "max": 10000,
    "time_cap_s": 300.0,
    "warmup": 10,
    "batch_warmup": 1,
    "timeout_ms": 10000,
    "max_failed_fraction": 0.5,
}
SAMPLING_KEYS = (*SAMPLING_DEFAULTS, "override")
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
ALIAS_RE = re.compile(r"^[a-z][a-z0-9]*$")
NETWORK_NAME_RE = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)*$")


class CampaignError(ChainlabError):
    """A campaign file that does not validate; `problems` has one line per problem."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("\n".join(problems))


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
    from chainlab import engine

    try:
        return tuple(a["name"] for a in engine.info()["algorithms"])
    except ChainlabError:
        return ALGORITHM_NAMES


def _fmt(value) -> str:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return repr(value)


def _allowed(names, bad=None) -> str:
    names = list(names)
    text = ", ".join(str(n) for n in names)
    if isinstance(bad, str):
        close = difflib.get_close_matches(bad, [str(n) for n in names], n=1, cutoff=0.6)
        if not close:
            lower = {str(n).lower(): str(n) for n in names}
            close = difflib.get_close_matches(bad.lower(), list(lower), n=1, cutoff=0.6)
            close = [lower[c] for c in close]
        if close:
            text += f" (did you mean {close[0]!r}?)"
    return text


class _Validator:
    def __init__(self, path: Path, data: dict, algorithms: tuple[str, ...]):
        self.path = path
        self.data = data
        self.algorithms = algorithms
        self.problems: list[str] = []
        self.notes: list[str] = []

    # -- reporting ---------------------------------------------------------------------

    def bad(self, key: str, message: str):
        self.problems.append(f"{self.path}: {key}: {message}")

    def check(self):
        if self.problems:
            raise CampaignError(self.problems)

    def keys(self, table: dict, allowed, where: str) -> None:
        for k in table:
            if k not in allowed:
                at = f"{where}.{k}" if where else k
                self.bad(at, f"unknown key {k!r}; allowed: {_allowed(allowed, k)}")

    def table(self, value, where: str) -> dict:
        if not isinstance(value, dict):
            self.bad(where, f"expected a table, got {_fmt(value)}")
            return {}
        return value

    def string(self, value, where: str, choices=None, pattern=None, what="a string"):
        if not isinstance(value, str):
            self.bad(where, f"expected {what}, got {_fmt(value)}")
            return None
        if choices is not None and value not in choices:
            self.bad(where, f"bad value {value!r}; allowed: {_allowed(choices, value)}")
            return None
        if pattern is not None and not pattern.match(value):
            self.bad(where, f"bad value {value!r}; allowed: {what}")
            return None
        return value

    def integer(self, value, where: str, lo: int, hi: int | None = None):
        if isinstance(value, bool) or not isinstance(value, int):
            self.bad(where, f"expected an integer, got {_fmt(value)}")
            return None
        if value < lo or (hi is not None and value > hi):
            rng = f"{lo} to {hi}" if hi is not None else f">= {lo}"
            self.bad(where, f"bad value {value}; allowed: an integer {rng}")
            return None
        return value

    def number(self, value, where: str, lo: float, hi: float | None = None, lo_open=False):
        ok_type = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok_type or not math.isfinite(value):
            self.bad(where, f"expected a number, got {_fmt(value)}")
            return None
        below = value <= lo if lo_open else value < lo
        if below or (hi is not None and value > hi):
            left = f"> {lo}" if lo_open else f">= {lo}"
            rng = f"{left} and <= {hi}" if hi is not None else left
            self.bad(where, f"bad value {value}; allowed: a number {rng}")
            return None
        return float(value)

    def listish(self, value, where: str) -> list:
        """An array, or a single value standing for a one-element array."""
        return value if isinstance(value, list) else [value]

    # -- sections ----------------------------------------------------------------------

    def run(self) -> Campaign:
        d = self.data
        self.keys(d, TOP_KEYS, "")
        head = self.table(d.get("campaign", {}), "campaign")
        self.keys(head, CAMPAIGN_KEYS, "campaign")
        name = self.path.stem
        if "name" in head:
            name = (
                self.string(
                    head["name"],
                    "campaign.name",
                    pattern=NAME_RE,
                    what="a name of letters, digits, '.', '_', '-'",
                )
                or name
            )
        description = ""
        if "description" in head:
            description = self.string(head["description"], "campaign.description") or ""
        seed = 1
        if "seed" in head:
            seed = self.integer(head["seed"], "campaign.seed", 0, 2**63 - 1)
        order = "random"
        if "order" in head:
            order = self.string(head["order"], "campaign.order", choices=ORDERS)
        baseline = None
        if "baseline" in head:
            baseline = self.string(head["baseline"], "campaign.baseline", what="a scenario id")

        self.aliases = self.read_aliases(d.get("aliases", {}))
        self.tokens = self.algorithm_tokens()
        self.hierarchies = self.read_hierarchies(d.get("hierarchies", {}))
        self.networks = self.read_networks(d.get("network", {}))
        base_sampling, overrides = self.read_sampling(d.get("sampling", {}))
        matrices = self.read_matrices(d.get("matrix", {}))
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
            scenarios[sid] = Scenario(
                scenario_id=sid,
                sampling=policy,
                network_profile=self.networks.get(parts["network"]),
                **parts,
            )
        for i, (ov_where, _) in enumerate(overrides):
            if not any(self.matches(ov_where, p, sid) for sid, p in parts_by_id.items()):
                self.notes.append(f"sampling.override[{i}] matches no scenario")
        if baseline is not None and baseline not in scenarios:
            self.bad(
                "campaign.baseline",
                f"bad value {baseline!r}: not a scenario of this file; allowed: "
                + _allowed(scenarios, baseline),
            )
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
        )

    def check_analysis(self, table: dict, baseline: str | None) -> None:
        """[analysis] belongs to the report; its own parser says what it accepts."""
        try:
            from chainlab.campaign.analysis_settings import parse_analysis
        except ImportError:  # the report part is optional for running campaigns
            return
        try:
            parse_analysis(table, str(self.path), baseline)
        except ChainlabError as e:
            self.problems.append(str(e))

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
                self.bad(at, f"expected an algorithm name, got {_fmt(alg)}")
                continue
            canon = canonical_algorithm(alg, self.algorithms)
            if canon is None:
                self.bad(
                    at, f"unknown algorithm {alg!r}; allowed: {_allowed(self.algorithms, alg)}"
                )
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
            self.bad(where, f"expected an algorithm name or alias, got {_fmt(ref)}")
            return None
        if ref in self.aliases:
            return self.aliases[ref]
        canon = canonical_algorithm(ref, self.algorithms)
        if canon is None:
            names = [*self.aliases, *self.algorithms]
            self.bad(where, f"unknown algorithm or alias {ref!r}; allowed: {_allowed(names, ref)}")
        return canon

    def read_hierarchy(self, value, where: str) -> tuple[str, ...] | None:
        if isinstance(value, str):
            if value in self.hierarchies:
                return self.hierarchies[value]
            self.bad(
                where,
                f"unknown hierarchy {value!r}; allowed: a [hierarchies] name "
                f"({_allowed(self.hierarchies, value) or 'none declared'}) or an array of "
                "algorithms root to leaf",
            )
            return None
        if not isinstance(value, list):
            self.bad(where, f"expected an array of algorithms (root to leaf), got {_fmt(value)}")
            return None
        if not 1 <= len(value) <= 4:
            self.bad(
                where,
                f"impossible depth {len(value)} ({_fmt(value)}); allowed: 1 to 4 "
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
            spec = self.table(spec, at)
            self.keys(spec, NETWORK_KEYS, at)
            kw = self.network_values(spec, at)
            if None in kw.values():
                continue
            profile = NetworkProfile(name=nname, **kw)
            # The link's own parser is the last word: whatever it would refuse at run time
            # is refused here, before anything runs.
            try:
                parse_profile(profile.to_dict())
            except ChainlabError as e:
                self.bad(at, f"{e}")
                continue
            out[nname] = profile
        return out

    def network_values(self, spec: dict, at: str) -> dict:
        """Validated keys of one `[network.<name>]` table (only those present; None where a
        value is bad). Types and ranges are those of chainlab/network/profile.py."""
        kw = {}
        for k in ("delay_ms", "jitter_ms"):
            if k in spec:
                kw[k] = self.number(spec[k], f"{at}.{k}", 0.0, 10_000.0)
        if "rate_mbit" in spec:
            kw["rate_mbit"] = self.number(spec["rate_mbit"], f"{at}.rate_mbit", 0.001, 100_000.0)
        if "loss" in spec:
            # Up to 0.99: a link that loses every packet carries no handshake to measure.
            kw["loss"] = self.number(spec["loss"], f"{at}.loss", 0.0, 0.99)
        if "mtu" in spec:
            kw["mtu"] = self.integer(spec["mtu"], f"{at}.mtu", 576, 65535)
        if "queue_packets" in spec:
            kw["queue_packets"] = self.integer(
                spec["queue_packets"], f"{at}.queue_packets", 1, 1_000_000
            )
        if "initcwnd" in spec:
            kw["initcwnd"] = self.integer(spec["initcwnd"], f"{at}.initcwnd", 1, 1000)
        if "seed" in spec:
            kw["seed"] = self.integer(spec["seed"], f"{at}.seed", 0, 2**63 - 1)
        if "congestion_control" in spec:
            kw["congestion_control"] = self.string(
                spec["congestion_control"],
                f"{at}.congestion_control",
                pattern=CONGESTION_CONTROL_RE,
                what="a kernel congestion control name of 1-15 lower-case letters, digits "
                "or '_' (e.g. cubic, reno, bbr)",
            )
        if "description" in spec:
            kw["description"] = self.string(spec["description"], f"{at}.description")
        if "backend" in spec:
            kw["backend"] = self.string(spec["backend"], f"{at}.backend", choices=NETWORK_BACKENDS)
        jitter, delay = kw.get("jitter_ms"), kw.get("delay_ms", 0.0)
        if jitter is not None and delay is not None and jitter > delay:
            self.bad(
                f"{at}.jitter_ms",
                f"bad value {jitter:g}; allowed: at most delay_ms ({delay:g}): a packet "
                "cannot arrive before it was sent",
            )
            kw["jitter_ms"] = None
        if kw.get("backend") == "veth":
            for k in NETWORK_SHAPING_KEYS:
                if kw.get(k):
                    self.bad(
                        f"{at}.{k}",
                        f"bad value {_fmt(spec[k])}: backend 'veth' emulates nothing; allowed: "
                        f"0 or unset with 'veth', or backend 'tun' or 'netem' for a shaped link",
                    )
                    kw[k] = None
        return kw

    def sampling_values(self, table: dict, where: str) -> dict:
        """Validated sampling keys of `table` (only those present)."""
        out = {}
        for k, val in table.items():
            at = f"{where}.{k}"
            if k == "mode":
                out[k] = self.string(val, at, choices=("fixed", "adaptive"))
            elif k in ("count", "min", "max"):
                out[k] = self.integer(val, at, 1, 10_000_000)
            elif k in ("warmup", "batch_warmup"):
                out[k] = self.integer(val, at, 0, 1_000_000)
            elif k == "timeout_ms":
                out[k] = self.integer(val, at, 1, 3_600_000)
            elif k == "target_rel_halfwidth":
                out[k] = self.number(val, at, 0.0, 0.5, lo_open=True)
            elif k == "confidence":
                out[k] = self.number(val, at, 0.5, 0.999, lo_open=True)
            elif k == "time_cap_s":
                out[k] = self.number(val, at, 0.0, 7 * 86400.0, lo_open=True)
            elif k == "max_failed_fraction":
                out[k] = self.number(val, at, 0.0, 1.0)
        return {k: v for k, v in out.items() if v is not None}

    def read_sampling(self, value):
        table = self.table(value, "sampling")
        self.keys(table, SAMPLING_KEYS, "sampling")
        base = dict(SAMPLING_DEFAULTS)
        base.update(
            self.sampling_values({k: v for k, v in table.items() if k != "override"}, "sampling")
        )
        overrides = []
        ovs = table.get("override", [])
        if not isinstance(ovs, list):
            self.bad(
                "sampling.override",
                f"expected an array of tables ([[sampling.override]]), got {_fmt(ovs)}",
            )
            ovs = []
        for i, ov in enumerate(ovs):
            at = f"sampling.override[{i}]"
            ov = self.table(ov, at)
            self.keys(ov, (*SAMPLING_DEFAULTS, "where"), at)
            if "where" not in ov:
                self.bad(
                    f"{at}.where",
                    f"missing; allowed: a table of scenario properties ({', '.join(WHERE_KEYS)})",
                )
                continue
            where = self.read_where(ov["where"], f"{at}.where")
            values = self.sampling_values({k: v for k, v in ov.items() if k != "where"}, at)
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
            for i, item in enumerate(self.listish(raw, f"{where}.{k}")):
                at = f"{where}.{k}" if not isinstance(raw, list) else f"{where}.{k}[{i}]"
                if k in ("root", "int", "leaf", "algorithm"):
                    got = self.resolve_alg(item, at)
                elif k == "kex":
                    got = self.group(item, at)
                elif k == "kex_family":
                    got = self.string(item, at, choices=("classical", "hybrid", "pure_pq"))
                elif k == "depth":
                    got = self.integer(item, at, 1, 4)
                elif k == "served_chain":
                    got = self.string(item, at, choices=SERVED_CHAINS)
                elif k == "handshake_mode":
                    got = self.string(item, at, choices=HANDSHAKE_MODES)
                elif k == "cert_compression":
                    got = self.string(item, at, choices=CERT_COMPRESSIONS)
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
            self.bad(where, f"expected a key-exchange group name, got {_fmt(value)}")
            return None
        canon = canonical_group(value)
        if canon is None:
            self.bad(
                where, f"unknown key-exchange group {value!r}; allowed: {_allowed(GROUPS, value)}"
            )
        return canon

    def read_matrices(self, value) -> dict[str, dict]:
        out = {}
        for mname, m in self.table(value, "matrix").items():
            at = f"matrix.{mname}"
            m = self.table(m, at)
            self.keys(m, MATRIX_KEYS, at)
            for req in ("kex", "hierarchy"):
                if req not in m:
                    self.bad(
                        f"{at}.{req}",
                        "missing; allowed: an array of "
                        + ("key-exchange groups" if req == "kex" else "hierarchies"),
                    )
            axes: dict[str, list] = {}
            for axis in MATRIX_AXES:
                raw = m.get(axis)
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
                    items = self.listish(raw, f"{at}.{axis}")
                else:
                    items = self.listish(raw, f"{at}.{axis}")
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
                        got = self.string(item, iat, choices=HANDSHAKE_MODES)
                    elif axis == "cert_compression":
                        got = self.string(item, iat, choices=CERT_COMPRESSIONS)
                    else:
                        got = self.string(item, iat, choices=[LOOPBACK, *self.declared_networks])
                    if got is not None and got not in vals:
                        vals.append(got)
                axes[axis] = vals
            excludes = []
            ex = m.get("exclude", [])
            if not isinstance(ex, list):
                self.bad(f"{at}.exclude", f"expected an array of tables, got {_fmt(ex)}")
                ex = []
            for i, e in enumerate(ex):
                excludes.append(self.read_where(e, f"{at}.exclude[{i}]"))
            out[mname] = {"axes": axes, "exclude": excludes}
        return out

    def expand(self, mname: str, m: dict, parts_by_id: dict[str, dict]) -> list[str]:
        axes = m["axes"]
        combos = itertools.product(
            axes["kex"],
            axes["hierarchy"],
            axes.get("served_chain", [DEFAULT_SERVED_CHAIN]),
            axes.get("handshake_mode", [DEFAULT_HANDSHAKE_MODE]),
            axes.get("cert_compression", [DEFAULT_CERT_COMPRESSION]),
            axes.get("network", [LOOPBACK]),
        )
        out = []
        excluded_by = [0] * len(m["exclude"])
        for kex, hier, served, mode, comp, net in combos:
            sid = ids.compose(kex, [self.alg_token(a) for a in hier], served, mode, comp, net)
            parts = {
                "kex": kex,
                "hierarchy": hier,
                "served_chain": served,
                "handshake_mode": mode,
                "cert_compression": comp,
                "network": net,
            }
            hit = [self.matches(w, parts, sid) for w in m["exclude"]]
            for i, h in enumerate(hit):
                excluded_by[i] += h
            if any(hit):
                continue
            parts_by_id.setdefault(sid, parts)
            if sid not in out:
                out.append(sid)
        for i, n in enumerate(excluded_by):
            if n == 0:
                self.notes.append(f"matrix.{mname}.exclude[{i}] excludes no scenario")
        if not out:
            self.bad(
                f"matrix.{mname}",
                "every combination is excluded; allowed: a matrix leaving at least one scenario",
            )
        return out

    @staticmethod
    def matches(where: dict, parts: dict, sid: str) -> bool:
        h = parts["hierarchy"]
        facts = {
            "scenario": {sid},
            "kex": {parts["kex"]},
            "kex_family": {GROUPS[parts["kex"]]},
            "depth": {len(h)},
            "root": {h[0]} if len(h) >= 2 else set(),
            "int": set(h[1:-1]),
            "leaf": {h[-1]},
            "algorithm": set(h),
            "served_chain": {parts["served_chain"]},
            "handshake_mode": {parts["handshake_mode"]},
            "cert_compression": {parts["cert_compression"]},
            "network": {parts["network"]},
        }
        return all(facts[k] & vals for k, vals in where.items())

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
            mlist = self.listish(c.get("matrices", []), f"{at}.matrices")
            self.campaign_matrices[cname] = []
            for i, mname in enumerate(mlist):
                mat = f"{at}.matrices[{i}]"
                if self.string(mname, mat, choices=list(matrices)) is None:
                    continue
                self.campaign_matrices[cname].append(mname)
                members += [s for s in matrix_ids.get(mname, []) if s not in members]
            for i, sid in enumerate(self.listish(c.get("scenarios", []), f"{at}.scenarios")):
                sat = f"{at}.scenarios[{i}]"
                if self.string(sid, sat, what="a scenario id") is None:
                    continue
                if sid not in parts_by_id:
                    try:
                        parts = ids.decode(sid, self.tokens, set(self.networks))
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

    def resolve_sampling(self, sid, parts, base, overrides) -> SamplingPolicy:
        values = dict(base)
        sources = {k: "sampling" for k in values}
        for i, (where, ov) in enumerate(overrides):
            if self.matches(where, parts, sid):
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
