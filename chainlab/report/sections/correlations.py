"""Transport versus cryptography: correlations and counterexamples."""

from __future__ import annotations

from chainlab.report import format as f
from chainlab.report.builder import Builder, ci, codes, ints
from chainlab.report.document import Section
from chainlab.report.sections.registry import placement_study, section

# Rows shown in Markdown/HTML for the long counterexample table (the CSV has all).
COUNTEREXAMPLES_SHOWN = 10


@section(90, applies=placement_study)
def build(b: Builder) -> Section:
    a, s = b.a, Section("correlations", "Transport versus cryptography")
    s.blocks.append(b.ref_note())
    c = a.correlations
    if c.empty:
        s.blocks.append("No successful scenario.")
        return s
    s.blocks.append(
        "Correlation over scenarios of mean latency with mean bytes read and with the "
        "observed chain size, for all scenarios and split by whether the heavy family is "
        "in the leaf. Pearson: Fisher z interval; Spearman: Fisher z with the "
        "Bonett-Wright standard error (docs/methods/statistics.md#correlations). Intervals need ≥ "
        "4 scenarios."
    )
    cols = [
        ("subset", list(c["subset"])),
        ("n", ints(c["n_scenarios"])),
        ("metric", list(c["metric_label"])),
        ("Pearson r", ci(c, "pearson_r")),
        ("Spearman ρ", ci(c, "spearman_rho")),
        ("note", list(c["note"])),
    ]
    s.blocks.append(
        b.table("correlations", "Transport-versus-latency correlations", "Paper Table 8.", c, cols)
    )
    s.blocks.append(
        b.figure(
            "bytes_vs_latency",
            "Paper Figure 10.",
        )
    )
    s.blocks.append(
        b.figure(
            "chain_vs_latency",
            "Paper Figure 11.",
        )
    )
    ce = a.counterexamples
    if ce.empty:
        s.blocks.append(
            "No counterexample: no scenario that moves more bytes is "
            "significantly faster than one that moves fewer."
        )
    else:
        shown = ce[ce["rank"] <= COUNTEREXAMPLES_SHOWN]
        n_by = ce.groupby("metric").size().to_dict()
        note = (
            "; ".join(f"{k}: {v} pair(s)" for k, v in n_by.items())
            + f"; the first {COUNTEREXAMPLES_SHOWN} per metric are shown, all in "
            "tables/counterexamples.csv."
        )
        cols = [
            ("metric", list(shown["metric"])),
            ("rank", ints(shown["rank"])),
            ("more bytes, lower latency", codes(shown["more_bytes_lower_latency"])),
            ("fewer bytes, higher latency", codes(shown["less_bytes_higher_latency"])),
            (
                "bytes",
                [
                    f"{f.integer(x)} vs {f.integer(y)}"
                    for x, y in zip(shown["more_bytes"], shown["less_bytes"], strict=True)
                ],
            ),
            (
                "latency ms",
                [
                    f"{f.num(x)} vs {f.num(y)}"
                    for x, y in zip(
                        shown["lower_latency_ms"], shown["higher_latency_ms"], strict=True
                    )
                ],
            ),
            ("latency ratio higher/lower", ci(shown, "latency_ratio")),
        ]
        s.blocks.append(
            b.table(
                "counterexamples",
                "Counterexamples to wire-size-only explanations",
                "Paper Table 9: ordered pairs where the first scenario moves more bytes yet "
                "is faster, with the latency ratio's interval above 1; ranked by byte "
                "difference.",
                ce,
                cols,
                note=note,
            )
        )
    return s
