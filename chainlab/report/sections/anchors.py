"""Trust anchor IDs: what the client requested in the trust_anchors extension, what the
server answered, what the ClientHello grew by and what the retry cost."""

from __future__ import annotations

from chainlab.report import format as f
from chainlab.report.builder import Builder, ci, codes, ints, nums, percents
from chainlab.report.document import Section
from chainlab.report.sections.registry import holds, section


def headline(b: Builder) -> list[tuple[str, str]]:
    t = b.a.trust_anchors
    if t.empty:
        return []
    out = []
    against = t[t["base_id"].notna()]
    sent = against[against["ids"].notna() & (against["ids"] > 0)]
    if not sent.empty:
        r = sent.loc[sent["ids"].idxmax()]
        ids = f"{f.integer(r['ids'])} ID{'' if r['ids'] == 1 else 's'}"
        out.append(
            (
                "Trust anchor IDs: what a longer request costs the ClientHello",
                f"requesting {ids} adds {f.integer(r['growth_bytes'])} "
                f"bytes to what the client writes (`{r['scenario_id']}` against "
                f"`{r['base_id']}`), latency × {f.num(r['latency_ratio'])}",
            )
        )
    retried = t[t["retried_share"] > 0]
    if not retried.empty:
        r = retried.loc[retried["median_ms"].idxmax()]
        vs = (
            f", × {f.num(r['latency_ratio'])} against `{r['base_id']}`"
            if isinstance(r["base_id"], str)
            else ""
        )
        out.append(
            (
                "Trust anchor IDs: what the retry costs",
                f"`{r['scenario_id']}` connected twice in {f.num(r['retried_share'] * 100)} % of "
                f"its attempts: median {f.num(r['median_ms'])} ms, "
                f"{f.integer(r['bytes_read'])} bytes read{vs}",
            )
        )
    return out


@section(167, headline=headline, applies=holds("anchors"))
def build(b: Builder) -> Section | None:
    t = b.a.trust_anchors
    if t.empty:
        return None
    s = Section("anchors", "Trust anchor IDs")
    s.blocks.append(
        "The trust_anchors extension (draft-ietf-tls-trust-anchor-ids-06), BoringSSL's own or "
        "OpenSSL's through libssl's custom extension callbacks (stacks column): the client "
        "requests trust anchor IDs in its ClientHello (its "
        "own first: its landmark's, or its MTC CA's; then other CAs' up to the number asked "
        "for), a server whose Merkle Tree Certificates carry IDs sends the one requested and "
        "says it matched, else its default certificate with its available IDs in "
        "EncryptedExtensions, for which a client that cannot use the default connects again "
        "(the retry; both connections one attempt). `sni`: the campaign's stand-in, no "
        "extension. ClientHello growth: the client's bytes written over the handshake minus "
        "those of the same setting's scenario requesting the fewest IDs (every other message "
        "it writes is the same); latency × against that scenario's median "
        "(docs/methods/mtc.md#trust-anchor-ids)."
    )
    cols = [
        ("scenario", codes(t["scenario_id"])),
        ("certificate", list(t["certificate"])),
        ("landmark held", list(t["held"])),
        ("stacks", list(t["stacks"])),
        ("network", list(t["network"])),
        ("IDs requested", [str(v) for v in t["trust_anchors"]]),
        ("matched", percents(t["matched_share"])),
        ("available IDs", nums(t["available"], 1)),
        ("retried", percents(t["retried_share"])),
        ("written B", ints(t["bytes_written"])),
        ("ClientHello growth B", ints(t["growth_bytes"])),
        ("read B", ints(t["bytes_read"])),
        ("median ms", nums(t["median_ms"])),
        ("latency ×", nums(t["latency_ratio"])),
        ("client CPU ms", ci(t, "client_cpu_ms", 3)),
        ("server CPU ms", ci(t, "server_cpu_ms", 3)),
        ("against", codes(t["base_id"])),
    ]
    s.blocks.append(
        b.table(
            "trust_anchors",
            "Trust anchor IDs requested, matched and retried",
            "Per scenario, means per measured handshake; matched and retried: shares of the "
            f"measured attempts; CPU with its {b.level} interval.",
            t,
            cols,
        )
    )
    return s
