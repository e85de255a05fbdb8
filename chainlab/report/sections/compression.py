"""Certificate compression, judged against the engineering guide's claim."""

from __future__ import annotations

from chainlab.analysis.compression import guide_claim
from chainlab.report.builder import Builder, ci, ci_of, codes, ints, median_row, nums, percents
from chainlab.report.document import Section
from chainlab.report.sections.registry import section, uses


def headline(b: Builder) -> list[tuple[str, str]]:
    """The guide's compression claim judged, per family, with the median pair's latency."""
    c, v = b.a.compression, b.a.compression_verdicts
    if c.empty or v.empty:
        return []
    r = median_row(c, "latency_ratio")
    out = [
        (
            f"Does compression pay for {x['family']} chains?",
            verdict_text(x),
        )
        for x in v.to_dict("records")
    ]
    out.append(
        (
            "Compression's effect on latency",
            f"latency × {ci_of(r, 'latency_ratio', 4)} for `{r['scenario_id']}` (the median "
            f"of {len(c)} pairs against no compression)",
        )
    )
    return out


@section(120, headline=headline, applies=uses("cert_compression"))
def build(b: Builder) -> Section | None:
    a = b.a
    c = a.compression
    if c.empty:
        return None
    s = Section("compression", "Certificate compression, judged")
    claim = guide_claim()
    v = a.compression_verdicts
    lines = [f"{r['family']} chains: {verdict_text(r)}" for r in v.to_dict("records")]
    s.blocks.append(
        f"The engineering guide (pq-tls-performance-guide.txt, line {claim['line']}): "
        f"“{claim['quote']}” Measured here, the Certificate message of each hierarchy "
        "before and after RFC 8879 compression as the server reported it (full handshakes): "
        + "; ".join(lines)
        + "."
    )
    cols = [
        ("family", list(v["family"])),
        ("hierarchies × algorithms", ints(v["n"])),
        ("saving min", percents(v["saving_min"])),
        ("median", percents(v["saving_median"])),
        ("max", percents(v["saving_max"])),
        (
            "guide's claim",
            [
                f"{100 * lo:g}-{100 * hi:g} %"
                for lo, hi in zip(v["claim_low"], v["claim_high"], strict=True)
            ],
        ),
        ("verdict", list(v["verdict"])),
    ]
    s.blocks.append(
        b.table(
            "compression_verdict",
            "Compression savings against the guide's claim",
            "Holds: the family's median saving reaches the claim's low end; does not hold: "
            "even its largest saving falls short.",
            v,
            cols,
        )
    )
    cols = [
        ("scenario", codes(c["scenario_id"])),
        ("algorithm", list(c["algorithm"])),
        ("network", list(c["network"])),
        ("before B", ints(c["before_bytes"])),
        ("after B", ints(c["after_bytes"])),
        ("saving", percents(c["saving"])),
        ("read less B", ints(c["wire_saving_bytes"])),
        ("client CPU Δ ms", ci(c, "client_cpu_diff_ms", 4)),
        ("decompress ms", nums(c["decompress_ms"], 4)),
        ("latency ×", ci(c, "latency_ratio", 4)),
    ]
    s.blocks.append(
        b.table(
            "compression",
            "Each compressed scenario against its uncompressed twin",
            "Before/after: the Certificate message body (the server's ready line; 'after' "
            "equals 'before' when the compressed form did not shrink and was not installed). "
            "Read less: the client's bytes read, twin minus this scenario. Client CPU Δ: "
            f"measured difference with its {b.level} interval; decompress: the primitive "
            "scaled to the message (where the store holds primitives). Latency ×: mean "
            "latency over the twin's.",
            c,
            cols,
        )
    )
    return s


def verdict_text(r: dict) -> str:
    return (
        f"saving {100 * r['saving_min']:.1f}-{100 * r['saving_max']:.1f} % (median "
        f"{100 * r['saving_median']:.1f} %, {r['n']} hierarchy/algorithm pairs): the claim "
        f"{r['verdict']}"
    )
