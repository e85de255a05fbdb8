"""Comparison with the paper's published tables."""

from __future__ import annotations

from chainlab.analysis.paper import SOURCE
from chainlab.report import format as f
from chainlab.report.builder import Builder, codes, paper_vs
from chainlab.report.document import Section
from chainlab.report.sections.registry import placement_study, section


def headline(b: Builder) -> list[tuple[str, str]]:
    ps = b.a.paper_scenarios
    if ps.empty:
        return []
    matched = ps[ps["chainlab_scenario_id"] != ""]
    if matched.empty:
        return [
            (
                "How do these figures compare with the paper's?",
                "no scenario matches one of the paper's Table 1",
            )
        ]
    diff = matched["mean_ms_diff_pct"].dropna()
    inside = int(matched["mean_ms_paper_inside_ci"].fillna(False).astype(bool).sum())
    return [
        (
            "How do these figures compare with the paper's?",
            f"{len(matched)} scenario(s) match the paper's Table 1; mean latency differs from "
            f"the paper's by a median {f.pct(diff.median()) if len(diff) else 'n/a'} (from "
            f"{f.pct(diff.min()) if len(diff) else 'n/a'} to "
            f"{f.pct(diff.max()) if len(diff) else 'n/a'}); the paper's value lies in this "
            f"store's interval for {inside}",
        )
    ]


@section(210, headline=headline, applies=placement_study)
def build(b: Builder) -> Section:
    a, s = b.a, Section("paper", "Comparison with the paper")
    s.blocks.append(b.ref_note())
    ps = a.paper_scenarios
    s.blocks.append(
        f"The paper's published values ({SOURCE}; kept in chainlab/data with their "
        "source notes) next to this store's, wherever a scenario matches by id (ignoring "
        "repeated underscores) or by structure (key exchange, depth, family per "
        "position, full handshake, no compression). Differences are shown, not "
        "explained away: the paper used OpenSSL 3 + oqsprovider on bare metal and "
        "reports no intervals; 'paper in CI' says whether its value lies inside this "
        f"store's {b.level} interval (with thousands of samples that interval is narrow, so "
        "'no' is the expected answer across machines)."
    )
    matched = (ps["chainlab_scenario_id"] != "").sum() if len(ps) else 0
    if matched == 0:
        s.blocks.append(
            "No scenario of this store matches one of the paper's Table 1; "
            "the paper's values are in chainlab/data/paper_table1.csv."
        )
        b.csv_only("paper_scenarios", ps)
        return s

    def pair(ours, theirs, digits=3):
        return [
            f"{f.num(p, digits)} | {f.ci(v, lo, hi, digits)} ({f.pct(d)})"
            if v == v
            else f"{f.num(p, digits)} | n/a"
            for p, v, lo, hi, d in zip(
                ps[theirs],
                ps[ours],
                ps[f"{ours}_lo"],
                ps[f"{ours}_hi"],
                ps[f"{ours}_diff_pct"],
                strict=True,
            )
        ]

    cols = [
        ("paper scenario", codes(ps["paper_scenario_id"])),
        ("chainlab scenario", codes(ps["chainlab_scenario_id"])),
        ("match", list(ps["match"])),
        ("mean ms: paper | chainlab (diff)", pair("mean_ms", "paper_mean_ms")),
        ("p95 ms", pair("p95_ms", "paper_p95_ms")),
        ("bytes read", pair("bytes_read", "paper_bytes_read", 4)),
        ("server CPU ms", pair("server_cpu_ms", "paper_server_cpu_ms")),
        ("client CPU ms", pair("client_cpu_ms", "paper_client_cpu_ms")),
        ("server/client", pair("srv_cli_ratio", "paper_srv_cli_ratio")),
        (
            "latency × baseline: paper | chainlab",
            paper_vs(ps, "paper_latency_x", "latency_x"),
        ),
        ("mean: paper in CI", [f.yes_no(x) for x in ps["mean_ms_paper_inside_ci"]]),
        ("note", list(ps["note"])),
    ]
    s.blocks.append(
        b.table(
            "paper_scenarios",
            "Paper Table 1 (and Table 10's client CPU) versus this store",
            f"Each cell: paper | chainlab [{b.level} CI] (chainlab − paper, % "
            "of paper). The paper's multiplier is against its own row "
            "matching this store's baseline.",
            ps,
            cols,
        )
    )
    s.blocks.append(
        b.figure(
            "paper_vs_chainlab",
            "Matched scenarios; points on the dashed line agree.",
        )
    )
    pc = a.paper_classes
    if len(pc):

        def cmp(col):
            return paper_vs(pc, f"paper_{col}", col)

        cols = [
            ("paper class", list(pc["paper_class"])),
            (
                "n: paper | chainlab",
                [
                    f"{f.integer(p)} | {f.integer(v)}"
                    for p, v in zip(pc["paper_n_scenarios"], pc["n_scenarios"], strict=True)
                ],
            ),
            ("mean ms", cmp("mean_ms")),
            ("mean latency ×", cmp("mean_latency_x")),
            ("median latency ×", cmp("median_latency_x")),
            ("mean bytes ×", cmp("mean_bytes_x")),
            ("mean server CPU ×", cmp("mean_server_cpu_x")),
            ("server CPU/elapsed", cmp("mean_server_over_elapsed")),
            ("client CPU/elapsed", cmp("mean_client_over_elapsed")),
        ]
        s.blocks.append(
            b.table(
                "paper_classes",
                "Paper Table 7 versus this store",
                f"paper | chainlab [{b.level} CI], over each store's own scenarios.",
                pc,
                cols,
            )
        )
    pr = a.paper_correlations
    if len(pr):
        cols = [
            ("subset", list(pr["subset"])),
            ("metric", list(pr["metric"])),
            (
                "n: paper | chainlab",
                [
                    f"{f.integer(p)} | {f.integer(v)}"
                    for p, v in zip(pr["paper_n"], pr["n_scenarios"], strict=True)
                ],
            ),
            (
                "Pearson r: paper | chainlab",
                paper_vs(pr, "paper_pearson_r", "pearson_r"),
            ),
            (
                "Spearman ρ: paper | chainlab",
                paper_vs(pr, "paper_spearman_rho", "spearman_rho"),
            ),
        ]
        s.blocks.append(
            b.table(
                "paper_correlations",
                "Paper Table 8 versus this store",
                "Correlations over each store's own scenarios.",
                pr,
                cols,
            )
        )
    for name, df, title in (
        ("paper_depth", a.paper_depth, "Paper Table 5 (depth) versus this store"),
        ("paper_kex", a.paper_kex, "Paper Table 6 (key exchange) versus this store"),
    ):
        if df.empty:
            continue
        if name == "paper_depth":
            labels = list(df["pair_label"])
        else:
            labels = [
                f"{t.replace('_vs_', ' → ')}: {lab}"
                for t, lab in zip(df["comparison_type"], df["family_label"], strict=True)
            ]
        cols = [
            ("pair", labels),
            (
                "latency ratio: paper | chainlab",
                paper_vs(df, "paper_latency_ratio", "latency_ratio", 4),
            ),
            (
                "server CPU ratio: paper | chainlab",
                paper_vs(df, "paper_server_cpu_ratio", "server_cpu_ratio", 4),
            ),
            ("paper in CI", [f.yes_no(x) for x in df["latency_ratio_paper_inside_ci"]]),
        ]
        if name == "paper_depth":
            cols.insert(
                1,
                (
                    "scenarios (chainlab)",
                    [
                        f"{x} → {y}"
                        for x, y in zip(
                            df["depth2_scenario_id"], df["depth3_scenario_id"], strict=True
                        )
                    ],
                ),
            )
        else:
            cols.insert(
                1,
                (
                    "scenarios (chainlab)",
                    [f"{x} → {y}" for x, y in zip(df["from_id"], df["to_id"], strict=True)],
                ),
            )
        s.blocks.append(b.table(name, title, "A pair not found in this store shows n/a.", df, cols))
    return s
