"""TCP and QUIC: each QUIC scenario beside its TCP twin."""

from __future__ import annotations

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
    p = b.a.quic
    if p.empty:
        return []
    faster, slower = int((p["latency_ratio_hi"] < 1).sum()), int((p["latency_ratio_lo"] > 1).sum())
    r = median_row(p, "latency_ratio")
    return [
        (
            "QUIC against TCP: latency and round trips",
            f"latency × {ci_of(r, 'latency_ratio')} for `{r['scenario_id']}` ({median_of(len(p))}; "
            f"QUIC faster in {faster}, slower in {slower}); round trips QUIC "
            f"vs TCP {f.round_trips(r)}",
        )
    ]


@section(160, headline=headline, applies=uses("transport"))
def build(b: Builder) -> Section | None:
    p = b.a.quic
    if p.empty:
        return None
    s = Section("quic", "TCP and QUIC")
    faster = p[p["latency_ratio_hi"] < 1]
    slower = p[p["latency_ratio_lo"] > 1]
    s.blocks.append(
        "Each scenario over QUIC v1 (OpenSSL's own QUIC stack) against the same scenario "
        f"over TCP. Of {len(p)} pairs, QUIC was faster in {len(faster)} and slower in "
        f"{len(slower)} (latency interval wholly below or above 1). Bytes are TLS records at "
        "the socket over TCP and UDP payload over QUIC (QUIC's packet headers, padding and "
        "acknowledgements included). Flight datagrams: those the QUIC client had sent when "
        "the server's flight was complete, the footprint of the anti-amplification limit "
        "(three times the bytes received before the client's address is validated). Round "
        "trips: on an emulated profile, those the measured median implies beside the "
        "projection model's for each transport; on loopback, the model's projection onto one "
        "reference network (docs/methods/quic.md#tcp-and-quic, docs/network.md)."
    )
    cols = [
        ("QUIC scenario", codes(p["scenario_id"])),
        ("network", list(p["network"])),
        ("QUIC ms", nums(p["mean_ms"], 3)),
        ("TCP ms", nums(p["twin_mean_ms"], 3)),
        ("latency ×", ci(p, "latency_ratio", 3)),
        ("server CPU ×", ci(p, "server_cpu_ratio", 3)),
        ("client CPU ×", ci(p, "client_cpu_ratio", 3)),
        *instr_columns(p),
        ("read B", ints(p["bytes_read"])),
        ("TCP read B", ints(p["twin_bytes_read"])),
        ("written B", ints(p["bytes_written"])),
        ("TCP written B", ints(p["twin_bytes_written"])),
        ("datagrams in/out", [_pair(r) for r in p.to_dict("records")]),
        ("flight datagrams", [_flight(r) for r in p.to_dict("records")]),
        ("round trips QUIC vs TCP", [f.round_trips(r) for r in p.to_dict("records")]),
        ("round trips basis", list(p["round_trips_basis"])),
        ("projected QUIC ms", nums(p["projected_ms"], 1)),
        ("projected TCP ms", nums(p["twin_projected_ms"], 1)),
    ]
    s.blocks.append(
        b.table(
            "quic",
            "QUIC against TCP, per scenario",
            "Means per handshake; ×: QUIC over TCP with "
            f"{b.level} intervals. Datagrams: means over the handshake, client side. Flight "
            "datagrams: mean (min-max). Round trips: the model's, QUIC then TCP; measured in "
            "brackets on emulated profiles.",
            p,
            cols,
        )
    )
    return s


def _pair(r: dict) -> str:
    if r["datagrams_read"] != r["datagrams_read"]:
        return "n/a"
    return f"{r['datagrams_read']:.1f} / {r['datagrams_written']:.1f}"


def _flight(r: dict) -> str:
    if r["flight_datagrams"] != r["flight_datagrams"]:
        return "n/a"
    return (
        f"{r['flight_datagrams']:.1f} ({int(r['flight_datagrams_min'])}-"
        f"{int(r['flight_datagrams_max'])})"
    )
