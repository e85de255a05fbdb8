"""Client profiles: what a browser's ClientHello costs per placement."""

from __future__ import annotations

from chainlab.report import format as f
from chainlab.report.builder import Builder, ci, ci_of, codes, ints, nums
from chainlab.report.document import Section
from chainlab.report.sections.registry import section, uses


def headline(b: Builder) -> list[tuple[str, str]]:
    """What a Chrome user pays: the slowest and fastest placement with its ClientHello."""
    c = b.a.client_profiles
    if c.empty:
        return []
    out = []
    keys = ["client_profile", "network", "trust_anchors"]
    for (profile, net, anchors), g in c.groupby(keys, sort=True, dropna=False):
        fast, slow = g.loc[g["mean_ms"].idxmin()], g.loc[g["mean_ms"].idxmax()]
        requested = "" if anchors in (None, "sni") else f", {anchors} trust anchor IDs"
        out.append(
            (
                f"What does a {profile} user pay per placement ({net}{requested})?",
                f"{f.num(fast['mean_ms'])} ms (`{fast['scenario_id']}`) to "
                f"{f.num(slow['mean_ms'])} ms (`{slow['scenario_id']}`) over {len(g)} "
                f"placement(s); its ClientHello writes {f.integer(g['written_more_bytes'].min())} "
                f"to {f.integer(g['written_more_bytes'].max())} bytes more than the engine's "
                f"own, latency × {ci_of(slow, 'latency_ratio')} for the slowest",
            )
        )
    return out


@section(168, headline=headline, applies=uses("client_profile"))
def build(b: Builder) -> Section | None:
    c = b.a.client_profiles
    if c.empty:
        return None
    s = Section("profiles", "Client profiles")
    s.blocks.append(
        "Each scenario whose client sends a browser's ClientHello (`client_profile`) against "
        "its twin with the engine's own ClientHello: the same client stack, server, chain and "
        "network (docs/methods/levers.md#client-profiles; docs/stacks.md cites what the "
        "profile sets). Written more: the client's bytes written beyond the twin's (the "
        "ClientHello's difference: Chrome's second key share, TLS 1.2 suites, ALPN, GREASE "
        "and its GREASE ECH extension, whose length varies per connection). Δ: difference "
        f"to the twin, {b.level} intervals."
    )
    cols = [
        ("scenario", codes(c["scenario_id"])),
        ("profile", list(c["client_profile"])),
        ("stacks", list(c["stacks"])),
        ("trust anchors", [str(v) for v in c["trust_anchors"]]),
        ("network", list(c["network"])),
        ("scheme", [str(v) for v in c["negotiated_sigalg"]]),
        ("mean ms", nums(c["mean_ms"])),
        ("without", nums(c["twin_mean_ms"])),
        ("latency ×", ci(c, "latency_ratio", 3)),
        ("written B", ints(c["bytes_written"])),
        ("written more B", ints(c["written_more_bytes"])),
        ("client CPU Δ ms", ci(c, "client_cpu_diff_ms", 3)),
        ("server CPU Δ ms", ci(c, "server_cpu_diff_ms", 3)),
        ("against", codes(c["twin_id"])),
    ]
    s.blocks.append(
        b.table(
            "client_profiles",
            "Each placement with a browser's ClientHello against the engine's own",
            "Means per handshake.",
            c,
            cols,
        )
    )
    return s
