"""Signature families by position: every algorithm ranked at each position of a hierarchy
(latency, server CPU, client CPU, bytes), and which family is best where."""

from __future__ import annotations

from chainlab.analysis.by_position import METRICS
from chainlab.analysis.families import FAMILY_DISPLAY
from chainlab.report.builder import Builder, ci, ci_of, codes, ints
from chainlab.report.document import Section
from chainlab.report.sections.registry import section


def headline(b: Builder) -> list[tuple[str, str]]:
    """Per network, stack and base hierarchy: the least-latency algorithm at each position,
    where every lever is at its default (the section's table has the other contexts)."""
    best = b.a.by_position_best
    if best.empty:
        return []
    best = best[best["levers"] == ""]
    out = []
    for (net, stack, base), g in best.groupby(["network", "stack", "base"], sort=True):
        parts = [
            f"{r['position_name']}: {r['best_mean_ms']} "
            f"({FAMILY_DISPLAY.get(r['best_mean_ms_family'], r['best_mean_ms_family'])}, "
            f"{ci_of(r, 'mean_ms')} ms{'' if r['clear'] else ', tied'})"
            for r in g.to_dict("records")
        ]
        out.append(
            (
                f"Which signature is fastest at each position of a {base} hierarchy "
                f"({stack}, {net})?",
                "; ".join(parts),
            )
        )
    return out


@section(172, headline=headline)
def build(b: Builder) -> Section | None:
    ranked, best = b.a.by_position, b.a.by_position_best
    if ranked.empty:
        return None
    s = Section("by_position", "Signature families by position")
    s.blocks.append(
        "Each algorithm at one position of a hierarchy whose other positions hold one "
        "algorithm (the base), against that uniform hierarchy and the other algorithms at the "
        "same position, in the same context (key exchange, network, stack, levers), over full "
        "handshakes (a resumed one carries no certificate). Means per "
        f"handshake with {b.level} intervals; ranks: 1 is the least. Best: the least latency; "
        "'tied' where its interval overlaps the runner-up's "
        "(docs/methods/families.md#families-by-position)."
    )
    if not best.empty:
        cols = [
            ("network", list(best["network"])),
            ("stack", list(best["stack"])),
            *(
                [("levers", [x or "defaults" for x in best["levers"]])]
                if (best["levers"] != "").any()
                else []
            ),
            ("base", list(best["base"])),
            ("position", list(best["position_name"])),
            ("candidates", ints(best["candidates"])),
        ]
        for col, name in METRICS:
            cols.append((f"least {name}", list(best[f"best_{col}"])))
            cols.append(
                (
                    f"{name}",
                    ci(best, col, 0) if col == "bytes_read" else ci(best, col, 3),
                )
            )
        cols.append(("clear", ["yes" if c else "tied" for c in best["clear"]]))
        s.blocks.append(
            b.table(
                "by_position_best",
                "Which family is best at which position",
                "Per position the algorithm with the least mean of each measure, with the "
                "mean and its interval (latency in ms, CPU in ms per handshake, bytes the "
                "client read); clear: the least latency's interval lies below the runner-up's.",
                best,
                cols,
            )
        )
    s.blocks.append(
        b.table(
            "by_position",
            "Every algorithm at each position, ranked",
            "Ranks by each measure within the position's candidates (1 = least).",
            ranked,
            [
                ("scenario", codes(ranked["scenario_id"])),
                ("network", list(ranked["network"])),
                ("position", list(ranked["position_name"])),
                ("algorithm", list(ranked["algorithm"])),
                (
                    "family",
                    [FAMILY_DISPLAY.get(f, f) for f in ranked["family"]],
                ),
                ("latency ms", ci(ranked, "mean_ms", 3)),
                ("rank", ints(ranked["rank_latency"])),
                ("server CPU ms", ci(ranked, "server_cpu_ms", 3)),
                ("server rank", ints(ranked["rank_server_cpu_ms"])),
                ("client CPU ms", ci(ranked, "client_cpu_ms", 3)),
                ("client rank", ints(ranked["rank_client_cpu_ms"])),
                ("bytes read", ci(ranked, "bytes_read", 0)),
                ("bytes rank", ints(ranked["rank_bytes_read"])),
            ],
        )
    )
    return s
