"""Merkle Tree Certificates: each MTC beside the X.509 chains with its leaf, and its proof
beside the draft's size rule."""

from __future__ import annotations

import math

from chainlab.analysis import mtc
from chainlab.report import format as f
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
)
from chainlab.report.document import Section
from chainlab.report.sections.registry import section, uses


def headline(b: Builder) -> list[tuple[str, str]]:
    p = b.a.mtc
    if p.empty:
        return []
    out = []
    for kind, g in p.groupby("certificate", sort=True):
        r = median_row(g, "latency_ratio")
        more = r["cert_bytes"] - r["twin_cert_bytes"]
        out.append(
            (
                f"{kind} against X.509: bytes and latency",
                f"certificate bytes {f.integer(r['cert_bytes'])} vs "
                f"{f.integer(r['twin_cert_bytes'])} ({'+' if more >= 0 else '−'}"
                f"{f.integer(abs(more))}), latency × {ci_of(r, 'latency_ratio')} for "
                f"`{r['scenario_id']}` against `{r['twin_id']}` ({median_of(len(g))})",
            )
        )
    return out


@section(165, headline=headline, applies=uses("certificate"))
def build(b: Builder) -> Section | None:
    p, proofs = b.a.mtc, b.a.mtc_proofs
    if p.empty and proofs.empty:
        return None
    s = Section("mtc", "Merkle Tree Certificates")
    s.blocks.append(
        "Each Merkle Tree Certificate (draft-ietf-plants-merkle-tree-certs-07) against every "
        "X.509 scenario with the same leaf algorithm, and so the same leaf key, in the same "
        "setting otherwise (key exchange, stacks, transport, network). The MTC is the only "
        "certificate the server sends: the leaf's key with an inclusion proof to a subtree of "
        "its CA's log, and for a standalone certificate the subtree signatures of the CA and "
        "its cosigners. The client verifies the proof against a landmark subtree it holds, "
        "or the signatures against the cosigner keys it trusts (docs/pki.md; a BoringSSL "
        "client checks a standalone one with BoringSSL's own verifier). Without the "
        "trust_anchors extension (BoringSSL's, or OpenSSL's through its custom extension "
        "callbacks: the Trust anchor IDs section) "
        "the campaign says whether the client holds the landmark, and the server sends what "
        "the draft's negotiation would pick (the landmark-relative certificate, or else the "
        "standalone one). Round trips: the "
        "model's, MTC then X.509, with those the measured median implies in brackets on "
        "emulated profiles (docs/methods/mtc.md#merkle-tree-certificates)."
    )
    if not p.empty:
        cols = [
            ("MTC scenario", codes(p["scenario_id"])),
            ("X.509 hierarchy", list(p["twin_hierarchy"])),
            ("network", list(p["network"])),
            ("transport", list(p["transport"])),
            ("cert B", ints(p["cert_bytes"])),
            ("X.509 cert B", ints(p["twin_cert_bytes"])),
            ("read B", ints(p["bytes_read"])),
            ("X.509 read B", ints(p["twin_bytes_read"])),
            ("written B", ints(p["bytes_written"])),
            ("latency ×", ci(p, "latency_ratio", 3)),
            ("server CPU ×", ci(p, "server_cpu_ratio", 3)),
            ("client CPU ×", ci(p, "client_cpu_ratio", 3)),
            *instr_columns(p),
            ("round trips MTC vs X.509", [f.round_trips(r) for r in p.to_dict("records")]),
            ("flight datagrams", [_flights(r) for r in p.to_dict("records")]),
            ("sustained /s/core", [_capacity(r, "sustained") for r in p.to_dict("records")]),
            ("overload throughput /s/core", [_capacity(r) for r in p.to_dict("records")]),
        ]
        s.blocks.append(
            b.table(
                "mtc",
                "MTC against X.509 with the same leaf",
                "Means per handshake. cert B: DER bytes of the certificates sent; read and "
                f"written B: the client's bytes over the handshake. ×: MTC over X.509 with "
                f"{b.level} intervals. Flight datagrams (QUIC): those the client had sent when "
                "the server's flight was complete, MTC vs X.509; equal to the client's first "
                "flight (2 datagrams with X25519MLKEM768's padded Initial) when the server's "
                "flight fit in the anti-amplification budget that flight bought. Capacity: "
                "measured per server core under load, MTC vs X.509, where load steps ran.",
                p,
                cols,
            )
        )
    if not proofs.empty:
        agree = bool(proofs["agrees"].all())
        est = "; ".join(
            f"{what} ({n:,} entries): {size} B" for what, n, size in mtc.draft_estimates()
        )
        s.blocks.append(
            "Proof sizes: a subtree of n entries takes ceil(log2 n) hashes of 32 bytes; `pki` "
            "puts a batch of N entries after BIT_CEIL(N) earlier ones, so an entry of a "
            "power-of-two batch is proved in a subtree of N/2 entries. The measured proofs "
            + ("agree with that rule in every case" if agree else "do NOT all agree with it")
            + f". The draft's own estimates by the same rule: {est}."
        )
        cols = [
            ("MTC scenario", codes(proofs["scenario_id"])),
            ("certificate", list(proofs["certificate"])),
            ("sent", list(proofs["sent"])),
            ("batch", ints(proofs["mtc_batch"])),
            ("signed by", list(proofs["mtc_signers"])),
            ("landmark held", list(proofs["mtc_landmark_held"])),
            ("proof hashes", nums(proofs["proof_hashes"], 1)),
            ("proof B", ints(proofs["proof_bytes"])),
            ("subtree entries", ints(proofs["subtree_entries"])),
            ("rule's hashes", ints(proofs["draft_hashes"])),
            ("agrees", [f.yes_no(x) for x in proofs["agrees"]]),
            ("signatures checked", nums(proofs["signatures_checked"], 1)),
            ("cert B", ints(proofs["cert_bytes"])),
            ("client read B", ints(proofs["bytes_read"])),
            ("client CPU ms", ci(proofs, "client_cpu_ms", 3)),
        ]
        s.blocks.append(
            b.table(
                "mtc_proofs",
                "Proofs against the batch, signatures against bytes and client CPU",
                "Per MTC scenario, means per handshake (client CPU with its "
                f"{b.level} interval). Proof hashes: as the clients verified them. "
                "Signatures checked: subtree signatures the client "
                "verified (0 when it accepted the proof against a held landmark).",
                proofs,
                cols,
            )
        )
    return s


def _flights(r: dict) -> str:
    a, t = r["flight_datagrams"], r["twin_flight_datagrams"]
    return "n/a" if a != a else f"{f.num(a, 2)} vs {f.num(t, 2)}"


def _capacity(r: dict, figure: str = "capacity") -> str:
    """MTC vs its X.509 twin: the sustained rate, or the overload throughput."""
    a, t = r.get(f"{figure}_per_core", math.nan), r.get(f"twin_{figure}_per_core", math.nan)
    return "n/a" if a != a else f"{f.num(a, 4)} vs {f.num(t, 4)}"
