"""The run-time estimate: flight sizes against the engine's byte counts, the projection onto
emulated profiles (round trips, slow start, loss), calibration once per profile, and the
bundled network campaign's total as `chainlab validate` prints it."""

import argparse
import re
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

import chainlab
from chainlab.axes.algorithm_sizes import KEY_SIG_BYTES
from chainlab.axes.algorithms import GROUPS, SIGNATURE_ALGORITHMS
from chainlab.campaign import load, measure_plan
from chainlab.campaign.model import NetworkProfile
from chainlab.commands import validate
from chainlab.model import estimate, flights, orchestration, run_estimate
from chainlab.model.calibration_time import calibration_seconds, calibration_total
from chainlab.network.calibrate import BULK_TARGET_S

REPO = Path(__file__).resolve().parents[2]
NETWORK = REPO / "campaigns" / "network.toml"


@pytest.fixture(scope="module")
def net():
    return load(NETWORK).scenarios


def by(scenarios, hierarchy, network):
    return next(s for s in scenarios.values() if s.hierarchy == hierarchy and s.network == network)


ML2 = ("ML-DSA-65", "ML-DSA-65")
SLHS_FULL = ("SLH-DSA-SHAKE-128s", "ML-DSA-65")
SLHF_LEAF = ("ML-DSA-65", "ML-DSA-65", "SLH-DSA-SHAKE-128f")


def test_size_tables_cover_every_algorithm_and_group():
    assert set(KEY_SIG_BYTES) == {a[0] for a in SIGNATURE_ALGORITHMS}
    assert set(flights.KEY_SHARE_BYTES) == set(GROUPS)


def test_loopback_scenarios_keep_the_cpu_model():
    for s in load(REPO / "campaigns" / "quick.toml").scenarios.values():
        cost = estimate.network_cost(s)
        assert cost.round_trips == 0
        assert estimate.handshake_ms(s) == estimate.loopback_ms(s)


def test_quic_over_a_path_has_no_connect_round_trip_and_waits_at_its_amplification_limit():
    quic = load(REPO / "campaigns" / "quic.toml").scenarios

    def cost(hierarchy, transport):
        s = next(
            s
            for s in quic.values()
            if s.hierarchy == hierarchy
            and s.network == "rtt50"
            and s.handshake.quic == (transport == "quic")
        )
        return estimate.network_cost(s)

    ecdsa = ("ECDSA-P256", "ECDSA-P256")
    # ECDSA's flight fits three times the client's two padded Initials: one round trip, where
    # TCP takes two (connect, then the TLS exchange); measured 51.8 and 102.0 ms (quic.toml).
    assert (cost(ecdsa, "quic").round_trips, cost(ecdsa, "tcp").round_trips) == (1, 2)
    assert cost(ecdsa, "quic").mean_ms == pytest.approx(cost(ecdsa, "tcp").mean_ms - 50, abs=1)
    # A three-certificate ML-DSA-65 flight (~17 KB) waits for the client's acknowledgement.
    assert cost(("ML-DSA-65",) * 3, "quic").round_trips == 2


def test_a_trust_anchor_retry_crosses_the_path_twice():
    mtc = load(REPO / "campaigns" / "mtc.toml").scenarios
    root = "x25519mlkem768__ml44_root__ml44_leaf__mtcl4194304"
    retry, held = mtc[root + "_nolm_retry__net_rtt50"], mtc[root + "__net_rtt50"]
    assert (retry.handshake.connections, held.handshake.connections) == (2, 1)
    two, one = estimate.network_cost(retry), estimate.network_cost(held)
    # Two connections, each a connect and a TLS round trip: 203-205 ms measured (mtc.toml).
    assert two.round_trips == 2 * one.round_trips == 4
    assert two.mean_ms - two.loopback_ms == pytest.approx(2 * (one.mean_ms - one.loopback_ms))
    # Between attempts: a client that defers its closes waits for neither connection's (the
    # failed first one's rest is read after the next handshake too); one that closes at once
    # (Go's) waits a round trip (50 ms) for each.
    gap = estimate.between_attempts_ms
    stack = retry.handshake.stacks[0]
    assert retry.handshake.defers_close_on(stack)
    assert gap(retry, retry.handshake, stack) == gap(held, held.handshake, stack)
    assert gap(retry, retry.handshake, "go") - gap(held, held.handshake, "go") == 50
    # A lagging population: only the share that falls back retries.
    lag = next(s for sid, s in mtc.items() if "_retry__pop_" in sid and sid.endswith("rtt50"))
    share = estimate.connections(lag.handshake) - 1
    assert 0 < share < 1
    assert gap(lag, lag.handshake, "go") - gap(held, held.handshake, "go") == pytest.approx(
        50 * share
    )


def test_round_trips_follow_the_server_flight_against_the_initial_window(net):
    # 10 segments of 1448 bytes: ml root + leaf fits, the other two do not.
    for hierarchy, rounds, large in ((ML2, 2, False), (SLHS_FULL, 3, True), (SLHF_LEAF, 3, True)):
        _, server = flights.flight_bytes(by(net, hierarchy, "wan"))
        assert (server > 14480) is large
        for profile in ("lan", "wan", "lossy"):
            cost = estimate.network_cost(by(net, hierarchy, profile))
            assert (cost.round_trips, cost.exceeds_initcwnd) == (rounds, large)
        loop = estimate.network_cost(by(net, hierarchy, "loopback")).mean_ms
        wan = estimate.network_cost(by(net, hierarchy, "wan"))
        # round trips of 50 ms plus the flights' serialization at 10 Mbit/s
        serialization = (server + 1500) * 8 / 10_000
        assert wan.mean_ms == pytest.approx(loop + rounds * 50 + serialization, rel=0.02)


def test_loss_raises_the_mean_and_the_spread(net):
    s = by(net, SLHS_FULL, "lossy")
    clean = replace(s, network_profile=replace(s.network_profile, loss=0.0))
    lossy, free = estimate.network_cost(s), estimate.network_cost(clean)
    assert free.mean_ms == pytest.approx(free.loopback_ms + 3 * 100, rel=0.01)
    # 1 % per packet on ~19 packets: a few per cent of handshakes pay a 1 s SYN timeout or
    # one RTT + 200 ms, tens of ms on the mean and a spread of the same order as the mean.
    assert 20 < lossy.mean_ms - free.mean_ms < 150
    assert lossy.sd_ms > 10 * free.sd_ms
    assert estimate.scenario(s).handshakes_expected > estimate.scenario(clean).handshakes_expected


def test_calibration_counts_once_per_profile_and_grows_with_rtt_rate_and_loss(net):
    scenarios = list(net.values())
    profiles, seconds = calibration_total(scenarios)
    assert profiles == 3
    each = {s.network: calibration_seconds(s.network_profile)
            for s in scenarios if s.network_profile}  # fmt: skip
    assert seconds == pytest.approx(sum(each.values()))
    assert each["lan"] < each["wan"] < each["lossy"]
    loopback_only = [s for s in scenarios if s.network == "loopback"]
    assert calibration_total(loopback_only) == (0, 0)
    # Without a rate or loss, a 50 ms path's bulk transfer runs to its time bound (a lossy
    # one's is CALIBRATION_LOSSY_BULK_S); a lan's ends within the base.
    wan50 = NetworkProfile(name="wan50", delay_ms=25.0)
    wan5 = NetworkProfile(name="wan5", delay_ms=2.5)
    assert calibration_seconds(wan50) - calibration_seconds(wan5) > BULK_TARGET_S
    assert calibration_seconds(wan50) == pytest.approx(2.50)  # took 2.27 s twice


def test_validate_prints_the_calibration_and_a_network_total_under_five_minutes(capsys):
    args = argparse.Namespace(file=str(NETWORK), campaign=None, workers=None)
    assert validate.run(args) == 0
    out = capsys.readouterr().out
    assert "network calibration: 3 emulated profile(s), once each per run" in out
    m = re.search(r"estimated run time: (?:(\d+)m)?([\d.]+)s", out)
    assert m, out
    total = 60 * int(m.group(1) or 0) + float(m.group(2))
    assert 60 < total < 300


FLIGHTS = """
[campaign]
order = "declared"
[primitives]
measure = false
[aliases]
ml = "ML-DSA-65"
mla = "ML-DSA-44"
slhf = "SLH-DSA-SHAKE-128f"
ec = "ECDSA-P256"
[sampling]
mode = "fixed"
count = 2
warmup = 1
[matrix.kex]
kex = ["X25519", "MLKEM1024", "SecP256r1MLKEM768", "ffdhe2048"]
hierarchy = [["ml", "ml"]]
[matrix.chains]
kex = ["X25519MLKEM768"]
hierarchy = [["mla", "mla"], ["ml", "ml", "slhf"], ["slhf"], ["ec", "ec"], ["ml", "ml", "ml", "ml"]]
served_chain = ["leaf+intermediates", "full"]
[matrix.resumed]
kex = ["X25519"]
hierarchy = [["ml", "ml"]]
handshake_mode = ["resumed"]
"""


def test_flight_sizes_match_what_the_engine_writes(tmp_path, engine_bin, pki_cache):
    """Certificates and both flights as the engine's records count them: client bytes
    exactly, the server's within the spread of certificate names (tens of bytes). No
    primitives: the byte counts are what is checked."""
    from chainlab.runner.campaign import RunOptions, run

    toml = tmp_path / "flights.toml"
    toml.write_text(textwrap.dedent(FLIGHTS))
    c = load(toml)
    summary = run(c, RunOptions(store=tmp_path / "f.duckdb", live_progress=False))
    assert len(summary.completed) == len(c.scenarios) == 15
    st = chainlab.open(tmp_path / "f.duckdb")
    try:
        got = st.query(
            "SELECT scenario_id, median(bytes_written) AS client, "
            "median(server_bytes_written) AS server FROM samples "
            "WHERE NOT warmup AND outcome = 'ok' GROUP BY 1"
        )
        certs = st.certificates
    finally:
        st.close()
    assert len(got) == 15
    for _, row in got.iterrows():
        s = c.scenarios[row["scenario_id"]]
        client, server = flights.flight_bytes(s)
        assert client == row["client"] - 64, s.scenario_id  # less CCS + Finished
        assert server == pytest.approx(row["server"], abs=30), s.scenario_id
        real = certs[certs["scenario_id"] == s.scenario_id].sort_values("position")
        est = list(reversed(flights.certificate_bytes(s)))  # leaf first, as positions
        for e, r in zip(est, real["der_bytes"], strict=True):
            assert e == pytest.approx(r, abs=15), s.scenario_id


def test_the_cluster_estimate_deals_the_longest_scenarios_first():
    from chainlab.campaign import load

    c = load(REPO / "campaigns" / "quick.toml")
    scenarios = list(c.scenarios.values())
    each = sorted((estimate.scenario(s).seconds_expected for s in scenarios), reverse=True)
    one, share_one = run_estimate.cluster_seconds(scenarios, 1)
    assert one == pytest.approx(sum(each)) and share_one == pytest.approx(1.0)
    wide, _ = run_estimate.cluster_seconds(scenarios, len(scenarios))
    assert wide == pytest.approx(each[0])
    two, share = run_estimate.cluster_seconds(scenarios, 2)
    hosts = [0.0, 0.0]
    for t in each:
        hosts[hosts.index(min(hosts))] += t
    assert two == pytest.approx(max(hosts)) and share == pytest.approx(max(hosts) / sum(each))
    with pytest.raises(ValueError, match="at least 1"):
        run_estimate.cluster_seconds(scenarios, 0)


CLOSES = """
[campaign]
name = "closes"
[network.wan50]
delay_ms = 25
[network.nodelay]
rate_mbit = 100
[sampling]
mode = "fixed"
count = 30
warmup = 1
[matrix.m]
kex = ["X25519MLKEM768"]
hierarchy = [["ML-DSA-65", "ML-DSA-65"]]
network = ["loopback", "wan50", "nodelay"]
stack = ["openssl-3.5", "rustls", "boringssl", "go"]
handshake_mode = ["full", "resumed"]
"""


def test_a_client_that_reads_its_close_after_the_next_handshake_pays_no_round_trip_for_it(
    tmp_path,
):
    toml = tmp_path / "closes.toml"
    toml.write_text(textwrap.dedent(CLOSES))
    scenarios = list(load(toml).scenarios.values())

    def one(stack, network, mode="full"):
        (s,) = [
            s
            for s in scenarios
            if s.handshake.stacks[0] == stack and s.network == network and s.handshake.mode == mode
        ]
        return s

    # Over TCP on a path with delay, full handshakes, a client whose engine has it.
    for stack in ("openssl-3.5", "rustls", "boringssl"):
        assert one(stack, "wan50").handshake.defers_close
        assert not one(stack, "loopback").handshake.defers_close
        assert not one(stack, "nodelay").handshake.defers_close
        # A resumed handshake offers the ticket the previous close read.
        assert not one(stack, "wan50", "resumed").handshake.defers_close
    assert not one("go", "wan50").handshake.defers_close
    # The estimate: 30 handshakes and a warm-up, each a round trip (50 ms) shorter where the
    # close waits for no answer before the next; the same handshakes otherwise.
    openssl, go = one("openssl-3.5", "wan50"), one("go", "wan50")
    saved = estimate.scenario(go).seconds_expected - estimate.scenario(openssl).seconds_expected
    handshakes = estimate.network_cost(go).mean_ms - estimate.network_cost(openssl).mean_ms
    gaps = orchestration.connection_gap_ms("go") - orchestration.connection_gap_ms("openssl-3.5")
    assert saved == pytest.approx(31 * (50 + handshakes + gaps) / 1000, rel=1e-6)


def test_a_load_warm_up_is_priced_on_its_path_and_defers_its_close_where_its_client_can(
    tmp_path,
):
    def scenario(network: str, generator: str):
        toml = tmp_path / f"load-{network}-{generator}.toml"
        toml.write_text(
            textwrap.dedent(CLOSES).replace('"loopback", "wan50", "nodelay"', f'"{network}"')
            + f'[load]\nfractions = [0.5]\nwarmup = 20\ngenerator_stack = "{generator}"\n'
        )
        (s,) = [
            s
            for s in load(toml).scenarios.values()
            if s.handshake.stacks[0] == "openssl-3.5" and s.handshake.mode == "full"
        ]
        return s

    rustls, go = scenario("wan50", "rustls"), scenario("wan50", "go")
    # The generator's own engine decides, not the scenario's client's.
    assert rustls.handshake.defers_close_on("rustls")
    assert not go.handshake.defers_close_on("go")
    # 20 warm-ups, each as long as one handshake over the path (about two round trips, not
    # the loopback's milliseconds), and Go's each a close's round trip (50 ms) longer.
    warm = estimate.load_seconds(rustls) - estimate.load_seconds(scenario("loopback", "rustls"))
    assert warm >= 20 * 100 / 1000 - 1e-9
    gaps = orchestration.connection_gap_ms("go") - orchestration.connection_gap_ms("rustls")
    longer = estimate.load_seconds(go) - estimate.load_seconds(rustls)
    assert longer == pytest.approx(20 * (50 + gaps) / 1000, rel=1e-6)


def test_counted_handshakes_over_a_path_pay_its_delays_unslowed_by_callgrind(tmp_path):
    toml = tmp_path / "counted.toml"
    toml.write_text(
        textwrap.dedent(CLOSES).replace('"openssl-3.5", "rustls", "boringssl", "go"', '"rustls"')
        + '[measure]\ninstructions = "callgrind"\ncount = 10\nwarmup = 1\n'
    )
    by_net = {s.network: s for s in load(toml).scenarios.values() if s.handshake.mode == "full"}
    loop, path = by_net["loopback"], by_net["wan50"]
    # On loopback: the handshake's CPU under callgrind (at least its floor) per counted one.
    each = max(
        measure_plan.CALLGRIND_HANDSHAKE_FLOOR_S,
        estimate.loopback_ms(loop) * measure_plan.CALLGRIND_SLOWDOWN / 1000,
    )
    own = estimate.counting_seconds(loop, estimate.network_cost(loop))
    assert own == pytest.approx(measure_plan.CALLGRIND_START_S + 11 * each)
    # Over 50 ms: each also waits the path's share of its latency and its close's round trip.
    net = estimate.network_cost(path)
    over = estimate.counting_seconds(path, net)
    added = net.mean_ms - estimate.loopback_ms(path) + 50
    assert over - own == pytest.approx(11 * added / 1000)
    assert added >= 150 - 1e-9  # two round trips and the close: at least 150 ms each
