"""Paired comparisons: scenarios that differ along exactly one axis."""

from __future__ import annotations

import math

from chainlab.analysis.compare import pair_axes
from chainlab.report import format as f
from chainlab.report.builder import Builder, ci, ci_of, codes, instr_columns, instr_sources, nums
from chainlab.report.document import Section
from chainlab.report.sections.registry import section


def headline(b: Builder) -> list[tuple[str, str]]:
    p = b.a.pairs
    if p.empty or "latency_ratio" not in p:
        return []
    effect = (p["latency_ratio"].astype(float)).apply(lambda x: abs(math.log(x)) if x > 0 else 0)
    top = p.loc[effect.sort_values(kind="stable").index[-1]]
    return [
        (
            "Which single change moves latency most?",
            f"{top['axis_label']} `{top['from_value']}` → `{top['to_value']}` "
            f"(`{top['from_id']}` → `{top['to_id']}`): latency × "
            f"{ci_of(top, 'latency_ratio')} ({len(p)} pair(s) differ along one axis)",
        )
    ]


@section(80, headline=headline)
def build(b: Builder) -> Section:
    a, s = b.a, Section("pairs", "Paired comparisons")
    p = a.pairs
    s.blocks.append(
        "Pairs of successful scenarios that differ along exactly one axis, found in the "
        "matrix: one algorithm position, the whole-hierarchy algorithm (uniform "
        "hierarchies, the paper's Campaign A), depth (root and leaf kept; intermediates "
        "added; the served-chain policy may change with the topology, which the context "
        "says), key exchange, served chain, handshake mode, compression or network. "
        "Ratios are to / from with log-scale delta intervals (p95: exact bootstrap). "
        "'campaigns' lists the campaigns holding both scenarios."
    )
    if p.empty:
        s.blocks.append("No two successful scenarios differ along exactly one axis.")
        return s
    if sources := instr_sources(a):
        s.blocks.append(
            "Instructions per handshake (each side's user-mode instructions over the same "
            "span as its CPU; docs/methods/instructions.md#instructions-per-handshake) from "
            f"{sources}. Instruction ratios do "
            "not move with the host's speed or steal; 'CPU ≠ instr' names the sides whose "
            "CPU and instruction ratios disagree beyond their intervals (a host effect on "
            "the CPU, or work the instructions do not weigh alike, such as memory stalls)."
        )
    for axis in pair_axes():
        g = p[p["axis"] == axis]
        if g.empty:
            continue
        sub = Section(f"pairs-{axis}", f"Along {pair_axes()[axis]}")
        cols = [
            ("from", codes(g["from_id"])),
            ("to", codes(g["to_id"])),
            (
                "change",
                [f"{x} → {y}" for x, y in zip(g["from_value"], g["to_value"], strict=True)],
            ),
            ("held fixed", list(g["context"])),
            ("campaigns", list(g["campaigns"])),
            (
                "mean ms from → to",
                [
                    f"{f.num(x)} → {f.num(y)}"
                    for x, y in zip(g["from_mean_ms"], g["to_mean_ms"], strict=True)
                ],
            ),
            ("latency ratio", ci(g, "latency_ratio")),
            ("p95 ratio", ci(g, "p95_ratio")),
            ("Δ bytes read", nums(g["delta_bytes_read"], 4)),
            ("Δ chain bytes", nums(g["delta_chain_bytes"], 4)),
            ("bytes read ratio", ci(g, "bytes_read_ratio")),
            ("server CPU ratio", ci(g, "server_cpu_ratio")),
            ("client CPU ratio", ci(g, "client_cpu_ratio")),
            # Where the store counted instructions: the same ratios in instructions.
            *instr_columns(g),
            # Scenarios of a cluster run on different machine types compare machines too.
            *(
                [("machines", ["differ" if d else "" for d in g["machines_differ"]])]
                if g["machines_differ"].any()
                else []
            ),
        ]
        sub.blocks.append(
            b.table(
                f"pairs_{axis}",
                f"Pairs along {pair_axes()[axis]}",
                "Ratios to / from; Δ = to − from.",
                g,
                cols,
            )
        )
        sub.blocks.append(
            b.figure(
                "pairs",
                "Left: the two means; right: the latency ratio with "
                "its interval (red: higher, blue: lower, grey: not "
                "distinguishable).",
                axis,
                name=f"pairs_{axis}",
            )
        )
        s.blocks.append(sub)
    b.csv_only("pairs_all", p)
    return s
