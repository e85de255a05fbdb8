"""Everything the report shows, computed once from a store: `analyze(path) -> Analysis`.

The analysis is generic over any campaign: it never assumes the paper's scenarios. Usage
from a notebook:

    from chainlab.analysis.analyze import analyze
    a = analyze("results/signature-placement.duckdb")
    a.summary            # per-scenario statistics with intervals
    a.pairs              # paired comparisons found in the matrix
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from chainlab.analysis import (
    by_position,
    capacity,
    client_auth,
    compare,
    compression,
    correlations,
    cost_model,
    decomposition,
    intermediates,
    load_capacity,
    mtc,
    network,
    paper,
    probe,
    quic,
    resumption,
    rollout,
    stacks,
    summary,
)
from chainlab.analysis.findings import findings
from chainlab.analysis.load import StoreData, load_store, parse_json
from chainlab.campaign.analysis_settings import AnalysisConfig
from chainlab.machine import libraries


@dataclass
class Analysis:
    data: StoreData
    config: AnalysisConfig
    baseline: str | None
    baseline_note: str
    summary: pd.DataFrame
    failures: pd.DataFrame
    exposure: pd.DataFrame
    multipliers: pd.DataFrame
    strategy: pd.DataFrame
    classes: pd.DataFrame
    table7: pd.DataFrame
    pairs: pd.DataFrame
    correlations: pd.DataFrame
    counterexamples: pd.DataFrame
    decomposition: pd.DataFrame
    decomposition_classes: pd.DataFrame
    capacity: pd.DataFrame
    service_scenarios: pd.DataFrame
    service_classes: pd.DataFrame
    paper_matches: pd.DataFrame
    paper_scenarios: pd.DataFrame
    paper_classes: pd.DataFrame
    paper_correlations: pd.DataFrame
    paper_depth: pd.DataFrame
    paper_kex: pd.DataFrame
    metadata: list[tuple[str, str]] = field(default_factory=list)
    findings: list[dict] = field(default_factory=list)
    # The network whose scenarios the cross-scenario statistics (classes, correlations,
    # decomposition, capacity, findings, paper comparison) use:
    # docs/methods/networks.md#emulated-networks.
    reference_network: str | None = None
    network: network.NetworkAnalysis | None = None  # None: every scenario ran over loopback
    # Open-loop load (chainlab.analysis.load_capacity): one row per step, one per scenario.
    load_steps: pd.DataFrame = field(default_factory=pd.DataFrame)
    load_capacity: pd.DataFrame = field(default_factory=pd.DataFrame)
    host_speed: pd.DataFrame = field(default_factory=pd.DataFrame)  # per scenario
    # The cost model (chainlab.analysis.cost_model): predicted vs measured per scenario, and
    # the primitives it predicts from (both empty in a store without primitives).
    cost_model: pd.DataFrame = field(default_factory=pd.DataFrame)
    primitives: pd.DataFrame = field(default_factory=pd.DataFrame)
    # Certificate compression judged (chainlab.analysis.compression): per compressed scenario
    # against its uncompressed twin, and a verdict per signature family.
    compression: pd.DataFrame = field(default_factory=pd.DataFrame)
    compression_verdicts: pd.DataFrame = field(default_factory=pd.DataFrame)
    # Resumption mixes against the line of their full and resumed ends (analysis.resumption).
    resumption: pd.DataFrame = field(default_factory=pd.DataFrame)
    # Served chains against leaf+intermediates (analysis.intermediates) and client
    # certificates against none (analysis.client_auth).
    intermediates: pd.DataFrame = field(default_factory=pd.DataFrame)
    client_auth: pd.DataFrame = field(default_factory=pd.DataFrame)
    # QUIC scenarios against their TCP twins (analysis.quic).
    quic: pd.DataFrame = field(default_factory=pd.DataFrame)
    # Merkle Tree Certificates against X.509 chains with their leaf, and their proofs
    # against the batch (analysis.mtc).
    mtc: pd.DataFrame = field(default_factory=pd.DataFrame)
    mtc_proofs: pd.DataFrame = field(default_factory=pd.DataFrame)
    # Scenarios on other TLS stacks against OpenSSL 3.5, and the findings per stack
    # (analysis.stacks).
    stacks: pd.DataFrame = field(default_factory=pd.DataFrame)
    stack_orderings: pd.DataFrame = field(default_factory=pd.DataFrame)
    stack_cost_split: pd.DataFrame = field(default_factory=pd.DataFrame)
    # Signature families by position (analysis.by_position): every algorithm ranked at each
    # position, and the best per position.
    by_position: pd.DataFrame = field(default_factory=pd.DataFrame)
    by_position_best: pd.DataFrame = field(default_factory=pd.DataFrame)
    # Staged rollout (analysis.rollout): figures per kind of client (one at a time, and per
    # load step), per PQ share of each rollout group, and the rollback rule on them.
    rollout_kinds: pd.DataFrame = field(default_factory=pd.DataFrame)
    rollout_load_kinds: pd.DataFrame = field(default_factory=pd.DataFrame)
    rollout_shares: pd.DataFrame = field(default_factory=pd.DataFrame)
    rollout_rule: pd.DataFrame = field(default_factory=pd.DataFrame)
    # Servers chainlab did not start (analysis.probe): per target scenario, the chains they
    # sent, and each against the lab's scenarios with its leaf.
    targets: pd.DataFrame = field(default_factory=pd.DataFrame)
    target_chains: pd.DataFrame = field(default_factory=pd.DataFrame)
    target_beside: pd.DataFrame = field(default_factory=pd.DataFrame)
    target_load: pd.DataFrame = field(default_factory=pd.DataFrame)

    def reference_summary(self) -> pd.DataFrame:
        """The summary rows of the scenarios on the reference network."""
        return on_network(self.summary, self.reference_network)


def on_network(summ: pd.DataFrame, net: str | None) -> pd.DataFrame:
    """`summ` restricted to network `net` (the frame itself when nothing is left out)."""
    if net is None or summ.empty or "network" not in summ or (summ["network"] == net).all():
        return summ
    return summ[summ["network"] == net].reset_index(drop=True)


def analyze(path, config: AnalysisConfig | None = None, **overrides) -> Analysis:
    """Analyse the store at `path`. `config` replaces the campaign file's settings;
    `overrides` (e.g. baseline=..., price_per_vcpu_hour=...) change single settings."""
    data = load_store(path, config)
    if overrides:
        data.config = data.config.replace(**overrides)
    return analyze_data(data)


def analyze_data(data: StoreData) -> Analysis:
    probes_only = data.scenarios.empty and not data.targets.empty
    a = _targets_only(data) if probes_only else _lab(data)
    level = data.config.confidence_level
    a.targets = probe.per_target(data, level)
    a.target_chains = probe.observed_chains(data)
    a.target_beside = probe.beside_lab(a.targets, a.target_chains, a.summary, level)
    a.target_load = probe.load_steps(data, level)
    return a


def _targets_only(data: StoreData) -> Analysis:
    """A store of probes only (`chainlab probe`): no lab scenario to compare or model."""
    empty = pd.DataFrame
    summ = pd.DataFrame(columns=["scenario_id", "status", "placement_class"])
    return Analysis(
        data=data,
        config=data.config,
        baseline=None,
        baseline_note="the store holds probes of servers chainlab did not start only",
        summary=summ,
        failures=empty(),
        exposure=empty(),
        multipliers=empty(),
        strategy=empty(),
        classes=empty(),
        table7=empty(),
        pairs=empty(),
        correlations=empty(),
        counterexamples=empty(),
        decomposition=empty(),
        decomposition_classes=empty(),
        capacity=empty(),
        service_scenarios=empty(),
        service_classes=empty(),
        paper_matches=empty(),
        paper_scenarios=empty(),
        paper_classes=empty(),
        paper_correlations=empty(),
        paper_depth=empty(),
        paper_kex=empty(),
        metadata=metadata(data, summ),
    )


def _lab(data: StoreData) -> Analysis:
    cfg = data.config
    summ = summary.scenario_summary(data)
    if summ.empty:
        summ = pd.DataFrame(columns=["scenario_id", "status", "placement_class"])
    mc = compare.MonteCarlo(summ, cfg, data.latencies_ms)
    baseline, note = compare.baseline_status(summ, cfg)
    net = network.analyze(data, summ, mc, baseline)
    ref_net = network.reference_network(summ, baseline)
    # Statistics over several scenarios compare like with like: one network's scenarios.
    rsumm = on_network(summ, ref_net)
    mult = compare.multipliers(summ, mc, baseline)
    rank = network.network_rank(net.profiles) if net is not None else None
    pairs = compare.find_pairs(summ, data.campaigns, mc, rank)
    table7 = compare.class_table(rsumm, mc, baseline, "table7")
    corr = correlations.correlations(rsumm, cfg)
    cap = capacity.per_scenario(rsumm, mc, baseline)
    matches = paper.match_table1(rsumm)
    load_steps = load_capacity.steps_frame(data, cfg.confidence_level)
    # The derived capacity of every scenario with load steps, whatever its network.
    all_cap = capacity.per_scenario(summ, mc, baseline) if len(load_steps) else cap
    a = Analysis(
        data=data,
        config=cfg,
        baseline=baseline,
        baseline_note=note,
        summary=summ,
        failures=summary.failures_table(data, summ),
        exposure=summary.chain_exposure(data),
        multipliers=mult,
        strategy=compare.strategy_matrix(summ, mult, baseline),
        classes=compare.class_table(rsumm, mc, baseline, "exclusive"),
        table7=table7,
        pairs=pairs,
        correlations=corr,
        counterexamples=correlations.counterexamples(rsumm, cfg),
        decomposition=decomposition.per_scenario(rsumm),
        decomposition_classes=decomposition.per_class(rsumm, mc),
        capacity=cap,
        service_scenarios=capacity.service_classes_per_scenario(cap, cfg),
        service_classes=capacity.service_classes_per_class(rsumm, mc, baseline),
        paper_matches=matches,
        paper_scenarios=paper.compare_scenarios(rsumm, mult, baseline, matches),
        paper_classes=paper.compare_classes(table7, cfg.heavy_family),
        paper_correlations=paper.compare_correlations(corr, cfg.heavy_family),
        paper_depth=paper.compare_depth(pairs, matches),
        paper_kex=paper.compare_kex(pairs, matches),
        metadata=metadata(data, summ),
        reference_network=ref_net,
        network=net,
        load_steps=load_steps,
        host_speed=(host := load_capacity.host_speed(data)),
        load_capacity=load_capacity.capacity_frame(load_steps, summ, all_cap, cfg, host),
    )
    model = cost_model.model_of(data.primitives)
    a.cost_model = cost_model.per_scenario(
        summ, model, cost_model.profiles_of(data.network_profiles), cfg.confidence_level
    )
    a.primitives = cost_model.primitives_table(data.primitives, cfg.confidence_level)
    a.compression = compression.per_scenario(summ, data.primitives, cfg.confidence_level)
    a.compression_verdicts = compression.verdicts(a.compression)
    a.resumption = resumption.per_scenario(summ, cfg.confidence_level)
    a.intermediates = intermediates.per_pair(
        summ, net.projection if net is not None else None, cfg.confidence_level
    )
    a.client_auth = client_auth.per_pair(summ, data.observed_client_chain, cfg.confidence_level)
    a.quic = quic.per_pair(summ, net.projection if net is not None else None, cfg.confidence_level)
    a.mtc = mtc.per_pair(
        summ, net.projection if net is not None else None, a.load_capacity, cfg.confidence_level
    )
    a.mtc_proofs = mtc.proofs(summ)
    a.stacks = stacks.per_pair(summ, cfg.confidence_level)
    a.stack_orderings = stacks.orderings(summ, cfg.confidence_level)
    a.stack_cost_split = stacks.cost_split(summ)
    a.by_position = by_position.ranking(summ)
    a.by_position_best = by_position.best(a.by_position)
    a.rollout_kinds = rollout.by_kind(data.rollout_attempts, cfg.confidence_level)
    a.rollout_load_kinds = rollout.load_by_kind(
        data.rollout_load, a.load_steps, cfg.confidence_level
    )
    a.rollout_shares = rollout.per_share(summ, a.load_steps, a.load_capacity)
    a.rollout_rule = rollout.rollback(a.rollout_shares)
    a.findings = findings(a)
    return a


def _stacks(engine_info: dict) -> list[tuple[str, str]]:
    """The other TLS stacks the run used, with their builds (runs.engine_info's `stacks`)."""
    out = []
    for stack, info in sorted((engine_info or {}).get("stacks", {}).items()):
        if "openssl_build" in info:
            b = info["openssl_build"]
            build = f"OpenSSL {b.get('openssl_version')}, patch set {b.get('patch_sha256_16')}"
        else:
            build = ", ".join(f"{k} {v}" for k, v in sorted(info.get("build", {}).items()))
        out.append((f"stack {stack}", build))
    return out


def _hosts(data: StoreData) -> list[tuple[str, str]]:
    """Where the scenarios ran (scenario_runs.host, stores from version 4): the hosts with
    their scenario counts, and a warning when they are of different machine types."""
    scen = pd.concat([data.scenarios, data.targets], ignore_index=True)
    if scen.empty or "host" not in scen:
        return []
    hosts = [parse_json(h) for h in scen["host"] if isinstance(h, str)]
    if not hosts:
        return []
    counts: dict[str, int] = {}
    types = set()
    for h in hosts:
        name = f"{h.get('hostname')} ({h.get('executor')}" + (
            f", worker {h['worker']})" if h.get("worker") else ")"
        )
        counts[name] = counts.get(name, 0) + 1
        types.add(tuple(h.get(k) for k in summary.MACHINE_TYPE))
    rows = [("scenario hosts", ", ".join(f"{n}: {c}" for n, c in sorted(counts.items())))]
    if len(types) > 1:
        rows.append(
            (
                "warning",
                f"scenarios ran on {len(types)} machine types ("
                + "; ".join(", ".join(str(x) for x in t) for t in sorted(types, key=str))
                + "): a comparison across them compares machines too (scenario_runs.host "
                "says which ran where)",
            )
        )
    return rows


def _libraries(versions: dict) -> str:
    if not versions:
        return "not recorded (a store of schema version 1, or a synthetic one)"
    return ", ".join(f"{k} {v}" for k, v in versions.items())


def metadata(data: StoreData, summ: pd.DataFrame) -> list[tuple[str, str]]:
    """(field, value) rows describing where and how the store's numbers were measured."""
    runs = data.runs
    last = runs.iloc[-1]
    machine = parse_json(last["machine"])
    options = parse_json(last["options"])
    rows = [
        ("store", data.path.name),
        ("campaign file", f"{data.campaign_name} (sha256 {data.campaign_sha256})"),
    ]
    if len(data.campaign_hashes) > 1:
        rows.append(
            (
                "warning",
                f"runs used {len(data.campaign_hashes)} different campaign files; "
                "settings come from the latest run's",
            )
        )
    for _, r in runs.iterrows():
        ended = r["ended_at"] if pd.notna(r["ended_at"]) else "not ended"
        rows.append(("run", f"{r['run_id']}: {r['status']}, {r['started_at']} → {ended} (UTC)"))
    commit = last["chainlab_commit"] if isinstance(last["chainlab_commit"], str) else "not in git"
    rows += [
        ("chainlab (measuring)", f"{last['chainlab_version']}, commit {commit}"),
        ("OpenSSL", f"{last['openssl_version']}, patch set {last['openssl_patch_sha']}"),
        *_stacks(parse_json(last.get("engine_info"))),
        ("machine", ", ".join(f"{k} {v}" for k, v in machine.items()) or "not recorded"),
        ("run options", ", ".join(f"{k} {v}" for k, v in options.items()) or "none"),
        ("libraries (run)", _libraries(parse_json(last.get("libraries")))),
        ("libraries (this report)", _libraries(libraries())),
    ]
    if not summ.empty and "n_measured" in summ:
        ok = summ[summ["status"] == "ok"]
        rows += [
            (
                "scenarios",
                f"{len(summ)} executed, {len(ok)} analysed, {len(summ) - len(ok)} failed",
            ),
            (
                "handshakes",
                f"{int(summ['n_measured'].sum()):,} measured ({int(summ['n_ok'].sum()):,} ok, "
                f"{int(summ['n_failed'].sum()):,} failed), "
                f"{int(summ['n_warmup'].sum()):,} warm-up not counted",
            ),
        ]
    rows += _hosts(data)
    if data.not_run:
        rows.append(
            (
                "not run",
                f"{len(data.not_run)} scenario(s) registered but never executed (an "
                "interrupted run?): " + ", ".join(data.not_run),
            )
        )
    return rows
