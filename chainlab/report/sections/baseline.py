"""Relative to the baseline: multipliers, plausibility, the strategy matrix."""

from __future__ import annotations

import pandas as pd

from chainlab.report import format as f
from chainlab.report.builder import Builder, ci, ci_of, codes, ints, nums
from chainlab.report.document import Section
from chainlab.report.sections.registry import section


def headline(b: Builder) -> list[tuple[str, str]]:
    m = b.a.multipliers
    if m.empty or "latency_x" not in m:
        return []
    others = m[m["scenario_id"] != b.a.baseline]
    if others.empty:
        return []
    worst = others.sort_values(["latency_x", "scenario_id"]).iloc[-1]
    classes = m["plausibility"].value_counts()
    return [
        (
            "How far from the baseline is the slowest scenario, and how plausible is each?",
            f"`{worst['scenario_id']}` at {ci_of(worst, 'latency_x')}× the baseline's mean "
            f"latency ({worst['plausibility']}); of {len(m)} scenario(s): "
            + ", ".join(f"{n} {c}" for c, n in classes.items())
            + b.setting(m["scenario_id"]),
        )
    ]


@section(60, headline=headline)
def build(b: Builder) -> Section:
    a, s = b.a, Section("baseline", "Relative to the baseline, plausibility, strategy")
    s.blocks.append(a.baseline_note)
    m = a.multipliers
    if m.empty:
        return s
    if "baseline_id" in m:
        ok = a.summary[a.summary["status"] == "ok"]
        missing = sorted(set(ok["scenario_id"]) - set(m["scenario_id"]))
        s.blocks.append(
            "Like with like (docs/methods/networks.md#emulated-networks): a scenario on another "
            "network than the "
            f"baseline's (`{a.reference_network}`) is compared with the baseline's "
            "counterpart on its own network (the same scenario apart from the network), "
            "named in the 'relative to' column, so a multiplier never mixes a network's "
            "round trips into a comparison of hierarchies."
            + (
                " No counterpart was measured for, so no multiplier is shown for: "
                + ", ".join(f"`{x}`" for x in missing)
                + "."
                if missing
                else ""
            )
        )
    bounds = b.cfg.plausibility
    s.blocks.append(
        "Plausibility classes from the mean-latency multiplier vs the baseline: "
        f"**Reasonable** ≤ {bounds['reasonable']:g}×, **Penalized but plausible** ≤ "
        f"{bounds['penalized']:g}×, **Operationally problematic** ≤ {bounds['problematic']:g}×, "
        "above that **Unsuitable for interactive front-end** (thresholds: "
        f"`[analysis.plausibility]`, source: {b.cfg.sources.get('plausibility')}). "
        "'certain' says whether the whole interval lies in the class. Ratios of means use "
        "the log-scale delta method; the p95 ratio an exact order-statistic bootstrap "
        f"(B = {b.cfg.bootstrap_resamples}) (docs/methods/statistics.md#ratios-between-scenarios, "
        "#quantile-ratios)."
    )
    cols = [
        ("scenario", codes(m["scenario_id"])),
        *([("relative to", codes(m["baseline_id"]))] if "baseline_id" in m else []),
        ("class", [b.cls_name(c) for c in m["placement_class"]]),
        ("latency ×", ci(m, "latency_x")),
        ("p95 ×", ci(m, "p95_x")),
        ("bytes read ×", ci(m, "bytes_read_x")),
        ("server CPU ×", ci(m, "server_cpu_x")),
        ("client CPU ×", ci(m, "client_cpu_x")),
        # Where the store counted instructions: the same multipliers in instructions.
        *(
            [
                ("server instr ×", ci(m, "server_instr_x")),
                ("client instr ×", ci(m, "client_instr_x")),
                ("CPU ≠ instr", list(m["instr_disagrees"])),
            ]
            if "server_instr" in a.summary and a.summary["server_instr"].notna().any()
            else []
        ),
        ("plausibility", list(m["plausibility"])),
        ("certain", [f.yes_no(x) for x in m["plausibility_certain"]]),
    ]
    s.blocks.append(
        b.table(
            "baseline_multipliers",
            "Baseline multipliers",
            f"Scenario / baseline for each metric, {b.level} intervals.",
            m,
            cols,
        )
    )
    s.blocks.append(
        b.figure(
            "plausibility",
            "Paper Figure 5, for every scenario: latency relative to "
            "the baseline with the class bands.",
        )
    )
    st = a.strategy if a.placement_study else pd.DataFrame()
    if len(st) > 1:
        s.blocks.append(
            "The strategy matrix (paper Campaign B, Tables 3-4): the scenarios that share "
            "the baseline's key exchange, depth, served-chain policy, handshake mode, "
            "compression and network, so they differ only in the hierarchy's algorithms."
        )
        cols = [
            ("rank", ints(st["plausibility_rank"])),
            ("scenario", codes(st["scenario_id"])),
            ("hierarchy", list(st["hierarchy"])),
            (f"{b.h} positions", list(st["heavy_positions"])),
            ("mean ms", nums(st["mean_ms"])),
            ("latency ×", ci(st, "latency_x")),
            ("bytes read ×", ci(st, "bytes_read_x")),
            ("server CPU ×", ci(st, "server_cpu_x")),
            ("plausibility", list(st["plausibility"])),
        ]
        s.blocks.append(
            b.table(
                "strategy_matrix",
                "Strategy matrix",
                "Rank = plausibility class (1-4), as in the paper's Table 4.",
                st,
                cols,
            )
        )
        s.blocks.append(
            b.figure(
                "strategy_matrix",
                "Paper Figure 4: multipliers vs the baseline, log "
                "colour scale (red: more than the baseline).",
            )
        )
    return s
