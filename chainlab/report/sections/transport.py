"""Timing, transport and chain exposure per scenario."""

from __future__ import annotations

from chainlab.report import format as f
from chainlab.report.builder import Builder, ci, codes, ints, nums
from chainlab.report.document import Section
from chainlab.report.sections.registry import section


def headline(b: Builder) -> list[tuple[str, str]]:
    sm = b.a.summary
    ok = sm[sm["status"] == "ok"] if "status" in sm else sm
    if ok.empty or "connect_share" not in ok:
        return []
    share = ok["connect_share"].dropna()
    biggest = ok.sort_values(["bytes_read", "scenario_id"]).iloc[-1]
    return [
        (
            "How much of the latency is the TCP connect, and how many bytes does a handshake read?",
            f"connect share median {f.num(share.median() * 100)} % (from "
            f"{f.num(share.min() * 100)} to {f.num(share.max() * 100)} % over {len(share)} "
            f"scenario(s)); most bytes read: `{biggest['scenario_id']}`, "
            f"{f.integer(biggest['bytes_read'])} B" + b.setting(ok["scenario_id"]),
        )
    ]


@section(40, headline=headline)
def build(b: Builder) -> Section:
    a, s = b.a, Section("transport", "Timing, transport and chain exposure")
    sm = a.summary
    ok = sm[sm["status"] == "ok"] if "status" in sm else sm
    if ok.empty:
        s.blocks.append("No successful scenario.")
        return s
    cols = [
        ("scenario", codes(ok["scenario_id"])),
        ("TCP connect ms", ci(ok, "connect_ms")),
        ("TLS ms", ci(ok, "tls_ms")),
        ("connect share", nums(ok["connect_share"])),
        ("bytes read", ci(ok, "bytes_read")),
        ("bytes written", ci(ok, "bytes_written")),
        ("observed chain len", nums(ok["chain_len"])),
        ("observed chain bytes", ci(ok, "chain_bytes")),
        ("served chain bytes", ints(ok["served_chain_der_bytes"])),
        ("group", list(ok["negotiated_group"].fillna(""))),
        ("sigalg", list(ok["negotiated_sigalg"].fillna(""))),
    ]
    s.blocks.append(
        b.table(
            "transport",
            "Timing and transport per scenario",
            "Means of measured ok handshakes (bytes on the client socket up to the end of the "
            "handshake; chain = the peer chain the client observed). `served chain bytes` is "
            "what the runner recorded for the server's chain file.",
            ok,
            cols,
        )
    )
    varies = ok[ok["chain_len_varies"]]
    if len(varies):
        s.blocks.append(
            "Observed chain length varied within: "
            + ", ".join(f"`{x}`" for x in varies["scenario_id"])
            + "."
        )
    s.blocks.append(
        b.figure(
            "connect_vs_tls",
            "Mean of each part of the measured latency.",
        )
    )
    s.blocks.append(
        b.figure(
            "transport_bytes",
            "Paper Figure 12.",
        )
    )
    ex = a.exposure
    if len(ex):
        s.blocks.append(
            b.table(
                "chain_exposure",
                "Chain exposure",
                "Which certificates the server sends (declared: certificates.served) and what "
                "the client observed (observed_chain of the analysed run), with DER sizes. "
                "Effective exposure, not depth, decides what is transmitted (paper §7.3).",
                ex,
                [
                    ("scenario", codes(ex["scenario_id"])),
                    ("depth", ints(ex["depth"])),
                    ("policy", list(ex["served_chain"])),
                    ("sent (declared)", list(ex["declared_sent"])),
                    ("observed by the client", list(ex["observed_chain"])),
                    ("root sent", [f.yes_no(x) for x in ex["root_sent"]]),
                ],
            )
        )
    return s
