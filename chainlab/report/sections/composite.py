"""Composite ML-DSA by position: what a composite signature costs at the root, the
intermediate, the leaf or every position against the pure ML-DSA hierarchy, and which
placement gives its conservatism (a traditional component that must also verify) for the
least cost."""

from __future__ import annotations

from chainlab.analysis.composite import METRICS
from chainlab.analysis.families import family
from chainlab.report.builder import Builder, ci
from chainlab.report.document import Section
from chainlab.report.sections.registry import section


def _ratio(r: dict, col: str) -> str:
    return f"{r[f'{col}_ratio']:.2f}x [{r[f'{col}_ratio_lo']:.2f}, {r[f'{col}_ratio_hi']:.2f}]"


def holds_composite(b: Builder) -> bool:
    """a composite algorithm in some scenario's hierarchy (the section's `applies`)"""
    return any(family(a) == "composite" for a in b.a.data.algorithms())


def headline(b: Builder) -> list[tuple[str, str]]:
    """Per network and stack: the composite placement of least latency against the pure
    ML-DSA hierarchy, with its intervals."""
    best = b.a.composite_cheapest
    out = []
    for r in best.to_dict("records"):
        tie = "" if r["clear"] else f", tied with {r['runner_up']}" if r["runner_up"] else ""
        out.append(
            (
                "Where does a composite ML-DSA signature buy its conservatism for the least "
                f"cost ({r['stack']}, {r['network']}, depth {r['depth']})?",
                f"{r['placement']}: latency {_ratio(r, 'mean_ms')}, server CPU "
                f"{_ratio(r, 'server_cpu_ms')}, client CPU {_ratio(r, 'client_cpu_ms')} of "
                f"the pure ML-DSA hierarchy's{tie}",
            )
        )
    return out


@section(173, headline=headline, applies=holds_composite)
def build(b: Builder) -> Section | None:
    table = b.a.composite_placements
    if table.empty:
        return None
    s = Section("composite", "Composite ML-DSA by position")
    s.blocks.append(
        "A composite signature (draft-ietf-lamps-pq-composite-sigs: an ML-DSA and a "
        "traditional component, both of which must verify) at the root, the intermediate, "
        "the leaf or every position of a hierarchy, beside the other placements of the same "
        "context (an SLH-DSA root, ECDSA throughout), each read against the hierarchy of "
        "pure ML-DSA at every position in that context (key exchange, network, stack, "
        f"depth), over full handshakes: ratios of means with their {b.level} intervals. "
        "A composite operation costs its two components' and the pre-hash of M' "
        "(docs/methods/families.md#composite)."
    )
    cols = [
        ("network", list(table["network"])),
        ("stack", list(table["stack"])),
        ("depth", [str(int(d)) for d in table["depth"]]),
        ("placement", list(table["placement"])),
        ("composite at", [x or "none" for x in table["composite_positions"]]),
    ]
    for col, name in METRICS:
        cols.append((f"{name} / pure ML-DSA", ci(table, f"{col}_ratio", 3)))
    s.blocks.append(
        b.table(
            "composite_placements",
            "What each placement costs against pure ML-DSA",
            "Per placement, each measure's mean over the pure ML-DSA hierarchy's of the same "
            "context, with its interval; composite placements first, least latency first.",
            table,
            cols,
        )
    )
    best = b.a.composite_cheapest
    for r in best.to_dict("records"):
        verdict = (
            "its interval lies wholly below the runner-up's"
            if r["clear"]
            else f"its interval overlaps {r['runner_up']}'s"
            if r["runner_up"]
            else "the only composite placement measured"
        )
        s.blocks.append(
            f"{r['stack']}, {r['network']}, depth {r['depth']}: the least-latency composite "
            f"placement is {r['placement']} (latency {_ratio(r, 'mean_ms')} of pure "
            f"ML-DSA's; {verdict})."
        )
    return s
