"""Everything the report shows, from a store: `analyze(path) -> Analysis`, whose analyses
(chainlab.analysis.registry) are each computed when first asked for and then kept. Importing
this module registers every analysis module's.

The analysis is generic over any campaign: it never assumes the paper's scenarios. Usage
from a notebook:

    from chainlab.analysis.analyze import analyze
    a = analyze("results/signature-placement.duckdb")
    a.summary            # per-scenario statistics with intervals
    a.pairs              # paired comparisons found in the matrix
    a.computed           # the analyses that ran so far
"""

from __future__ import annotations

import importlib
import pkgutil

import pandas as pd

import chainlab.analysis
from chainlab.analysis import summary
from chainlab.analysis.load import StoreData, load_store, parse_json
from chainlab.analysis.registry import Analysis, produces
from chainlab.campaign.analysis_settings import AnalysisConfig
from chainlab.machine import libraries

# Each module of the package registers the analyses it produces (chainlab.analysis.registry),
# as each report section registers itself (chainlab.report.sections).
for _info in pkgutil.iter_modules(chainlab.analysis.__path__):
    importlib.import_module(f"chainlab.analysis.{_info.name}")


def analyze(path, config: AnalysisConfig | None = None, **overrides) -> Analysis:
    """The analyses of the store at `path`, each computed when first asked for. `config`
    replaces the campaign file's settings; `overrides` (e.g. baseline=...,
    price_per_vcpu_hour=...) change single settings."""
    data = load_store(path, config)
    if overrides:
        data.config = data.config.replace(**overrides)
    return analyze_data(data)


def analyze_data(data: StoreData) -> Analysis:
    """The analyses of a store's loaded frames (chainlab.analysis.registry.Analysis)."""
    return Analysis(data)


@produces("metadata", probes=True)
def _analysis_metadata(a) -> list[tuple[str, str]]:
    return metadata(a.data, a.summary)


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
