"""Intermediates and trust anchors: what sending fewer certificates saves."""

from __future__ import annotations

from chainlab.analysis.intermediates import REFERENCE_POLICY
from chainlab.report import format as f
from chainlab.report.builder import (
    Builder,
    ci,
    ci_of,
    codes,
    instr_columns,
    ints,
    median_of,
    median_per_group,
    nums,
)
from chainlab.report.document import Section
from chainlab.report.sections.registry import section, uses

POLICY_TEXT = {
    "leaf": "the leaf only (the client holds the intermediates)",
    "intermediate-anchor": "the leaf only (the client trusts the leaf's issuer itself)",
    "full": "the whole chain, root included",
}


def headline(b: Builder) -> list[tuple[str, str]]:
    """Per served-chain policy: bytes saved and latency against the reference (median pair)."""
    return median_per_group(
        b.a.intermediates,
        "policy",
        "latency_ratio",
        lambda policy, r, n: (
            f"Serving {policy} instead of {REFERENCE_POLICY}",
            f"reads {int(r['read_saving_bytes'])} B less, latency × "
            f"{ci_of(r, 'latency_ratio')} for `{r['scenario_id']}` ({median_of(n)})",
        ),
    )


@section(140, headline=headline, applies=uses("served_chain"))
def build(b: Builder) -> Section | None:
    p = b.a.intermediates
    if p.empty:
        return None
    s = Section("intermediates", "Intermediates and trust anchors")
    saved = p[p["read_saving_bytes"] > 0]
    s.blocks.append(
        f"Each served chain against the same scenario sending {REFERENCE_POLICY} (what "
        "RFC 8446 asks of a server): "
        + "; ".join(f"{k}: {v}" for k, v in POLICY_TEXT.items() if k in set(p["policy"]))
        + ". "
        + (
            "Leaving certificates out saved the client between "
            f"{int(saved['read_saving_bytes'].min())} and "
            f"{int(saved['read_saving_bytes'].max())} bytes read per handshake in "
            f"{len(saved)} of {len(p)} pairs. "
            if len(saved)
            else ""
        )
        + "Round trips: on an emulated profile, those the measured median implies beside "
        "the projection model's; on loopback, the model's projection onto one reference "
        "network (docs/methods/levers.md#intermediates-anchors-client-certificates)."
    )
    cols = [
        ("scenario", codes(p["scenario_id"])),
        ("sends", list(p["policy"])),
        ("network", list(p["network"])),
        (
            "certs",
            [
                f"{int(a)} (vs {int(t)})"
                for a, t in zip(p["certificates"], p["twin_certificates"], strict=True)
            ],
        ),
        ("chain B", ints(p["chain_bytes"])),
        ("vs B", ints(p["twin_chain_bytes"])),
        ("read less B", ints(p["read_saving_bytes"])),
        ("round trips", [f.round_trips(r) for r in p.to_dict("records")]),
        ("round trips basis", list(p["round_trips_basis"])),
        ("projected ms", nums(p["projected_ms"], 1)),
        ("vs ms", nums(p["twin_projected_ms"], 1)),
        ("latency ×", ci(p, "latency_ratio", 3)),
        *instr_columns(p),
        ("client CPU Δ ms", ci(p, "client_cpu_diff_ms", 4)),
    ]
    s.blocks.append(
        b.table(
            "intermediates",
            f"Each served chain against {REFERENCE_POLICY}",
            "Certs and chain B: certificates and DER bytes the server sent (vs: the twin's). "
            "Read less: the client's bytes read, twin minus this scenario. Round trips: this "
            "scenario's, then the twin's (model; measured in brackets on emulated profiles). "
            "Projected ms: mean latency projected at the reference network (loopback rows). "
            f"Latency ×: mean over the twin's; client CPU Δ: difference to the twin, {b.level} "
            "intervals.",
            p,
            cols,
        )
    )
    return s
