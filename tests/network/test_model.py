"""The projection model: its arithmetic, the DataFrame projection, and (with root and the
engine) the round trips a real handshake takes over an emulated 50 ms link."""

import json
import math
import statistics
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from chainlab.campaign.model import SCENARIO_KEYS
from chainlab.network import emulated_link, model
from chainlab.network.model import (
    exceeds_initial_window,
    predict,
    predict_handshake,
    profiles_table,
    segments,
    serialization_ms,
    slow_start_rounds,
)

pytestmark = pytest.mark.usefixtures("serial")  # measures: runs alone


def test_segments():
    assert [segments(b, 1448) for b in (0, 1, 1448, 1449, 14480)] == [0, 1, 1, 2, 10]


@pytest.mark.parametrize(
    "nbytes, initcwnd, rounds",
    [
        (10_000, 10, 0),  # 10 segments: one window
        (10_001, 10, 1),  # 11: a second round of up to 20
        (30_000, 10, 1),  # 30 = 10 + 20
        (30_001, 10, 2),
        (70_000, 10, 2),  # 70 = 10 + 20 + 40
        (70_001, 10, 3),
        (45_000, 4, 3),  # 45 segments: 4 + 8 + 16 = 28 < 45 <= 60
        (0, 10, 0),
    ],
)
def test_slow_start_rounds_double_the_window_each_round_trip(nbytes, initcwnd, rounds):
    assert slow_start_rounds(nbytes, 1000, initcwnd) == rounds


def test_exceeds_initial_window_on_scalars_and_columns():
    assert not exceeds_initial_window(14_480, 1448, 10)
    assert exceeds_initial_window(14_481, 1448, 10)
    col = pd.Series([1000, 20_000, 14_480])
    assert exceeds_initial_window(col, 1448, 10).tolist() == [False, True, False]


def test_serialization_counts_headers_per_segment():
    assert serialization_ms(1448, None, 1448) == 0.0
    assert serialization_ms(1448, 10, 1448) == pytest.approx(1.2)  # 1500 bytes at 10 Mbit/s
    assert serialization_ms(2000, 10, 1448) == pytest.approx((2000 + 2 * 52) * 8 / 1e4)
    assert serialization_ms(60, 1, None) == pytest.approx(0.48)


def test_a_flight_within_the_window_costs_two_round_trips():
    p = predict_handshake(
        base_ms=2.0, client_flight_bytes=1300, server_flight_bytes=8000, rtt_ms=50,
        rate_mbit=None, mss=1448, initcwnd=10,
    )  # fmt: skip
    assert p.round_trips == 2 and p.extra_round_trips == 0
    assert p.latency_ms == pytest.approx(102.0)
    assert not p.exceeds_initcwnd
    assert p.p_no_loss == 1.0


def test_a_flight_above_the_window_costs_slow_start_rounds():
    p = predict_handshake(
        base_ms=5.0, client_flight_bytes=1300, server_flight_bytes=65_000, rtt_ms=50,
        rate_mbit=None, mss=1448, initcwnd=10,
    )  # fmt: skip
    # 45 segments: 10 + 20 + 40 -> two extra round trips.
    assert (p.round_trips, p.extra_round_trips) == (4, 2)
    assert p.latency_ms == pytest.approx(205.0)
    assert p.exceeds_initcwnd


def test_rate_and_loss_terms():
    p = predict_handshake(
        base_ms=1.0, client_flight_bytes=1300, server_flight_bytes=8000, rtt_ms=10,
        rate_mbit=10, mss=1448, initcwnd=10, loss=0.01,
    )  # fmt: skip
    ser = 2 * 60 * 8 / 1e4 + (1300 + 52) * 8 / 1e4 + (8000 + 6 * 52) * 8 / 1e4
    assert p.serialization_ms == pytest.approx(ser)
    assert p.latency_ms == pytest.approx(1.0 + 20 + ser)
    # SYN, SYN-ACK, 1 client segment, 6 server segments.
    assert p.p_no_loss == pytest.approx(0.99**9)


@pytest.mark.bad_input
def test_bad_window_is_refused():
    with pytest.raises(ValueError, match="initcwnd"):
        predict_handshake(
            base_ms=1, client_flight_bytes=1, server_flight_bytes=1, rtt_ms=1, rate_mbit=None,
            mss=1448, initcwnd=0,
        )  # fmt: skip


def _samples():
    rows = []
    # Loopback: small chain (total 2 ms) and big chain (total 6 ms); one warm-up and one
    # failure that must be ignored.
    for sid, total, cbytes, sbytes in (
        ("small", 2.0, 1400, 8000), ("big", 6.0, 1400, 65_000),
        ("small__net_wan", 105.0, 1400, 8000),
    ):  # fmt: skip
        for i in range(5):
            rows.append(
                {
                    "scenario_id": sid, "total_ns": int((total + 0.1 * (i - 2)) * 1e6),
                    "bytes_written": cbytes, "server_bytes_written": sbytes,
                    "client_cpu_ns": 500_000, "server_cpu_ns": 1_000_000,
                    "warmup": False, "outcome": "ok",
                }
            )  # fmt: skip
        rows.append({**rows[-1], "total_ns": 10**12, "warmup": True})
        rows.append({**rows[-1], "total_ns": 1, "warmup": False, "outcome": "failed"})
    return pd.DataFrame(rows)


def _scenarios():
    base = {"kex": "X25519MLKEM768", "depth": 2, "int1_alg": None, "int2_alg": None,
            "leaf_alg": "ML-DSA-44", "served_chain": "full", "handshake_mode": "full",
            "cert_compression": "none"}  # fmt: skip
    return pd.DataFrame(
        [
            {**base, "scenario_id": "small", "root_alg": "ML-DSA-44", "network": "loopback"},
            {**base, "scenario_id": "big", "root_alg": "SLH-DSA-SHAKE-256s", "network": "loopback"},
            {**base, "scenario_id": "small__net_wan", "root_alg": "ML-DSA-44", "network": "wan"},
        ]
    )


def test_predict_projects_every_loopback_scenario_onto_every_profile():
    profiles = profiles_table(
        [{"name": "wan", "delay_ms": 25}, {"name": "lan", "delay_ms": 0.5, "rate_mbit": 100}]
    )
    out = predict(_samples(), _scenarios(), profiles, keys=SCENARIO_KEYS)
    assert len(out) == 4
    by = out.set_index(["loopback_scenario_id", "profile"])
    small_wan = by.loc[("small", "wan")]
    # Client flight = 1400 - 64 (its CCS + Finished leave after its latency ends).
    assert small_wan["client_flight_bytes"] == 1336
    assert small_wan["base_ms"] == pytest.approx(2.0)
    assert small_wan["round_trips"] == 2
    assert small_wan["predicted_ms"] == pytest.approx(102.0)
    assert small_wan["emulated_scenario_id"] == "small__net_wan"
    assert small_wan["emulated_ms"] == pytest.approx(105.0)
    assert small_wan["error_ms"] == pytest.approx(3.0)
    big_wan = by.loc[("big", "wan")]
    assert big_wan["round_trips"] == 4 and bool(big_wan["exceeds_initcwnd"])
    assert big_wan["predicted_ms"] == pytest.approx(206.0)
    assert math.isnan(big_wan["emulated_ms"]) and big_wan["emulated_n"] == 0
    assert by.loc[("small", "lan")]["serialization_ms"] > 0


def test_predict_with_the_cpu_base():
    profiles = profiles_table([{"name": "wan", "delay_ms": 25}])
    out = predict(_samples(), _scenarios(), profiles, base="cpu", keys=SCENARIO_KEYS)
    assert out.set_index("loopback_scenario_id").loc["small", "base_ms"] == pytest.approx(1.5)
    with pytest.raises(ValueError, match="base='wall'"):
        predict(_samples(), _scenarios(), profiles, base="wall", keys=SCENARIO_KEYS)


def test_profiles_table_reads_store_rows_with_json_configured():
    rows = pd.DataFrame(
        [
            {"run_id": "r", "profile": "wan", "flagged": False,
             "configured": json.dumps({"name": "wan", "delay_ms": 25.0, "rate_mbit": 10.0,
                                       "loss": 0.0, "mtu": 1500, "queue_packets": None,
                                       "initcwnd": None, "backend": "tun", "jitter_ms": 0.0})},
        ]
    )  # fmt: skip
    t = profiles_table(rows)
    assert t.to_dict("records") == [
        {"profile": "wan", "rtt_ms": 50.0, "rate_mbit": 10.0, "loss": 0.0, "mtu": 1500,
         "mss": 1448, "initcwnd": 10}
    ]  # fmt: skip


# -- with root and the engine: round trips of real handshakes -----------------------------

RTT_MS = 50.0
HANDSHAKES = 5


def _engine():
    from chainlab import engine
    from chainlab.errors import ChainlabError

    try:
        return str(engine.path())
    except ChainlabError as e:
        pytest.fail(str(e))


def _pki(engine: str, chain: str, out: Path) -> Path:
    done = subprocess.run(
        [engine, "pki", "--chain", chain, "--out", str(out)], capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out


def _median_handshake_ms(engine, pki: Path, wrap_server, wrap_client, host) -> tuple[float, dict]:
    """Median total latency of HANDSHAKES full handshakes (policy `full`) and one record."""
    server = subprocess.Popen(
        wrap_server(
            [engine, "serve", "--pki", str(pki), "--chain", "full", "--listen", f"{host}:0",
             "--groups", "X25519MLKEM768", "--records", str(pki / "server.jsonl"),
             "--max-connections", str(HANDSHAKES + 1)]
        ),
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        ready = json.loads(server.stdout.readline())
        assert ready["event"] == "ready", ready
        port = ready["addr"].rsplit(":", 1)[1]
        done = subprocess.run(
            wrap_client(
                [engine, "handshake", "--connect", f"{host}:{port}", "--ca",
                 str(pki / "ca.pem"), "--groups", "X25519MLKEM768", "--count", str(HANDSHAKES),
                 "--warmup", "1", "--records", "-"]
            ),
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    finally:
        server.terminate()
        server.wait(timeout=10)
    records = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    measured = [r for r in records if not r["warmup"]]
    assert all(r["outcome"] == "ok" for r in measured), measured
    return statistics.median(r["total_ns"] / 1e6 for r in measured), measured[0]


@pytest.mark.netns
@pytest.mark.slow
def test_handshake_round_trips_over_a_50ms_link(root, tmp_path, engine_bin):
    engine = _engine()
    small = _pki(engine, "ML-DSA-44,ML-DSA-44", tmp_path / "small")
    big = _pki(engine, "SLH-DSA-SHAKE-256s,ML-DSA-44", tmp_path / "big")

    def same(argv):
        return argv

    loopback = {
        name: _median_handshake_ms(engine, pki, same, same, "127.0.0.1")
        for name, pki in (("small", small), ("big", big))
    }
    profile = {"name": "wan50", "delay_ms": RTT_MS / 2, "initcwnd": 10}
    with emulated_link(profile, "test-rtts", calibrate=False) as link:
        emulated = {
            name: _median_handshake_ms(
                engine, pki, link.server_cmd, link.client_cmd, link.server_addr
            )
            for name, pki in (("small", small), ("big", big))
        }
    rtts = {n: (emulated[n][0] - loopback[n][0]) / RTT_MS for n in emulated}
    flight = {n: emulated[n][1]["bytes_read"] for n in emulated}
    # The small chain's server flight fits the initial window: TCP connect + one TLS round trip.
    assert flight["small"] < 10 * 1448, flight
    assert round(rtts["small"]) == 2, (rtts, loopback, emulated)
    # The SLH-DSA-SHAKE-256s root (served in full) and the leaf it signed carry two ~30 KB
    # signatures: slow start needs at least one more round trip.
    assert flight["big"] > 40_000, flight
    assert round(rtts["big"]) >= 3, (rtts, loopback, emulated)
    # And the model counts the same round trips.
    for n in emulated:
        p = predict_handshake(
            base_ms=loopback[n][0], client_flight_bytes=emulated[n][1]["bytes_written"] - 64,
            server_flight_bytes=flight[n], rtt_ms=RTT_MS, rate_mbit=None, mss=1448, initcwnd=10,
        )  # fmt: skip
        assert p.round_trips == round(rtts[n]), (n, p, rtts)


def test_quic_first_flight_is_padded_initial_datagrams():
    # X25519's ClientHello fits one 1200-byte Initial; X25519MLKEM768's 1,216-byte share
    # makes it ~1,466 bytes: two datagrams.
    assert model.quic_client_initial_bytes(32) == 1200
    assert model.quic_client_initial_bytes(1216) == 2400


def test_quic_round_trips_follow_the_amplification_limit_then_slow_start():
    # One datagram received: the server may send 3,600 bytes before validation.
    assert model.quic_flight_round_trips(3600, 1200) == 1
    assert model.quic_flight_round_trips(3601, 1200) == 2
    # Two datagrams: 7,200; then IW (12,000) plus what was acknowledged each round.
    assert model.quic_flight_round_trips(7200, 2400) == 1
    assert model.quic_flight_round_trips(7201, 2400) == 2
    assert model.quic_flight_round_trips(26_400, 2400) == 2
    assert model.quic_flight_round_trips(26_401, 2400) == 3
    # The initial window caps the first round too.
    assert model.quic_flight_round_trips(12_001, 6000) == 2


def test_quic_prediction_has_no_connect_round_trip():
    p = model.predict_quic_handshake(
        base_ms=2.0,
        client_initial_bytes=2400,
        server_flight_bytes=5000,
        rtt_ms=50.0,
        rate_mbit=None,
    )
    assert p.round_trips == 1 and p.extra_round_trips == 0
    assert p.latency_ms == 52.0 and not p.exceeds_initcwnd
    slow = model.predict_quic_handshake(
        base_ms=2.0,
        client_initial_bytes=2400,
        server_flight_bytes=40_000,
        rtt_ms=50.0,
        rate_mbit=10.0,
    )
    assert slow.round_trips == 3 and slow.exceeds_initcwnd
    # Serialization: 2 + 34 datagrams of payload plus 28 header bytes each, at 10 Mbit/s.
    assert slow.serialization_ms == pytest.approx((42_400 + 36 * 28) * 8 / 10e3)
