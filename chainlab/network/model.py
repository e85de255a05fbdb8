"""Projection: a scenario's handshake latency on a network profile, from its loopback run.

The model (docs/network.md derives it):

    latency = base + (2 + k_c + k_s) * RTT + ser(SYN) + ser(SYN-ACK) + ser(C1) + ser(S)

  base       the scenario's loopback latency (median total_ns: both sides' CPU on the
             critical path plus loopback's own few microseconds), or, with base="cpu", the
             median client CPU + server CPU
  2 RTT      TCP connect (SYN, SYN-ACK) and the TLS 1.3 round trip (ClientHello out, the
             server's flight back); the client's Finished leaves after its latency ends
  C1, S      the client's first flight (its handshake bytes less its final CCS + Finished)
             and the server's flight (its handshake bytes written), TLS bytes
  k_c, k_s   extra round trips slow start costs a flight larger than the initial window:
             the smallest k >= 0 with initcwnd * (2^(k+1) - 1) >= segments(flight), as the
             window doubles each round trip
  ser(B)     serialization at the bottleneck rate: (B + segments(B) * 52) * 8 / rate, 52 the
             TCP/IP header bytes per segment; 0 when the rate is unlimited

QUIC (a scenario whose `transport` is "quic") has no connect round trip, and its server is
held by the anti-amplification limit until the client's address is validated:

    latency = base + k * RTT + ser(C1) + ser(S)

  C1         the client's first flight: its ClientHello (CLIENT_HELLO_BASE plus the group's
             key share) in Initial datagrams padded to 1200 bytes (RFC 9000, Section 14.1)
  k          round trips the server's flight S takes: the first round carries at most
             min(3 * C1, IW) (three times what the server received, RFC 9000 Section 8.1;
             IW the initial window, RFC 9002 Section 7.2); the client's acknowledgement, a
             Handshake packet, validates its address, and from then on slow start carries
             IW plus everything acknowledged so far each round
  ser(B)     serialization with 28 UDP/IP header bytes per datagram of 1200 bytes

It predicts the loss-free latency; `p_no_loss` = (1 - loss)^packets on the critical path says
how likely a handshake is to see no loss at all (above 0.5 the median is the loss-free value).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from chainlab.network.profile import LOOPBACK, TCP_IP_OVERHEAD, parse_profile

# IPv4 SYN and SYN-ACK with Linux's options (MSS, SACK-permitted, timestamps, window scale).
SYN_BYTES = 60
# The client's last flight in a TLS 1.3 full handshake without client authentication: a
# ChangeCipherSpec record (6 bytes, middlebox compatibility, sent by OpenSSL by default) and
# the Finished record (5 header + 4 handshake header + 32 verify data + 1 type + 16 tag). It
# leaves after the client's latency is over, so it is not part of the first flight.
CLIENT_FINAL_FLIGHT_BYTES = 64


# QUIC: a client's Initial datagrams are padded to at least this (RFC 9000, Section 14.1),
# and OpenSSL's QUIC sends datagrams of this size until it has probed the path for more.
QUIC_DATAGRAM = 1200
# Before a server has validated the client's address it sends at most 3 times the bytes it
# received from it (RFC 9000, Section 8.1).
QUIC_AMPLIFICATION = 3
# The initial congestion window at a 1200-byte datagram: min(10 * 1200, max(14720, 2 * 1200))
# (RFC 9002, Section 7.2).
QUIC_INITIAL_WINDOW = 10 * QUIC_DATAGRAM
# Per Initial datagram, what is not ClientHello: the long header with 8-byte connection ids,
# token length, length and a 4-byte packet number (about 30 bytes), the CRYPTO frame header
# and the 16-byte AEAD tag.
QUIC_INITIAL_OVERHEAD = 50
# OpenSSL 3.5's QUIC ClientHello without its key share (SNI, ALPN, groups, signature
# schemes, QUIC transport parameters): 1,466 bytes with X25519MLKEM768's 1,216-byte share,
# as the engine's message callback showed it.
CLIENT_HELLO_BASE = 250
# UDP and IPv4 headers of one datagram.
UDP_IP_OVERHEAD = 28


@dataclass(frozen=True)
class Prediction:
    latency_ms: float
    base_ms: float
    rtt_ms: float
    round_trips: int
    extra_round_trips: int
    serialization_ms: float
    exceeds_initcwnd: bool
    p_no_loss: float

    def to_dict(self) -> dict:
        return asdict(self)


def predict_handshake(
    *,
    base_ms: float,
    client_flight_bytes: float,
    server_flight_bytes: float,
    rtt_ms: float,
    rate_mbit: float | None,
    mss: int,
    initcwnd: int,
    loss: float = 0.0,
) -> Prediction:
    """One scenario on one profile (see the module doc for the formula)."""
    if mss <= 0 or initcwnd <= 0:
        raise ValueError(f"mss ({mss}) and initcwnd ({initcwnd}) must be positive")
    k_client = slow_start_rounds(client_flight_bytes, mss, initcwnd)
    k_server = slow_start_rounds(server_flight_bytes, mss, initcwnd)
    round_trips = 2 + k_client + k_server
    ser = (
        syn_serialization_ms(rate_mbit)
        + serialization_ms(client_flight_bytes, rate_mbit, mss)
        + serialization_ms(server_flight_bytes, rate_mbit, mss)
    )
    packets = 2 + segments(client_flight_bytes, mss) + segments(server_flight_bytes, mss)
    return Prediction(
        latency_ms=base_ms + round_trips * rtt_ms + ser,
        base_ms=base_ms,
        rtt_ms=rtt_ms,
        round_trips=round_trips,
        extra_round_trips=k_client + k_server,
        serialization_ms=ser,
        exceeds_initcwnd=exceeds_initial_window(server_flight_bytes, mss, initcwnd),
        p_no_loss=(1.0 - loss) ** packets,
    )


def quic_client_initial_bytes(key_share_bytes: float) -> int:
    """The client's first QUIC flight on the wire (UDP payload): its ClientHello in Initial
    datagrams, each padded to QUIC_DATAGRAM bytes."""
    hello = CLIENT_HELLO_BASE + key_share_bytes
    return math.ceil(hello / (QUIC_DATAGRAM - QUIC_INITIAL_OVERHEAD)) * QUIC_DATAGRAM


def quic_flight_round_trips(server_flight_bytes: float, client_initial_bytes: float) -> int:
    """Round trips the server's flight takes over QUIC (see the module doc): the first one
    under the anti-amplification limit, the next ones in slow start."""
    delivered = min(QUIC_AMPLIFICATION * client_initial_bytes, QUIC_INITIAL_WINDOW)
    rounds = 1
    while delivered < server_flight_bytes:
        delivered += QUIC_INITIAL_WINDOW + delivered
        rounds += 1
    return rounds


def predict_quic_handshake(
    *,
    base_ms: float,
    client_initial_bytes: float,
    server_flight_bytes: float,
    rtt_ms: float,
    rate_mbit: float | None,
    loss: float = 0.0,
) -> Prediction:
    """One QUIC scenario on one profile (see the module doc for the formula)."""
    k = quic_flight_round_trips(server_flight_bytes, client_initial_bytes)
    datagrams = math.ceil(client_initial_bytes / QUIC_DATAGRAM) + math.ceil(
        server_flight_bytes / QUIC_DATAGRAM
    )
    wire = client_initial_bytes + server_flight_bytes + datagrams * UDP_IP_OVERHEAD
    ser = wire * 8 / (rate_mbit * 1e3) if rate_mbit else 0.0
    first_round = min(QUIC_AMPLIFICATION * client_initial_bytes, QUIC_INITIAL_WINDOW)
    return Prediction(
        latency_ms=base_ms + k * rtt_ms + ser,
        base_ms=base_ms,
        rtt_ms=rtt_ms,
        round_trips=k,
        extra_round_trips=k - 1,
        serialization_ms=ser,
        exceeds_initcwnd=bool(server_flight_bytes > first_round),
        p_no_loss=(1.0 - loss) ** datagrams,
    )


def exceeds_initial_window(server_bytes_written, mss, initcwnd):
    """True where the server's handshake flight needs more than one congestion window
    (more than initcwnd full segments). Works on scalars and on pandas/numpy columns."""
    return server_bytes_written > np.multiply(mss, initcwnd)


def segments(nbytes: float, mss: int) -> int:
    """TCP segments a flight of `nbytes` payload bytes takes (full segments of `mss`)."""
    if nbytes <= 0:
        return 0
    return math.ceil(nbytes / mss)


def slow_start_rounds(nbytes: float, mss: int, initcwnd: int) -> int:
    """Round trips a flight needs beyond its first: the window starts at `initcwnd` segments
    and doubles every round trip, so k extra rounds carry initcwnd * (2^(k+1) - 1)."""
    need = segments(nbytes, mss)
    k = 0
    while initcwnd * (2 ** (k + 1) - 1) < need:
        k += 1
    return k


def syn_serialization_ms(rate_mbit: float | None) -> float:
    """Serialization of a connect's SYN and SYN-ACK (SYN_BYTES each) on a link of
    `rate_mbit` (0 without a rate): what a TCP connect adds to the RTT."""
    return 2 * serialization_ms(SYN_BYTES, rate_mbit, mss=None)


def serialization_ms(nbytes: float, rate_mbit: float | None, mss: int | None) -> float:
    """Time to put a flight on the bottleneck, TCP/IP headers included (one header per
    segment of `mss`; `mss=None` means `nbytes` is already a whole IP packet)."""
    if not rate_mbit or nbytes <= 0:
        return 0.0
    wire = nbytes if mss is None else nbytes + segments(nbytes, mss) * TCP_IP_OVERHEAD
    return wire * 8 / (rate_mbit * 1e3)


def profiles_table(rows) -> pd.DataFrame:
    """A profile table for `predict` from profile dicts or from the store's
    `network_profiles` rows (a `configured` dict/JSON column): one row per profile with
    profile, rtt_ms, rate_mbit, loss, mtu, mss, initcwnd."""
    records = rows.to_dict("records") if isinstance(rows, pd.DataFrame) else list(rows)
    out = []
    for rec in records:
        spec = rec.get("configured", rec)
        if isinstance(spec, str):
            spec = json.loads(spec)
        spec = dict(spec)
        spec.setdefault("name", rec.get("profile"))
        # Keys a store row may carry beside the profile's own.
        for extra in ("run_id", "profile"):
            spec.pop(extra, None)
        p = parse_profile(spec)
        out.append(
            {
                "profile": p.name,
                "rtt_ms": p.rtt_ms,
                "rate_mbit": p.rate_mbit,
                "loss": p.loss,
                "mtu": p.mtu,
                "mss": p.mss,
                "initcwnd": p.initcwnd,
            }
        )
    return pd.DataFrame(out).drop_duplicates("profile", keep="last").reset_index(drop=True)


def predict(
    samples: pd.DataFrame,
    scenarios: pd.DataFrame,
    profiles: pd.DataFrame,
    *,
    base: str = "total",
    keys: tuple[str, ...],
    key_share_bytes: Mapping[str, float] | None = None,
) -> pd.DataFrame:
    """Predicted latency of every loopback scenario on every profile, beside the emulated
    median where the same scenario was also measured on that profile.

    samples    rows of the store's `samples` table (scenario_id, total_ns, bytes_written,
               server_bytes_written; client_cpu_ns and server_cpu_ns for base="cpu";
               warm-up and failed rows are ignored)
    scenarios  rows of the `scenarios` table (scenario_id, network and the `keys` columns)
    keys       the columns that identify a scenario apart from its network (loopback twins
               share them): chainlab.campaign.model.SCENARIO_KEYS
    profiles   `profiles_table(...)`: profile, rtt_ms, rate_mbit, loss, mss, initcwnd
    key_share_bytes  group -> the client's key share in bytes, for QUIC scenarios (a
               `transport` of "quic" among the keys): their first flight's size

    One row per (loopback scenario, profile): the keys, loopback_scenario_id, profile,
    base_ms, client_flight_bytes, server_flight_bytes, the Prediction fields (latency_ms is
    `predicted_ms`), emulated_scenario_id, emulated_ms, emulated_n and error_ms
    (emulated - predicted).
    """
    if base not in ("total", "cpu"):
        raise ValueError(f"base={base!r}; allowed: 'total', 'cpu'")
    keys = tuple(k for k in keys if k in scenarios.columns)
    per = _per_scenario(samples)
    scen = scenarios[["scenario_id", "network", *keys]].merge(per, on="scenario_id", how="inner")
    loop = scen[scen["network"] == LOOPBACK]
    emulated = scen[scen["network"] != LOOPBACK]
    rows = []
    for _, s in loop.iterrows():
        base_ms = s["total_ms"] if base == "total" else s["cpu_ms"]
        for _, p in profiles.iterrows():
            row = {k: s[k] for k in keys}
            row.update(
                loopback_scenario_id=s["scenario_id"],
                profile=p["profile"],
                base_ms=base_ms,
                client_flight_bytes=s["client_flight_bytes"],
                server_flight_bytes=s["server_flight_bytes"],
            )
            ok = all(
                _finite(v) for v in (base_ms, s["client_flight_bytes"], s["server_flight_bytes"])
            )
            quic = s.get("transport") == "quic"
            share = (key_share_bytes or {}).get(s.get("kex")) if quic else None
            if quic and share is None:
                ok = False
            if ok and quic and share is not None:
                rate = p["rate_mbit"] if _finite(p["rate_mbit"]) else None
                pred = predict_quic_handshake(
                    base_ms=base_ms,
                    client_initial_bytes=quic_client_initial_bytes(share),
                    server_flight_bytes=s["server_flight_bytes"],
                    rtt_ms=p["rtt_ms"],
                    rate_mbit=rate,
                    loss=p.get("loss", 0.0) or 0.0,
                ).to_dict()
                pred["predicted_ms"] = pred.pop("latency_ms")
                pred.pop("base_ms")
                row.update(pred)
            elif ok:
                rate = p["rate_mbit"] if _finite(p["rate_mbit"]) else None
                pred = predict_handshake(
                    base_ms=base_ms,
                    client_flight_bytes=s["client_flight_bytes"],
                    server_flight_bytes=s["server_flight_bytes"],
                    rtt_ms=p["rtt_ms"],
                    rate_mbit=rate,
                    mss=int(p["mss"]),
                    initcwnd=int(p["initcwnd"]),
                    loss=p.get("loss", 0.0) or 0.0,
                ).to_dict()
                pred["predicted_ms"] = pred.pop("latency_ms")
                pred.pop("base_ms")
                row.update(pred)
            else:
                row["predicted_ms"] = math.nan
            match = emulated[emulated["network"] == p["profile"]]
            for k in keys:
                match = match[_same(match[k], s[k])]
            if len(match):
                m = match.iloc[0]
                row.update(
                    emulated_scenario_id=m["scenario_id"],
                    emulated_ms=m["total_ms"],
                    emulated_n=int(m["n"]),
                    error_ms=m["total_ms"] - row["predicted_ms"],
                )
            else:
                row.update(
                    emulated_scenario_id=None, emulated_ms=math.nan, emulated_n=0, error_ms=math.nan
                )
            rows.append(row)
    return pd.DataFrame(rows)


def _per_scenario(samples: pd.DataFrame) -> pd.DataFrame:
    """Medians per scenario over measured, successful handshakes."""
    s = samples
    if "warmup" in s.columns:
        s = s[~s["warmup"].astype(bool)]
    if "outcome" in s.columns:
        s = s[s["outcome"] == "ok"]
    s = s.assign(
        total_ms=s["total_ns"] / 1e6,
        client_flight=(s["bytes_written"] - CLIENT_FINAL_FLIGHT_BYTES).clip(lower=0),
    )
    cpu = None
    if "client_cpu_ns" in s.columns and "server_cpu_ns" in s.columns:
        cpu = (s["client_cpu_ns"] + s["server_cpu_ns"]) / 1e6
    s = s.assign(cpu_ms=cpu if cpu is not None else math.nan)
    g = s.groupby("scenario_id")
    return pd.DataFrame(
        {
            "total_ms": g["total_ms"].median(),
            "cpu_ms": g["cpu_ms"].median(),
            "client_flight_bytes": g["client_flight"].median(),
            "server_flight_bytes": g["server_bytes_written"].median(),
            "n": g.size(),
        }
    ).reset_index()


def _finite(x) -> bool:
    try:
        return x is not None and math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def _same(column: pd.Series, value) -> pd.Series:
    """Equality that treats missing == missing (depth-1 scenarios have no root_alg)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return column.isna()
    return column == value
