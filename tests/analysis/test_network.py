"""Emulated networks in the analysis: the profile table and its flag, the share of server
flights above the initial window, predicted versus emulated latency, the projection onto
reference links, and the like-with-like rules, on tests/synthetic.py's network_example
(its docstring gives every value used here)."""

import json
import math

import duckdb
import numpy as np
import pytest
from synthetic import (
    SyntheticScenario,
    build_store,
    network_example,
    network_profile,
)

from chainlab.analysis.analyze import analyze
from chainlab.analysis.network import REFERENCE_PROFILES
from chainlab.errors import ChainlabError
from chainlab.stats import proportion_ci

A = "x25519mlkem768__ml_root__ml_leaf__served_full"
B = "x25519mlkem768__slhdsashake128f_root__ml_leaf__served_full"
C = "x25519__ml_root__ml_leaf__served_full"
D = "mlkem768__ml_root__ml_leaf__served_full__net_net100"
N = 30


def on(sid: str, net: str) -> str:
    return f"{sid}__net_{net}"


@pytest.fixture(scope="module")
def net(tmp_path_factory):
    scenarios, profiles, campaign = network_example(N)
    path = tmp_path_factory.mktemp("net") / "net.duckdb"
    build_store(path, scenarios, network_profiles=profiles, campaign_toml=campaign)
    return analyze(path)


def row(df, **where):
    m = df
    for k, v in where.items():
        m = m[m[k] == v]
    assert len(m) == 1, where
    return m.iloc[0]


def test_profiles_set_measured_beside_configured_with_the_stored_flag(net):
    pr = net.network.profiles
    assert list(pr["profile"]) == ["lan", "net20", "slow20", "net20lossy", "edge", "net100"]
    n100 = row(pr, profile="net100")
    assert n100["rtt_ms"] == 100 and n100["measured_rtt_ms"] == 108
    assert n100["rtt_deviation"] == pytest.approx(0.08)
    assert n100["flagged"] is True
    n20 = row(pr, profile="net20")
    assert n20["flagged"] is False and n20["rtt_deviation"] == pytest.approx(0.01)
    slow = row(pr, profile="slow20")
    assert slow["rate_mbit"] == 10 and slow["rate_deviation"] == pytest.approx(-0.005)
    # MSS = MTU - 52 (timestamps), confirmed by the calibration's TCP_MAXSEG reading
    assert (pr["mss"] == 1448).all() and (pr["window_bytes"] == 14480).all()
    assert n20["mss_confirmed"] is True
    # a profile only the campaign file declares: configured values, no calibration
    edge = row(pr, profile="edge")
    assert edge["source"] == "campaign file (no calibration stored)"
    assert edge["rtt_ms"] == 50 and edge["flagged"] is None
    assert math.isnan(edge["measured_rtt_ms"])
    # 18 % off, not flagged: the stored flag is shown as stored, the deviation beside it
    lan = row(pr, profile="lan")
    assert lan["flagged"] is False and lan["rtt_deviation"] == pytest.approx(0.18)


def test_share_of_server_flights_above_the_initial_window(net):
    pts = net.network.points
    a20 = row(pts, scenario_id=on(A, "net20"))
    assert (a20["n_exceed"], a20["n_server"], a20["exceed_share"]) == (0, N, 0.0)
    b20 = row(pts, scenario_id=on(B, "net20"))
    assert (b20["n_exceed"], b20["exceed_share"]) == (N, 1.0)
    c20 = row(pts, scenario_id=on(C, "net20"))
    k = round(0.6 * N)
    assert c20["n_exceed"] == k
    est, lo, hi = proportion_ci(k, N, 0.95)
    assert (c20["exceed_share"], c20["exceed_share_lo"], c20["exceed_share_hi"]) == (est, lo, hi)
    assert c20["server_flight_bytes"] == 20000  # the median flight
    loop = row(pts, scenario_id=A)
    assert not loop["emulated"] and math.isnan(loop["exceed_share"])
    assert a20["loopback_id"] == A and a20["loopback_median_ms"] == 1.0
    assert a20["extra_median_ms"] == pytest.approx(40.0)


def test_the_window_is_initcwnd_times_mtu_minus_52(make_store):
    # MTU 1400, initcwnd 4: 4 x 1348 = 5,392 bytes fit, one byte more does not
    flights = np.where(np.arange(20) % 2 == 0, 5392.0, 5393.0)
    kw = {"n": 20, "overrides": {"server_bytes_written": flights}}
    p = make_store(
        [SyntheticScenario(**kw), SyntheticScenario(network="small", **kw)],
        network_profiles=[
            network_profile("small", delay_ms=5, mtu=1400, initcwnd=4, measured_rtt_ms=10.0)
        ],
    )
    pts = analyze(p).network.points
    small = row(pts, network="small")
    assert small["window_bytes"] == 5392
    assert (small["n_exceed"], small["exceed_share"]) == (10, 0.5)


def test_predicted_beside_emulated(net):
    pj = net.network.projection.set_index("emulated_id")
    a20 = pj.loc[on(A, "net20")]
    assert a20["loopback_id"] == A
    assert a20["predicted_ms"] == pytest.approx(41.0)  # 1 + 2 x 20
    assert a20["emulated_median_ms"] == pytest.approx(41.0)
    assert (a20["ratio"], a20["ratio_lo"], a20["ratio_hi"]) == pytest.approx((1, 1, 1))
    assert (a20["round_trips"], a20["extra_round_trips"]) == (2, 0)
    assert a20["observed_round_trips"] == pytest.approx(2.0)
    # 40,000 bytes = 28 segments: one slow-start round more (10 + 20 segments)
    b20 = pj.loc[on(B, "net20")]
    assert (b20["round_trips"], b20["extra_round_trips"]) == (3, 1)
    assert b20["exceeds_initcwnd"] and b20["predicted_ms"] == pytest.approx(65.0)
    # 10 Mbit/s: SYN + SYN-ACK 2 x 60 B, client flight 1,436 + 52 B, server 12,000 + 9 x 52
    ser = (2 * 60 + (1436 + 52) + (12000 + 9 * 52)) * 8 / 10e3
    slow = pj.loc[on(A, "slow20")]
    assert slow["serialization_ms"] == pytest.approx(ser)
    assert slow["predicted_ms"] == pytest.approx(1 + 40 + ser) == 52.2608
    # the flagged profile: off against the configured link, exact against the measured one
    a100 = pj.loc[on(A, "net100")]
    assert a100["predicted_ms"] == pytest.approx(201.0)
    assert a100["predicted_measured_link_ms"] == pytest.approx(1 + 2 * 108.0)
    assert a100["ratio"] == pytest.approx(217 / 201)
    assert a100["ratio_measured_link"] == pytest.approx(1.0)
    lan = pj.loc[on(A, "lan")]
    assert lan["predicted_ms"] == pytest.approx(3.0)
    assert lan["predicted_measured_link_ms"] == pytest.approx(3.36)
    # a profile known only from the campaign file still gets a prediction
    assert pj.loc[on(B, "edge"), "predicted_ms"] == pytest.approx(5 + 3 * 50)
    assert math.isnan(pj.loc[on(B, "edge"), "predicted_measured_link_ms"])
    # loss: the model is loss-free; p(no loss) over 2 SYNs + 1 + 9 segments
    lossy = pj.loc[on(A, "net20lossy")]
    assert lossy["p_no_loss"] == pytest.approx(0.98**12)
    assert lossy["emulated_median_ms"] == 41.0 and lossy["emulated_mean_ms"] == pytest.approx(
        41 + 3 * 200 / N
    )
    c20 = pj.loc[on(C, "net20")]
    assert c20["predicted_ms"] == pytest.approx(60.8) and c20["ratio"] == pytest.approx(1.0)
    # no loopback twin: no prediction, and the report says so
    assert D not in pj.index
    assert any(D in note and "loopback twin" in note for note in net.network.notes)


def test_every_loopback_scenario_is_projected_onto_the_reference_links(net):
    rf = net.network.reference
    assert set(rf["scenario_id"]) == {A, B, C}
    assert list(rf[rf["scenario_id"] == A]["profile"]) == [p["name"] for p in REFERENCE_PROFILES]
    ser_a = (2 * 60 + (1436 + 52) + (12000 + 9 * 52)) * 8 / 10e3
    ser_b = (2 * 60 + (1436 + 52) + (40000 + 28 * 52)) * 8 / 10e3
    a10 = row(rf, scenario_id=A, profile=REFERENCE_PROFILES[0]["name"])
    assert a10["predicted_ms"] == pytest.approx(1 + 2 * 10 + ser_a)
    b300 = row(rf, scenario_id=B, profile=REFERENCE_PROFILES[2]["name"])
    assert b300["predicted_ms"] == pytest.approx(5 + 3 * 300 + ser_b)
    assert bool(b300["exceeds_initcwnd"]) and b300["round_trips"] == 3


def test_rtt_and_loss_families(net):
    pts = net.network.points.set_index("scenario_id")
    assert pts.at[on(A, "net20"), "rtt_family"] == "unlimited rate, no loss"
    assert pts.at[on(A, "net100"), "rtt_family"] == "unlimited rate, no loss"
    assert pts.at[on(A, "slow20"), "rtt_family"] == "10 Mbit/s, no loss"
    assert pts.at[on(A, "net20lossy"), "rtt_family"] == "unlimited rate, 2 % loss"
    assert pts.at[on(A, "net20lossy"), "loss_family"] == pts.at[on(A, "net20"), "loss_family"]
    assert pts.at[on(A, "net20"), "joins_loopback_rtt"]
    assert not pts.at[on(A, "slow20"), "joins_loopback_rtt"]


def test_like_with_like(net):
    assert net.reference_network == "loopback"
    m = net.multipliers.set_index("scenario_id")
    # on net20, B is compared with the baseline's counterpart on net20
    assert m.at[on(B, "net20"), "baseline_id"] == on(A, "net20")
    assert m.at[on(B, "net20"), "latency_x"] == pytest.approx(65 / 41)
    assert m.at[B, "baseline_id"] == A and m.at[B, "latency_x"] == pytest.approx(5.0)
    # edge has no baseline counterpart: no multiplier
    assert on(B, "edge") not in m.index
    # class statistics and capacity use the loopback scenarios only
    classes = " ".join(net.classes["scenarios"]).split()
    assert sorted(classes) == sorted([A, B, C])
    assert set(net.capacity["scenario_id"]) == {A, B, C}
    assert set(net.decomposition["scenario_id"]) == {A, B, C}


def test_network_pairs_point_from_the_milder_network(net):
    p = net.pairs[net.pairs["axis"] == "network"]
    got = {(r.from_id, r.to_id) for r in p.itertuples()}
    assert (A, on(A, "net20")) in got
    assert (on(A, "net20"), on(A, "net100")) in got  # larger RTT
    assert (on(A, "net20"), on(A, "net20lossy")) in got  # same RTT, loss
    assert (on(A, "net20"), on(A, "slow20")) in got  # same RTT, a rate limit
    r = row(p, from_id=A, to_id=on(A, "net20"))
    assert r["latency_ratio"] == pytest.approx(41.0)


def test_loopback_only_store_has_no_network_analysis(make_store):
    a = analyze(
        make_store(
            [SyntheticScenario(n=20), SyntheticScenario(n=20, leaf_alg="SLH-DSA-SHAKE-128f")],
            baseline="x25519mlkem768__ml_root__ml_int__ml_leaf",
        )
    )
    assert a.network is None and a.reference_network == "loopback"
    assert "baseline_id" not in a.multipliers


def test_reference_network_without_baseline_or_loopback(make_store):
    a = analyze(
        make_store(
            [
                SyntheticScenario(n=10, network="wan"),
                SyntheticScenario(n=10, network="wan", root_alg="SLH-DSA-SHAKE-128f"),
                SyntheticScenario(n=10, network="lan"),
            ],
            network_profiles=[network_profile("wan", delay_ms=25), network_profile("lan")],
        )
    )
    assert a.reference_network == "wan"
    assert len(a.classes) == 2 and a.network.projection.empty
    assert len(a.network.notes) == 1  # no loopback twins


def test_profile_without_record_is_named(make_store):
    a = analyze(make_store([SyntheticScenario(n=10), SyntheticScenario(n=10, network="ghost")]))
    pr = a.network.profiles
    assert list(pr["source"]) == ["not recorded"] and math.isnan(pr.iloc[0]["rtt_ms"])
    assert any("`ghost`" in n for n in a.network.notes)


@pytest.mark.bad_input
def test_bad_stored_profile_is_one_line_naming_it(make_store):
    p = make_store([SyntheticScenario(n=10), SyntheticScenario(n=10, network="bad")])
    con = duckdb.connect(str(p))
    run = con.execute("SELECT run_id FROM runs").fetchone()[0]
    con.execute(
        "INSERT INTO network_profiles VALUES (?, 'bad', ?, NULL, false)",
        [run, json.dumps({"name": "bad", "delay_ms": -1})],
    )
    con.close()
    with pytest.raises(ChainlabError) as e:
        analyze(p).network  # noqa: B018 (computed when first asked for)
    msg = str(e.value)
    assert "\n" not in msg and "'bad'" in msg and "delay_ms: bad value -1" in msg and str(p) in msg


def test_flag_reads_the_same_when_every_profile_is_flagged(make_store):
    # a column of flags without unknowns must still read True / False, not numpy bools
    p = make_store(
        [SyntheticScenario(n=10), SyntheticScenario(n=10, network="wan")],
        network_profiles=[
            network_profile("wan", delay_ms=25, rate_mbit=10, measured_rtt_ms=50.5,
                            measured_rate_mbit=9.4)
        ],
    )  # fmt: skip
    a = analyze(p)
    wan = a.network.profiles.iloc[0]
    assert wan["flagged"] is True  # rate 6 % low, RTT 1 % high
    assert wan["rate_deviation"] == pytest.approx(-0.06)
    assert row(a.network.points, network="wan")["flagged"] is True
