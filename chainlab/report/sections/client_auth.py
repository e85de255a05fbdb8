"""Mutual TLS: where a client certificate puts the signing cost."""

from __future__ import annotations

from chainlab.report.builder import (
    Builder,
    ci,
    ci_of,
    codes,
    instr_columns,
    ints,
    median_of,
    median_row,
    nums,
    percents,
)
from chainlab.report.document import Section
from chainlab.report.sections.registry import section, uses


def headline(b: Builder) -> list[tuple[str, str]]:
    """What a client certificate costs each side (the median pair by server CPU)."""
    c = b.a.client_auth
    if c.empty:
        return []
    r = median_row(c, "server_cpu_diff_ms")
    return [
        (
            "What does a client certificate cost?",
            f"server CPU Δ {ci_of(r, 'server_cpu_diff_ms')} ms, client CPU Δ "
            f"{ci_of(r, 'client_cpu_diff_ms')} ms, latency × {ci_of(r, 'latency_ratio')} for "
            f"`{r['scenario_id']}` ({median_of(len(c))} against no client certificate)",
        )
    ]


@section(150, headline=headline, applies=uses("client_auth"))
def build(b: Builder) -> Section | None:
    c = b.a.client_auth
    if c.empty:
        return None
    s = Section("client_auth", "Mutual TLS")
    moved = c[c["client_cpu_diff_ms_lo"] > c["server_cpu_diff_ms_hi"]]
    s.blocks.append(
        "Each scenario whose client authenticates with a certificate against its twin "
        "without one. The client signs a CertificateVerify with its own leaf's key; the "
        "server verifies that signature and the client's chain against the client root "
        "(docs/methods/levers.md#intermediates-anchors-client-certificates). "
        + (
            f"In {len(moved)} of {len(c)} pairs the client's added CPU exceeds the server's "
            f"beyond their {b.level} intervals, the largest with a "
            f"{moved.loc[moved['client_cpu_diff_ms'].idxmax(), 'client_leaf']} client leaf "
            f"(+{moved['client_cpu_diff_ms'].max():.1f} ms on the client, "
            f"+{moved.loc[moved['client_cpu_diff_ms'].idxmax(), 'server_cpu_diff_ms']:.2f} ms "
            "on the server)."
            if len(moved)
            else f"In no pair does the client's added CPU exceed the server's beyond their "
            f"{b.level} intervals."
        )
    )
    cols = [
        ("scenario", codes(c["scenario_id"])),
        ("client leaf", list(c["client_leaf"])),
        (
            "client chain",
            [
                f"{n} cert(s), {_b(x)} B"
                for n, x in zip(c["client_certificates"], c["client_chain_bytes"], strict=True)
            ],
        ),
        ("network", list(c["network"])),
        ("server CPU ms", nums(c["server_cpu_ms"], 3)),
        ("Δ", ci(c, "server_cpu_diff_ms", 3)),
        ("client CPU ms", nums(c["client_cpu_ms"], 3)),
        ("Δ ", ci(c, "client_cpu_diff_ms", 3)),
        ("client share", percents(c["client_share"])),
        ("without", percents(c["twin_client_share"])),
        ("written more B", ints(c["written_more_bytes"])),
        ("latency ×", ci(c, "latency_ratio", 3)),
        *instr_columns(c),
    ]
    s.blocks.append(
        b.table(
            "client_auth",
            "Each client certificate against no client certificate",
            "Client chain: as the server observed it. Δ: difference to the twin without a "
            f"client certificate, {b.level} intervals. Client share: the client's part of "
            "the handshake's CPU (client and server), with the certificate and without. "
            "Written more: the client's bytes written beyond the twin's.",
            c,
            cols,
        )
    )
    s.blocks.append(
        b.figure(
            "client_auth_split",
            "Server and client CPU per handshake of each pair, without and with the client "
            "certificate.",
        )
    )
    return s


def _b(x) -> str:
    return f"{int(x)}" if x == x else "n/a"
