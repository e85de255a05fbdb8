"""Reads a campaign file, validates every key and value, expands its matrices.

The tables are read by `tables.py` (aliases, hierarchies, targets, networks, sampling, where)
and `matrix_reader.py` (matrices, campaigns), each axis's values by its own reader
(chainlab.axes.axis: `Axis.read`); this module runs them in order and applies the rules
that span scenarios: each axis's own (`Axis.check`), what a scenario's values need of its
stacks, split placement, sampling overrides.

Nothing runs and nothing is written before a file passes. Every problem is reported as one
line: the file, the key path (`matrix.B.hierarchy[2][0]`), the bad value and what is allowed.
All problems found are reported together; docs/campaigns.md is the reference for the format.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chainlab.axes.handshake import Handshake
    from chainlab.campaign.model import LoadPlan

import hashlib
import tomllib
from dataclasses import replace
from pathlib import Path

from chainlab import axes, engine
from chainlab.axes import stack_check
from chainlab.axes.algorithms import ALGORITHM_NAMES
from chainlab.campaign import load_plan, measure_plan
from chainlab.campaign.clients import ClientReaders
from chainlab.campaign.fields import (
    CAMPAIGN_FIELDS,
    CLUSTER_FIELDS,
    TOP_KEYS,
)
from chainlab.campaign.matrix import matches
from chainlab.campaign.matrix_reader import MatrixReaders
from chainlab.campaign.model import (
    Campaign,
    SamplingPolicy,
    Scenario,
)
from chainlab.errors import ChainlabError
from chainlab.network.profile import LOOPBACK
from chainlab.schema import ConfigError, allowed

# A campaign file that does not validate; `problems` has one line per problem.
CampaignError = ConfigError


def load(path: str | Path, algorithms: tuple[str, ...] | None = None) -> Campaign:
    """Reads, validates and expands a campaign file; raises CampaignError listing problems.

    `algorithms` is the list of accepted signature algorithms (the engine's `info` table);
    default: the engine's if it is built, else the copy in chainlab.axes.algorithms.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise CampaignError([f"{path}: cannot read campaign file: {e.strerror}"]) from None
    try:
        # A byte-order mark (Windows editors write one) is no part of the TOML.
        text = raw.decode("utf-8-sig")
        data = tomllib.loads(text)
    except UnicodeDecodeError as e:
        raise CampaignError([f"{path}: not UTF-8 text ({e.reason} at byte {e.start})"]) from None
    except tomllib.TOMLDecodeError as e:
        raise CampaignError([f"{path}: invalid TOML: {e}"]) from None
    if algorithms is None:
        algorithms = allowed_algorithms()
    v = Validator(path, data, algorithms)
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


def split_problem(scenarios: Any, load: LoadPlan | None) -> str | None:
    """Why these scenarios cannot run with split placement, or None. Split placement
    measures over the real network between two hosts: no emulated link, no target (no
    server of chainlab's), no load steps (they read the server's host)."""
    for s in scenarios:
        what = None
        if s.network != LOOPBACK:
            what = f"runs on the emulated profile {s.network!r}"
        elif s.target is not None:
            what = f"probes target {s.target!r}"
        elif s.handshake.quic:
            what = "runs over quic"
        elif s.measure is not None:
            what = "counts instructions ([measure]: both sides on one host)"
        if what:
            return (
                f"'split' but scenario {s.scenario_id} {what}; allowed: split placement for "
                "scenarios of chainlab's own servers over TCP without an emulated link"
            )
    if load is not None:
        return "'split' with [load]; allowed: one of the two"
    return None


class Validator(MatrixReaders, ClientReaders):
    """The whole campaign file's reader: its tables (the readers mixed in), then the rules
    that span scenarios."""

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
        self.interop = bool(head.get("interop", False))

        self.aliases = self.read_aliases(d.get("aliases", {}))
        self.tokens = self.algorithm_tokens()
        self.hierarchies = self.read_hierarchies(d.get("hierarchies", {}))
        self.networks = self.read_networks(d.get("network", {}))
        self.targets = self.read_targets(d.get("targets", {}))
        self.clients = self.read_clients(d.get("clients", {}))
        base_sampling, overrides = self.read_sampling(d.get("sampling", {}))
        matrices = self.read_matrices(d.get("matrix", {}))
        load = load_plan.read(self, d.get("load"))
        measure = measure_plan.read(self, d.get("measure"))
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
        parts_by_id: dict[str, dict[str, Any]] = {}
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
            h = axes.handshake(parts)
            policy = self.resolve_sampling(sid, parts, h, base_sampling, overrides)
            scenario_load = load_plan.for_scenario(self, load, parts, sid)
            # Each axis's rules with the others (chainlab.axes.axis: `Axis.check`),
            # then what the scenario's values need of its stacks.
            for axis in axes.registered():
                if axis.check is not None:
                    axis.check(self, sid, h, scenario_load is not None)
            self.check_capabilities(sid, parts, h, scenario_load)
            scenarios[sid] = Scenario.from_parts(
                sid,
                parts,
                sampling=policy,
                network_profile=self.networks.get(parts["network"]),
                load=scenario_load,
                measure=measure_plan.for_scenario(self, measure, parts, h, sid),
                target_spec=self.targets.get(parts["target"]),
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
            measure=measure,
            primitives=primitives,
            cluster=cluster,
            placement=placement,
        )

    def check_split(self, scenarios: dict[str, Any], load: LoadPlan | None) -> None:
        problem = split_problem(scenarios.values(), load)
        if problem:
            self.bad("cluster.placement", problem)

    def check_capabilities(
        self, sid: str, parts: dict[str, Any], h: Handshake, load: LoadPlan | None
    ) -> None:
        """What a side's TLS stack cannot do is refused here, one line per problem, never
        found failing at run time (chainlab.axes.stack, docs/stacks.md); so is what
        [load]'s generator_stack cannot do of the scenario's client side."""
        needs = axes.needs_of(h)
        for problem in stack_check.problems(h, load is not None, needs):
            if self.interop and problem.on_the_wire:
                self.notes.append(
                    f"scenario {sid}: {problem.text}: an interop cell, expected to fail by category"
                )
                continue
            self.bad(
                "matrix", f"scenario {sid}: {problem.text}; exclude it or choose another stack"
            )
        if load is not None and not load.verify and h.credential.is_mtc:
            self.bad(
                "load.verify",
                f"scenario {sid}: verify = false with a Merkle Tree Certificate: the "
                "generator asks for and checks the MTC its client holds (its trust file); "
                "allowed: verify = true, or exclude the scenario",
            )
        gen = load.generator_stack if load is not None else None
        if gen is not None and gen != h.stacks[0]:
            as_client = replace(h, stacks=(gen, h.stacks[1]))
            for problem in stack_check.problems(as_client, True, needs):
                if problem.text.startswith("client "):
                    self.bad(
                        "load.generator_stack",
                        f"scenario {sid}: the generator's {problem.text.removeprefix('client ')}; "
                        "choose another generator_stack or exclude the scenario",
                    )

    def resolve_sampling(
        self, sid: str, parts: dict[str, Any], h: Handshake, base: Any, overrides: Any
    ) -> SamplingPolicy:
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
        if h.resumed_share == 1 and (policy.warmup < 1 or policy.batch_warmup < 1):
            key = "warmup" if policy.warmup < 1 else "batch_warmup"
            self.bad(
                f"{sources[key]}.{key}",
                f"bad value {getattr(policy, key)} for resumed scenario {sid}: each client's "
                "first handshake is a full one; allowed: >= 1",
            )
        return replace(policy)
