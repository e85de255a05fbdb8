"""Scenario summary: latency statistics, failures, figure labels."""

from __future__ import annotations

from chainlab.report import format as f
from chainlab.report.builder import Builder, ci, ci_of, codes, ints
from chainlab.report.document import Section
from chainlab.report.sections.registry import section


def headline(b: Builder) -> list[tuple[str, str]]:
    sm = b.a.summary
    if sm.empty or "mean_ms" not in sm:
        return []
    ok = sm[sm["status"] == "ok"].sort_values(["mean_ms", "scenario_id"])
    done = f"{len(ok)} of {len(sm)} scenario(s) succeeded"
    if len(ok) < 2:
        return []  # nothing to compare
    fast, slow = ok.iloc[0], ok.iloc[-1]
    return [
        (
            "Which scenario is fastest, and which slowest?",
            f"fastest `{fast['scenario_id']}` {ci_of(fast, 'mean_ms')} ms, slowest "
            f"`{slow['scenario_id']}` {ci_of(slow, 'mean_ms')} ms (mean latency; {done})"
            + b.setting(ok["scenario_id"]),
        )
    ]


@section(20, headline=headline)
def build(b: Builder) -> Section:
    a, s = b.a, Section("scenarios", "Scenario summary")
    sm = a.summary
    if sm.empty or "mean_ms" not in sm:
        s.blocks.append("The store holds no executed scenario.")
        return s
    n_fail = int((sm["status"] != "ok").sum())
    s.blocks.append(
        f"{len(sm)} scenario(s) executed, {len(sm) - n_fail} analysed, {n_fail} failed. "
        "Latency is `total_ns` (TCP connect + TLS handshake) of measured (not warm-up) "
        "handshakes with outcome `ok`; failed handshakes are counted, never averaged in. "
        "Means have Student-t intervals; median/p95/p99 are nearest-rank order statistics "
        "with distribution-free order-statistic intervals "
        "(docs/methods/statistics.md#per-scenario-statistics)."
    )
    cols = [
        ("scenario", codes(sm["scenario_id"])),
        ("hierarchy", list(sm["hierarchy"])),
        ("kex", list(sm["kex"])),
        *([("network", codes(sm["network"]))] if b.several_networks else []),
        # Where each ran, when the scenarios ran on several hosts (a cluster).
        *([("host", list(sm["host"]))] if sm["host"].nunique() > 1 else []),
        ("class", [b.cls_name(c) for c in sm["placement_class"]]),
        ("status", list(sm["status"])),
        ("n ok", ints(sm["n_ok"])),
        ("n failed", ints(sm["n_failed"])),
        ("mean ms", ci(sm, "mean_ms")),
        ("median ms", ci(sm, "median_ms")),
        ("p95 ms", ci(sm, "p95_ms")),
        ("p99 ms", ci(sm, "p99_ms")),
    ]
    s.blocks.append(
        b.table(
            "scenarios",
            "Scenario latency summary",
            "Every column of every scenario is in tables/scenarios.csv "
            "(with `_lo`/`_hi` interval bounds and `_se` log-scale "
            "standard errors).",
            sm,
            cols,
        )
    )
    s.blocks.append(
        b.figure(
            "mean_latency",
            f"Paper Figure 1. Log scale; error bars are {b.level} intervals; "
            "colours are placement classes; the dashed line is the "
            "baseline.",
        )
    )
    s.blocks.append(
        b.figure(
            "p95_latency",
            "Paper Figure 2, with p99 marks added.",
        )
    )
    s.blocks.append(
        b.figure(
            "latency_ecdf",
            "Empirical CDF of each scenario's latency (401 quantiles).",
        )
    )
    fl = a.failures
    if len(fl):
        s.blocks.append(
            b.table(
                "failures",
                "Failures",
                "Failed measured handshakes by scenario and error category (from the samples), "
                "and failed scenarios with their cause (from scenario_runs). Failed scenarios "
                "are excluded from every statistic.",
                fl,
                [
                    ("scenario", codes(fl["scenario_id"])),
                    ("scenario status", list(fl["status"])),
                    ("cause", [x if isinstance(x, str) else "" for x in fl["failure"]]),
                    ("error category", list(fl["error_category"])),
                    ("n", ints(fl["n"])),
                    (
                        "share of measured",
                        [f.num(x * 100, 3) + " %" if x == x else "n/a" for x in fl["share"]],
                    ),
                    (
                        "example",
                        [x if isinstance(x, str) else "" for x in fl["example_detail"]],
                    ),
                ],
            )
        )
    else:
        s.blocks.append("No measured handshake failed.")
    lab = sm[["scenario_id", "label_chain", "label_kex"]]
    s.blocks.append(
        b.table(
            "labels",
            "Figure labels",
            "Figures label scenarios by hierarchy (root › "
            "intermediates › leaf, short algorithm names) and, on a second line, key exchange "
            "plus whatever else varies in this store.",
            lab,
            [
                ("scenario", codes(lab["scenario_id"])),
                ("label line 1", list(lab["label_chain"])),
                ("label line 2", list(lab["label_kex"])),
            ],
        )
    )
    return s
