"""The whole run's estimate (chainlab.model.run_estimate): known answers for what a run
makes before its scenarios, priced from the built-in table and from a cost model."""

from dataclasses import replace

import pytest

from chainlab.campaign import load
from chainlab.campaign.model import (
    PATH_REFERENCE_COUNT,
    PATH_REFERENCE_WARMUP,
    NetworkProfile,
    PrimitivesPlan,
)
from chainlab.model import cost, estimate, host_speed, orchestration, reference_specs, run_estimate
from chainlab.model.algorithm_costs import SIGN_VERIFY_MS
from chainlab.model.run_estimate import Fresh

from .test_estimate import REPO

QUICK = REPO / "campaigns" / "quick.toml"
SLH, ML = "SLH-DSA-SHAKE-192s", "ML-DSA-65"


def model_with(timings: dict, references: dict | None = None) -> cost.CostModel:
    return cost.CostModel(
        {k: cost.Timing(ms, 0.0, 100) for k, ms in timings.items()},
        {},
        "test",
        references or {},
    )


def test_a_hierarchy_costs_its_signatures_the_root_signing_twice():
    sign = {a: SIGN_VERIFY_MS[a][0] for a in (SLH, ML)}
    got = run_estimate.hierarchy_seconds((SLH, ML, ML))
    # The root signs itself and the intermediate; the intermediate signs the leaf.
    want = run_estimate.PKI_START_S + (2 * sign[SLH] + sign[ML]) / 1000
    assert got == pytest.approx(want)
    assert run_estimate.hierarchy_seconds((ML,)) == pytest.approx(
        run_estimate.PKI_START_S + sign[ML] / 1000
    )
    # A measured signature prices it instead of the table.
    m = model_with({("openssl-3.5", SLH, "sign", cost.CV): 1000.0})
    got = run_estimate.hierarchy_seconds((SLH, SLH), m)
    assert got == pytest.approx(run_estimate.PKI_START_S + 2.0)


def test_a_slow_operation_takes_its_pilot_a_fast_one_its_interval_within_the_cap():
    plan = PrimitivesPlan()
    start = run_estimate.ENGINE_START_DEFAULT_S
    host = run_estimate.HOST_READING_S  # the host reading after each (runner.host.steady)
    m = model_with(
        {
            ("openssl-3.5", SLH, "sign", cost.CV): 1000.0,
            ("openssl-3.5", SLH, "verify", cost.CV): 3.0,
            ("openssl-3.5", ML, "sign", cost.CV): 1.0,
            ("aws-lc", "X25519", "keygen", None): 0.01,
        }
    )
    # 1 s signing: one pilot batch of 5 and its warm-up.
    got = run_estimate.primitive_seconds(("openssl-3.5", "openssl-3.5", SLH, "sign", cost.CV), m)
    assert got == pytest.approx(host + start + 1.0 + 5 * 1.0)
    # Verifying signs its message first, each batch.
    got = run_estimate.primitive_seconds(("openssl-3.5", "openssl-3.5", SLH, "verify", cost.CV), m)
    assert got == pytest.approx(host + start + (3.0 + 1000.0) / 1000 + 5 * 0.003)
    # ML-DSA signing's rejection loop: (1.96 x 0.75 / 0.02)^2 = 5403 operations, 8 s cap;
    # after the pilot, 5.4 s in batches of at most 1 s (BATCH_MAX_S), each with a reading.
    got = run_estimate.primitive_seconds(("openssl-3.5", "openssl-3.5", ML, "sign", cost.CV), m)
    n = 5403
    assert got == pytest.approx(7 * (host + start + 0.001) + n * 0.001, rel=1e-3)
    capped = PrimitivesPlan(time_cap_s=2.0)
    got = run_estimate.primitive_seconds(
        ("openssl-3.5", "openssl-3.5", ML, "sign", cost.CV), m, capped
    )
    assert got == pytest.approx(3 * (host + start + 0.001) + 2.0)
    # The rustls engine starts slower.
    got = run_estimate.primitive_seconds(("rustls", "aws-lc", "X25519", "keygen", None), m, plan)
    assert got == pytest.approx(3 * (host + 0.033 + 0.00001) + 25 * 0.00001)


def test_references_take_their_rounds_at_the_stack_s_measured_latency():
    per_round = 300 / 3 + 20
    gap = orchestration.CONNECTION_GAP_MS  # go's client; the OpenSSL engines' is shorter
    assert orchestration.connection_gap_ms("openssl-3.5") < gap
    start = 0.12 + run_estimate.HOST_READING_S  # server and client, and a host reading after
    default = run_estimate.reference_seconds(("go", "tls-reference:mldsa", "full", None))
    assert default == pytest.approx(3 * (start + per_round * (1.0 + gap) / 1000))
    m = model_with({}, {"go": {("mldsa", "full"): {"latency": 2.0}}})
    got = run_estimate.reference_seconds(("go", "tls-reference:mldsa", "full", None), m)
    assert got == pytest.approx(3 * (start + per_round * (2.0 + gap) / 1000))


def test_the_run_adds_what_it_makes_to_its_scenarios_and_keeps_the_range():
    scenarios = load(QUICK).select(None)
    warm = run_estimate.run(scenarios)
    own = [estimate.scenario(s) for s in scenarios]
    assert warm.phases["scenarios"] == pytest.approx(sum(e.seconds_expected for e in own))
    # One reading and one store commit per window the scenarios fill in the order they run;
    # a run before windows paid them per scenario.
    seconds = [e.seconds_expected for e in own]
    assert warm.phases["windows"] == pytest.approx(
        host_speed.WINDOW_COST_S * host_speed.windows(seconds)
    )
    before = run_estimate.run(scenarios, windowed=False)
    assert before.phases["windows"] == pytest.approx(host_speed.WINDOW_COST_S * len(scenarios))
    assert warm.expected_s == pytest.approx(
        run_estimate.RUN_START_S + warm.phases["scenarios"] + warm.phases["windows"]
    )
    assert warm.low_s <= warm.expected_s <= warm.high_s
    first = scenarios[0]
    fresh = Fresh(
        primitives=(("openssl-3.5", "openssl-3.5", SLH, "sign", cost.CV),),
        references=(("openssl-3.5", "tls-reference:ecdsa", "full", None),),
        hierarchies=((first.scenario_id, first.hierarchy, 0),),
    )
    cold = run_estimate.run(scenarios, None, fresh)
    extra = cold.expected_s - warm.expected_s
    assert extra == pytest.approx(
        cold.phases["primitives"] + cold.phases["references"] + cold.phases["hierarchies"]
    )
    assert cold.phases["hierarchies"] == pytest.approx(
        run_estimate.hierarchy_seconds(first.hierarchy)
    )
    # The ETA charges a hierarchy to the scenario that generates it.
    assert cold.hierarchies_s == {first.scenario_id: cold.phases["hierarchies"]}
    # The range: the handshake counts' widened by the model's own error, what is made first
    # included.
    spread = run_estimate.MODEL_SPREAD
    assert cold.high_s - cold.low_s == pytest.approx(warm.high_s - warm.low_s + 2 * spread * extra)
    assert warm.low_s < (1 - spread / 2) * warm.expected_s
    assert warm.high_s > (1 + spread / 2) * warm.expected_s
    # What a store keeps comes back the same.
    assert Fresh.from_json(cold.to_json()["fresh"]) == fresh


def test_a_scenario_is_charged_the_batches_the_sampler_takes():
    fixed = load(QUICK).select(None)[0].sampling
    adaptive = replace(fixed, mode="adaptive", min=200, max=10_000)
    assert estimate.batches(replace(fixed, mode="fixed"), 5000) == 1
    assert estimate.batches(adaptive, 150) == 1
    assert estimate.batches(adaptive, 300) == 2  # 200, then grown to it
    assert estimate.batches(adaptive, 800) == 2  # 200 -> 800 (4-fold)
    # 200 -> 800, settled: straight to 6000.
    assert estimate.batches(adaptive, 6000) == 3


def test_an_mtc_batch_is_priced_by_its_log_entries_and_old_runs_read_back():
    h = ("ML-DSA-44", "ML-DSA-44")
    plain = run_estimate.hierarchy_seconds(h)
    batch = 2**22
    with_mtc = run_estimate.hierarchy_seconds(h, None, batch)
    # mtc.toml's 2^22-entry batches took 3.4-3.7 s each beyond the estimate without them.
    assert with_mtc - plain == pytest.approx(batch * run_estimate.MTC_ENTRY_S)
    assert 3.0 < with_mtc - plain < 4.0
    scenarios = load(QUICK).select(None)
    fresh = Fresh(hierarchies=((scenarios[0].scenario_id, h, batch),))
    got = run_estimate.run(scenarios, None, fresh)
    assert got.phases["hierarchies"] == pytest.approx(with_mtc)
    assert Fresh.from_json(fresh.to_json()) == fresh
    # A run stored before batches were priced kept (scenario, hierarchy): no batch.
    old = Fresh.from_json({"hierarchies": [[scenarios[0].scenario_id, list(h)]]})
    assert old.hierarchies == ((scenarios[0].scenario_id, h, 0),)


def test_the_latency_spread_is_the_hosts_reference_spread_and_a_composites_rejection_loop():
    c = load(REPO / "campaigns" / "composite.toml")
    rustls = {
        s.hierarchy: s
        for s in c.scenarios.values()
        if s.network == "loopback" and estimate.view(s).stacks == ("rustls", "rustls")
    }
    pure = rustls[("ML-DSA-65",) * 3]
    comp_leaf = rustls[("ML-DSA-65", "ML-DSA-65", "MLDSA65-ECDSA-P256-SHA512")]
    ecdsa = rustls[("ECDSA-P256",) * 3]
    # A composite leaf's ML-DSA component repeats its rejection loop as a pure leaf does:
    # its spread is the pure one's order, far above an ECDSA leaf's floor.
    sd = {s: estimate.network_cost(s).sd_ms for s in (pure, comp_leaf, ecdsa)}
    assert sd[comp_leaf] > 3 * sd[ecdsa]
    assert sd[comp_leaf] == pytest.approx(sd[pure], rel=0.35)
    # The host's jitter is the spread the stack's ECDSA reference handshakes showed (sd over
    # mean, at their latency), its sd growing with the square root of a handshake's length,
    # when it is larger than the built-in 1.7 % of the mean.
    quiet = model_with({}, {"rustls": {host_speed.NOISE_REFERENCE: {"latency": 1.0,
                                                                   "latency_se": 0.001,
                                                                   "n": 100}}})  # fmt: skip
    noisy = model_with({}, {"rustls": {host_speed.NOISE_REFERENCE: {"latency": 1.0,
                                                                   "latency_se": 0.025,
                                                                   "n": 100}}})  # fmt: skip
    assert host_speed.host_cv(noisy, "rustls") == pytest.approx(0.25)
    assert host_speed.host_cv(noisy, "go") == 0.0
    base = estimate.loopback_ms(ecdsa, noisy)
    assert estimate.network_cost(ecdsa, quiet).sd_ms == pytest.approx(
        (estimate.SD_FLOOR_MS**2 + (estimate.CV_PROPORTIONAL * base) ** 2) ** 0.5
    )
    assert estimate.network_cost(ecdsa, noisy).sd_ms == pytest.approx(
        (estimate.SD_FLOOR_MS**2 + 0.25**2 * 1.0 * base) ** 0.5
    )
    # At the reference's latency its spread as it was; four times as long, twice the sd.
    assert host_speed.host_sd_ms(noisy, "rustls", 1.0) == pytest.approx(0.25)
    assert host_speed.host_sd_ms(noisy, "rustls", 4.0) == pytest.approx(0.5)
    assert host_speed.host_sd_ms(noisy, "go", 4.0) == 0.0
    # The jitter is the host's: the calmest stack's spread stands for every stack's (each at
    # its own reference's latency), as a noisier reference was taken in a noisier minute.
    two = model_with({}, {"rustls": noisy.stack_references["rustls"],
                          "go": {host_speed.NOISE_REFERENCE: {"latency": 0.5,
                                                            "latency_se": 0.005,
                                                            "n": 100}}})  # fmt: skip
    assert host_speed.host_cv(two, "go") == pytest.approx(0.1)
    assert host_speed.host_sd_ms(two, "rustls", 4.0) == pytest.approx(0.1 * (1.0 * 4.0) ** 0.5)
    assert host_speed.host_sd_ms(two, "go", 4.0) == pytest.approx(0.1 * (0.5 * 4.0) ** 0.5)
    # ... so its adaptive scenarios are expected to take more handshakes.
    more = estimate.scenario(pure, noisy).handshakes_expected
    assert more > estimate.scenario(pure, quiet).handshakes_expected


def test_other_load_spreads_a_long_handshake_less_than_in_proportion_more_than_the_jitter():
    refs = {
        "openssl-3.5": {host_speed.NOISE_REFERENCE: {"latency": 0.5, "latency_se": 0.0, "n": 9}}
    }
    busy = replace(model_with({}, refs), noise_cv=0.2)
    # At the reference's latency, the load's cv itself.
    assert host_speed.contention_sd_ms(busy, "openssl-3.5", 0.5) == pytest.approx(0.1)
    # Sixteen times as long, within one spell: 16^0.8 = 9.2x the sd, between the square
    # root's 4x and proportion's 16x.
    assert host_speed.CONTENTION_GROWTH == 0.8
    assert host_speed.CONTENTION_SPELL_MS == 20.0
    assert host_speed.contention_sd_ms(busy, "openssl-3.5", 8.0) == pytest.approx(0.1 * 16**0.8)
    # Beyond a spell, with the square root of the length: 80 ms is four spells, twice the
    # sd of one; 2 s a hundred, ten times.
    one = host_speed.contention_sd_ms(busy, "openssl-3.5", 20.0)
    assert one == pytest.approx(0.1 * 40**0.8)
    assert host_speed.contention_sd_ms(busy, "openssl-3.5", 80.0) == pytest.approx(2 * one)
    assert host_speed.contention_sd_ms(busy, "openssl-3.5", 2000.0) == pytest.approx(10 * one)
    # A stack without a reference: in proportion up to a spell; no load read, no spread.
    assert host_speed.contention_sd_ms(busy, "go", 8.0) == pytest.approx(1.6)
    assert host_speed.contention_sd_ms(busy, "go", 80.0) == pytest.approx(0.2 * 20 * 2)
    assert host_speed.contention_sd_ms(replace(busy, noise_cv=0.0), "openssl-3.5", 8.0) == 0.0
    assert host_speed.contention_sd_ms(None, "openssl-3.5", 8.0) == 0.0
    # It is the spread of a long handshake beside the load, where the host's jitter is less.
    h = estimate.view(load(QUICK).scenarios["x25519__ml_root__slhf_leaf"])
    base = estimate.loopback_ms(h, busy)
    got = estimate.latency_sd_ms(h, base, busy)
    load_sd = 0.1 * (min(base, 20.0) / 0.5) ** 0.8 * max(base / 20.0, 1.0) ** 0.5
    assert got == pytest.approx((estimate.SD_FLOOR_MS**2 + load_sd**2) ** 0.5)
    assert load_sd < 0.2 * base / 2


def test_a_path_reference_pays_the_round_trips_its_flights_need():
    """Priced as its handshake over the path (estimate.network_cost): the ML-DSA reference's
    server flight passes the initial window and waits a round trip more than the ECDSA one's
    (2.9 s against 2.0 s per half of 18 handshakes over 50 ms, 2026-11-30); two halves, each
    over its own link, and the twin's two on loopback."""
    wan = NetworkProfile(name="wan50", delay_ms=25.0)

    def priced(name, key):
        r = ("openssl-3.5", reference_specs.REFERENCE_PREFIX + name, "full", key(wan))
        return run_estimate.reference_seconds(r, None, {"wan50": wan})

    ecdsa, mldsa = (
        priced("ecdsa", reference_specs.path_key),
        priced("mldsa", reference_specs.path_key),
    )
    handshakes = PATH_REFERENCE_COUNT + 2 * PATH_REFERENCE_WARMUP
    assert mldsa - ecdsa == pytest.approx(handshakes * 0.050, rel=0.1)
    assert 3.8 < ecdsa < 4.6 and 5.6 < mldsa < 6.6  # 4.1-4.2 and 5.9-6.0 s measured with twins
    assert priced("mldsa", reference_specs.path_base_key) < 0.5
