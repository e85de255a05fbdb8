"""Run-time estimate of a campaign, for `chainlab validate`, `chainlab predict` and the run's
first ETA.

The cost model (docs/campaigns.md, "Estimated run time"; docs/methods/cost-model.md#cost-model):

    loopback handshake_ms = the cost model's prediction (chainlab.model.cost) from the
                           primitives measured on this machine, when a model is given;
                           without one, the built-in table below:
                           BASE_MS + sign_ms(leaf) + sum(verify_ms(issuer) for each link)
    resumed handshake_ms = BASE_MS           (no certificate, no CertificateVerify)
    emulated network:      the loopback time projected onto the profile by
                           chainlab.network.model.predict_handshake (round trips, slow start,
                           serialization) from estimated flight sizes, plus the expected
                           cost of loss (retransmission timeouts)

The leaf's key signs CertificateVerify on every full handshake; the client verifies that
signature and the signature of every certificate on the path below the trust anchor.
Everything else (TCP, key exchange, record layer, process start) is lumped into BASE_MS.
Handshake counts per scenario: fixed mode `count`; adaptive mode a range from `min` to
`max`, cut at the time cap, with the expected count from an estimated coefficient of
variation. A run calibrates each network profile once (chainlab.model.calibration_time).
During a run the ETA rescales this model by the ratio of measured to estimated time.

A target ([targets.<name>]: a server chainlab does not start) is unknown until measured: its
handshakes are estimated at TARGET_HANDSHAKE_MS each, its operations and chain as none.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, replace
from statistics import NormalDist

from chainlab import axes
from chainlab.axes import landmark_lag, rollout
from chainlab.axes.algorithms import COMPOSITE_COMPONENTS, DEFAULT_TRANSPORT
from chainlab.axes.credential import DEFAULT_CA
from chainlab.axes.handshake import Handshake, view
from chainlab.campaign import measure_plan
from chainlab.campaign.model import (
    SAMPLE_GROWTH,
    SETTLED_N,
    SamplingPolicy,
    Scenario,
)
from chainlab.model import cost, orchestration, reference_specs
from chainlab.model.algorithm_costs import SIGN_VERIFY_MS
from chainlab.model.flights import (
    FULL,
    KEY_SHARE_BYTES,
    RESUMED,
    certificate_message_bytes,
    client_certificate_bytes,
    flight_bytes,
)
from chainlab.model.host_speed import contention_sd_ms, host_sd_ms
from chainlab.network.model import (
    predict_handshake,
    predict_quic_handshake,
    quic_client_initial_bytes,
    segments,
)
from chainlab.network.profile import DEFAULT_INITCWND, TCP_IP_OVERHEAD

# Everything in a loopback handshake that is not the leaf signature or chain verification:
# ML-DSA-65 root/leaf + X25519MLKEM768 handshakes measured by the engine through quick.toml on
# this machine kind averaged 1.9-2.1 ms (total_ns); minus that chain's 1.0 ms sign and
# 2 x 0.16 ms verify from the table above.
BASE_MS = 0.7

# The spread of loopback handshake latency, for the expected adaptive count: the leaf's
# signing where it repeats a rejection loop (ML-DSA: a geometric number of rounds, cv 0.72
# to 0.88 of the signing time in three runs' primitives), a floor of scheduling noise, and a
# share proportional to the mean. Measured on 2026-11-27 (signature-placement.toml,
# stacks.toml and quick.toml runs): ML-DSA-65 leaves on OpenSSL sd 0.63-0.74 ms (0.75 x 0.91
# ms signing = 0.68), ML-DSA-44 0.38-0.43 ms (0.43), aws-lc's ML-DSA on rustls 0.06-0.12 ms;
# ECDSA leaves 0.02-0.03 ms whatever the stack. SLH-DSA-SHAKE-192s leaves are bimodal with
# the host's load: 43 of 48 scenario runs (six signature-placement.toml runs) met their 1 %
# interval at the minimum of 10 (cv 0.003-0.012), 5 took 20-45 (a mean of 12.2 handshakes,
# 18.2 s a scenario); CV_PROPORTIONAL = 0.017 expects 12 (16.9 s), which puts each of those
# runs within 15 % of the estimate; the range covers the busy host's 45.
CV_REJECTION_SIGN = 0.75
# Where the client's certificate checks take longer than the server's signing, less of that
# spread shows (they overlap): ML-DSA-65 leaves under an SLH-DSA root or intermediate took
# 942-1371 handshakes to a 1 % interval over three signature-placement.toml runs of
# 2026-11-27 (sd 0.35-0.5 ms), where the whole spread (0.68 ms) would take ~2400.
OVERLAPPED_SHARE = 0.7
SD_FLOOR_MS = 0.03
CV_PROPORTIONAL = 0.017
REJECTION_SIGNERS = ("ML-DSA-44", "ML-DSA-65", "ML-DSA-87")
# A target's handshake before it is measured: a server across a WAN (tens of ms of round
# trips) or a slow one; only the ETA of a probe depends on it.
TARGET_HANDSHAKE_MS = 100.0
# ... and its spread: a network path's latency varies by a few per cent to tens of per cent.
TARGET_CV = 0.2

# -- loss --------------------------------------------------------------------------------
# A lost SYN or SYN-ACK waits for Linux's initial retransmission timeout (TCP_TIMEOUT_INIT,
# 1 s, RFC 6298).
SYN_RTO_MS = 1000.0
# A lost data segment on a connection this young is recovered by a tail loss probe or the
# retransmission timeout, whose floor is Linux's TCP_RTO_MIN (200 ms); the estimate charges
# one RTT + that floor.
DATA_RTO_MIN_MS = 200.0


def mtc_kinds(h: Handshake) -> list[tuple[float, tuple[str, ...], bool]]:
    """(weight, signers verified, retried) of the handshakes against the scenario's
    certificate: one for X.509 or an MTC every attempt takes alike; for a population whose
    kinds hold landmarks of different ages (chainlab.axes.landmark_lag), the share that gets
    a landmark-relative MTC (no signature) and the share that falls back to the standalone
    one (the CA's signature), at once or after the retry."""
    cert = h.credential
    share = landmark_lag.fallback_share(rollout.population_of(h), cert.renewals)
    if not cert.is_mtc or share is None:
        return [(1.0, cert.signers, cert.retry)]
    return [(1 - share, (), False), (share, (cert.ca or DEFAULT_CA,), cert.retry)]


def connections(h: Handshake) -> float:
    """Connections per attempt (Handshake.connections), a lagging population's retry made
    only by the share that falls back."""
    return sum(w * (2 if retry and h.resumed_share == 0 else 1) for w, _, retry in mtc_kinds(h))


def scenario_operations(s: Scenario | Handshake) -> list[cost.Operation]:
    """The scenario's cryptographic operations per handshake (chainlab.model.cost); none
    for a target (its server's chain is not known before it is measured)."""
    h = view(s)
    if h.target is not None:
        return []
    # A client population against one or two chains: each served kind's handshake weighted
    # by its share among them (chainlab.axes.rollout.mixture); and, against a Merkle Tree
    # Certificate, by what each kind verifies (mtc_kinds).
    cert = h.credential
    mixed: defaultdict[cost.OpKey, float] = defaultdict(float)
    for weight, hierarchy, group in h.kinds():
        for mtc_weight, signers, retry in mtc_kinds(h):
            for o in cost.operations(
                hierarchy,
                group,
                h.mode,
                h.compression,
                certificate_message_bytes=certificate_message_bytes(h),
                anchor_depth=h.anchor_depth,
                client_hierarchy=h.client_hierarchy,
                signers=signers if cert.is_mtc else None,
                retry=retry,
            ):
                key = (o.side, o.category, o.subject, o.op, o.message)
                mixed[key] += weight * mtc_weight * o.count
    # What an axis value adds to every handshake (`Axis.operations`).
    for axis in axes.registered():
        if axis.operations is not None and axis.key in h.parts:
            for side, category, subject, op, message, n in axis.operations(h.parts[axis.key], h):
                mixed[(side, category, subject, op, message)] += n
    return [cost.Operation(*k, count=n) for k, n in mixed.items()]


def predict(s: Scenario | Handshake, model: cost.CostModel) -> cost.Prediction:
    """The cost model's prediction for one handshake of the scenario (raises
    cost.MissingPrimitive when the model lacks one of its primitives): its CPU on its path,
    its latency on loopback (network_cost projects it onto the path)."""
    h = view(s)
    client, server = flight_bytes(h)
    kib = (client + server + client_certificate_bytes(h)) / 1024
    p = cost.predict(
        scenario_operations(h), pricing(h, model), cost.ZERO_OVERHEAD, h.mode, kib, connections(h)
    )
    p = _with_peer(p, h, model)
    # On an emulated path, what its reference handshakes measured beyond loopback's at the
    # bytes this one carries (each wait's wake-up, each segment's read:
    # reference_specs.PATH_REFERENCES),
    # where the model has them.
    profile = h.network_profile
    if profile is None:
        return _with_wait(p, h, model)
    extra: dict[str, float] = {}
    borrowed: list[str] = []
    for side, stack in zip(("client", "server"), h.stacks, strict=True):  # h.stacks' order
        got = model.path_extra(stack, profile.name)
        if got is not None:
            line = got[0][side]
            extra |= {side: line.at(kib), f"{side}_se": line.se_ms}
            borrowed += [side] if got[1] else []
    if not extra:
        return p
    extra = {"server": 0.0, "client": 0.0, "server_se": 0.0, "client_se": 0.0} | extra
    # Each connection of the attempt waits on the path.
    extra = {k: connections(h) * v for k, v in extra.items()}
    return p.with_path(extra, profile.name, tuple(borrowed))


def _with_peer(p: cost.Prediction, h: Handshake, model: cost.CostModel) -> cost.Prediction:
    """`p` between two different stacks with what their pair's reference cost each side
    beyond each stack's own (reference_specs.PEER_REFERENCE), where the model holds it."""
    extra = model.peer_extra(h.stacks, h.mode)
    if extra is None:
        return p
    # Each connection of the attempt is between the two.
    return p.with_peer({k: connections(h) * v for k, v in extra.items()})


def _with_wait(p: cost.Prediction, h: Handshake, model: cost.CostModel) -> cost.Prediction:
    """`p` with its client's wake-up after idling reference_specs.LONG_WAIT_MS or more for the
    server's
    signature (by the prediction's own signing time), where the model holds the client
    stack's wait reference (reference_specs.WAIT_REFERENCE). On loopback only: a path's reference
    already pays the wake-up after each of its waits, and the signature lengthens one."""
    extra = model.wait_extras.get(h.stacks[0])
    if extra is None or p.parts["server"].get("sign", 0.0) < reference_specs.LONG_WAIT_MS:
        return p
    # Each connection of the attempt waits for a signature.
    return p.with_wait({k: connections(h) * v for k, v in extra.items()})


def pricing(s: Scenario | Handshake, model: cost.CostModel) -> cost.Pricing:
    """How the model prices the scenario: each side with its stack's implementations and
    its overhead over the scenario's transport (chainlab.model.implementations)."""
    h = view(s)
    return model.pricing(h.stacks, signing(s), "quic" if h.quic else DEFAULT_TRANSPORT)


def signing(s: Scenario | Handshake) -> str | None:
    """The implementation the scenario asks to sign ML-DSA with, or None: each stack's own."""
    value = view(s).parts.get(axes.SIGNATURE_IMPL.key)
    return None if value == axes.SIGNATURE_IMPL.default else value


def missing_primitives(s: Scenario | Handshake, model: cost.CostModel) -> set[cost.PrimitiveKey]:
    """The scenario's operations the model has no timing for."""
    return model.missing(scenario_operations(s), pricing(s, model))


def _prediction(h: Handshake, model: cost.CostModel | None) -> cost.Prediction | None:
    if model is None:
        return None
    try:
        return predict(h, model)
    except cost.MissingPrimitive:
        return None


def loopback_ms(s: Scenario | Handshake, model: cost.CostModel | None = None) -> float:
    """Estimated mean latency of one handshake of the scenario on loopback, in ms."""
    h = view(s)
    p = _prediction(h, model)
    if p is not None:
        return p.latency_ms
    if h.target is not None:
        return TARGET_HANDSHAKE_MS
    sign, _ = SIGN_VERIFY_MS.get(h.leaf_alg or "", (1.0, 0.2))
    # Signed links checked by the client: each certificate below the anchor is verified with
    # its issuer's key; the leaf's CertificateVerify with the leaf's key. A resumed
    # handshake has neither; a resumption mix has them on its full share.
    verify = sum(SIGN_VERIFY_MS.get(a, (1.0, 0.2))[1] for a in h.hierarchy[h.anchor_depth :])
    # Mutual TLS: the client signs its CertificateVerify, the server checks it and the
    # client's chain, in the same way.
    if h.client_hierarchy:
        sign += SIGN_VERIFY_MS.get(h.client_hierarchy[-1], (1.0, 0.2))[0]
        verify += sum(SIGN_VERIFY_MS.get(a, (1.0, 0.2))[1] for a in h.client_hierarchy)
    return BASE_MS + (1 - h.resumed_share) * (sign + verify)


def sign_ms(s: Scenario | Handshake, model: cost.CostModel | None = None) -> float:
    """The leaf's CertificateVerify signature per handshake (0 when resumed; a resumption
    mix signs on its full share), in ms."""
    h = view(s)
    if h.resumed_share == 1 or h.target is not None:
        return 0.0
    p = _prediction(h, model)
    if p is not None:
        return p.parts["server"].get("sign", 0.0)
    return (1 - h.resumed_share) * SIGN_VERIFY_MS.get(h.leaf_alg or "", (1.0, 0.2))[0]


def server_cpu_ms(s: Scenario | Handshake, model: cost.CostModel | None = None) -> float:
    """Estimated server CPU per connection, in ms: the model's prediction, or the leaf's
    CertificateVerify signature (none when resumed) and half the rest of a handshake (key
    exchange, TLS, the kernel)."""
    h = view(s)
    p = _prediction(h, model)
    if p is not None:
        return p.server_ms
    return BASE_MS / 2 + sign_ms(h)


def handshake_ms(s: Scenario, model: cost.CostModel | None = None) -> float:
    """Estimated mean latency of one handshake of the scenario, in ms (on its network), with
    what an axis value adds that this module does not price itself (`Axis.estimate_ms`)."""
    extra = sum(
        axis.estimate_ms(s.value(axis.key), s)
        for axis in axes.registered()
        if axis.estimate_ms is not None
    )
    return network_cost(s, model).mean_ms + extra


@dataclass(frozen=True)
class NetworkCost:
    """A handshake's estimated latency on the scenario's network and its spread."""

    mean_ms: float
    sd_ms: float
    loopback_ms: float
    round_trips: int  # 0 on loopback
    exceeds_initcwnd: bool


def latency_sd_ms(h: Handshake, base_ms: float, model: cost.CostModel | None = None) -> float:
    """The standard deviation of a loopback handshake's latency (see REJECTION_SIGNERS, and
    chainlab.model.host_speed's NOISE_REFERENCE and CONTENTION_GROWTH)."""
    rejection = 0.0
    # A composite leaf's ML-DSA component repeats its rejection loop as a pure one does.
    leaf, share = h.leaf_alg, 1.0
    if leaf in COMPOSITE_COMPONENTS:
        mldsa = COMPOSITE_COMPONENTS[leaf][0]
        share = SIGN_VERIFY_MS[mldsa][0] / SIGN_VERIFY_MS[leaf][0]
        leaf = mldsa
    if leaf in REJECTION_SIGNERS:
        sign = sign_ms(h, model) * share
        rejection = CV_REJECTION_SIGN * sign
        if _certificate_checks_ms(h, model) > sign:
            rejection *= OVERLAPPED_SHARE
    host = [f(model, st, base_ms) for st in set(h.stacks) for f in (host_sd_ms, contention_sd_ms)]
    spread = max([CV_PROPORTIONAL * base_ms, *host])  # the host's jitter, other processes' load
    return math.sqrt(rejection**2 + SD_FLOOR_MS**2 + spread**2)


def _certificate_checks_ms(h: Handshake, model: cost.CostModel | None) -> float:
    """The client's certificate checks per handshake (ms): the model's, else the table's."""
    p = _prediction(h, model)
    if p is not None:
        return p.parts["client"].get("verify certificates", 0.0)
    issuers = h.hierarchy[:-1]  # each issuer's signature on the certificate below it
    return sum(SIGN_VERIFY_MS.get(a, (1.0, 0.2))[1] for a in issuers)


def network_cost(s: Scenario | Handshake, model: cost.CostModel | None = None) -> NetworkCost:
    """Mean and standard deviation of the scenario's handshake latency: loopback, or
    projected onto its emulated profile (see the module doc). A resumption mix is the
    mixture of its full and resumed handshakes (means weighted, variances with the spread
    between the two)."""
    h = view(s)
    if h.target is not None:
        ms = TARGET_HANDSHAKE_MS
        return NetworkCost(ms, TARGET_CV * ms, ms, 0, False)
    r = h.resumed_share
    if 0 < r < 1:
        f = network_cost(replace(h, mode=FULL), model)
        q = network_cost(replace(h, mode=RESUMED), model)
        mean = (1 - r) * f.mean_ms + r * q.mean_ms
        var = (1 - r) * f.sd_ms**2 + r * q.sd_ms**2 + r * (1 - r) * (f.mean_ms - q.mean_ms) ** 2
        base = (1 - r) * f.loopback_ms + r * q.loopback_ms
        return NetworkCost(mean, math.sqrt(var), base, f.round_trips, f.exceeds_initcwnd)
    base = loopback_ms(h, model)
    sd = latency_sd_ms(h, base, model)
    p = h.network_profile
    if p is None:
        return NetworkCost(base, sd, base, 0, False)
    client, server = flight_bytes(h)
    mss = p.mtu - TCP_IP_OVERHEAD
    rtt = 2 * p.delay_ms
    if h.quic:
        # No connect round trip; the server's flight held by the anti-amplification limit
        # (network.model's QUIC projection, as the report's TCP and QUIC section uses).
        share = KEY_SHARE_BYTES.get(h.kex or "", (1200, 1100))[0]
        quic = predict_quic_handshake(
            base_ms=base,
            client_initial_bytes=quic_client_initial_bytes(share),
            server_flight_bytes=server,
            rtt_ms=rtt,
            rate_mbit=p.rate_mbit,
            loss=p.loss,
        )
        trips = connections(h) * quic.round_trips
        var = sd**2 + trips * 2 * p.jitter_ms**2 / 3
        mean = base + connections(h) * (quic.latency_ms - base)
        # A lagging population's retry (a share of its attempts): the typical attempt's trips.
        return NetworkCost(mean, math.sqrt(var), base, round(trips), quic.exceeds_initcwnd)
    pred = predict_handshake(
        base_ms=base,
        client_flight_bytes=client,
        server_flight_bytes=server,
        rtt_ms=rtt,
        rate_mbit=p.rate_mbit,
        mss=mss,
        initcwnd=p.initcwnd or DEFAULT_INITCWND,
        loss=p.loss,
    )
    # Loss: a lost SYN or SYN-ACK costs the initial RTO, any lost data segment on the
    # critical path about one RTT + the minimum RTO. Each is a Bernoulli event of the
    # handshake; the spread is that of the two.
    p_syn = 1 - (1 - p.loss) ** 2
    p_data = 1 - (1 - p.loss) ** (segments(client, mss) + segments(server, mss))
    data_penalty = rtt + DATA_RTO_MIN_MS
    # Each connection of the attempt (two for an MTC's trust-anchor retry, its flights taken
    # as the second's) crosses the path in full: 203 ms measured over 50 ms, not 101.
    n = connections(h)
    mean = base + n * (pred.latency_ms - base + p_syn * SYN_RTO_MS + p_data * data_penalty)
    # Jitter: each round trip's two one-way delays wander within +-jitter (sd jitter/sqrt(3)
    # each at most); the round trips of one handshake are taken as independent.
    jitter_var = n * pred.round_trips * 2 * p.jitter_ms**2 / 3
    var = (
        sd**2
        + jitter_var
        + n * p_syn * (1 - p_syn) * SYN_RTO_MS**2
        + n * p_data * (1 - p_data) * data_penalty**2
    )
    trips = round(n * pred.round_trips)  # a lagging population's retry: the typical attempt's
    return NetworkCost(mean, math.sqrt(var), base, trips, pred.exceeds_initcwnd)


@dataclass
class Estimate:
    handshakes_low: int
    handshakes_expected: int
    handshakes_high: int
    seconds_low: float
    seconds_expected: float
    seconds_high: float


def scenario(s: Scenario, model: cost.CostModel | None = None) -> Estimate:
    """Estimated handshake counts and seconds of one scenario (without the calibration of
    its network profile, which a run does once per profile: `calibration_seconds`)."""
    p = s.sampling
    net = network_cost(s, model)
    ms = net.mean_ms
    own_link = s.network_profile is not None and not s.shares_link
    overhead = orchestration.scenario_s(model, own_link)
    if p.mode == "fixed":
        low = expected = high = p.count
    else:
        cv = net.sd_ms / ms
        z = NormalDist().inv_cdf(0.5 + p.confidence / 2)
        need = math.ceil((z * cv / p.target_rel_halfwidth) ** 2)
        low, high = p.min, p.max
        expected = min(max(need, p.min), p.max)
    warm = p.warmup

    h = view(s)
    gap = between_attempts_ms(s, h, h.stacks[0])

    def secs(n: int) -> float:
        t = (n + warm) * (ms + gap) / 1000 + orchestration.batches_s(
            model, batches(p, n), n + warm, s.keeps_server
        )
        if p.time_cap_s is not None:
            t = min(t, p.time_cap_s + ms / 1000)
        return t + overhead

    def cap(n: int) -> int:
        if p.time_cap_s is None:
            return n
        return min(n, max(1, int(p.time_cap_s * 1000 / ms)))

    extra = load_seconds(s, model) + counting_seconds(s, net)
    return Estimate(
        cap(low),
        cap(expected),
        cap(high),
        secs(low) + extra,
        secs(expected) + extra,
        secs(high) + extra,
    )


def counting_seconds(s: Scenario, net: NetworkCost) -> float:
    """A scenario's instruction counting (measure_plan.seconds) from its handshake's cost on
    its network (`network_cost`): the loopback CPU under callgrind, and over a path what the
    link adds to each attempt (the counted client closes at once: its close's round trip
    too)."""
    profile = s.network_profile
    path = max(0.0, net.mean_ms - net.loopback_ms) + 2 * profile.delay_ms if profile else 0.0
    return measure_plan.seconds(s, net.loopback_ms, path)


def between_attempts_ms(s: Scenario, h: Handshake, client_stack: str) -> float:
    """What one client's attempt adds to the next one's start besides its handshake: the
    connection's set-up and, unless the client defers it, its close's round trip, once per
    connection where it retries (an MTC's trust-anchor retry: its failed first connection
    waits for the server's close before the retry unless that too is deferred; over 50 ms
    the gap between retried attempts was 102 ms with neither deferred, 51 ms with the
    retry's close deferred: mtc.toml's anchors, 2026-11-30)."""
    profile = s.network_profile
    rtt = 2 * profile.delay_ms if profile else 0.0
    close_rtt = rtt if not h.defers_close_on(client_stack) else 0.0
    return orchestration.connection_gap_ms(client_stack) + connections(h) * close_rtt


def batches(p: SamplingPolicy, n: int) -> int:
    """Client batches a scenario takes to `n` measured handshakes (chainlab.runner.sampler):
    one to `min`, then growing SAMPLE_GROWTH-fold while below SETTLED_N, then one to the
    predicted count."""
    if p.mode == "fixed" or n <= p.min:
        return 1
    got, cur = 1, max(p.min, 1)
    while cur < n:
        cur = min(cur * SAMPLE_GROWTH, n) if cur < SETTLED_N else n
        got += 1
    return got


# Capacity-measurement attempts a load plan is expected to need (the first usually
# saturates; an underestimated capacity doubles the offered rate once or twice), and the
# seconds each step costs beyond its schedule (engine start, server records drained, rows,
# the host reference). With these, load.toml was estimated at 7m59s and took 8m00s.
LOAD_CAPACITY_TRIES = 1.5
LOAD_STEP_OVERHEAD_S = 0.6


def load_seconds(s: Scenario, model: cost.CostModel | None = None) -> float:
    """Estimated wall time of the scenario's [load] steps (0 without [load])."""
    plan = s.load
    if plan is None:
        return 0.0
    steps = len(plan.rates if plan.rates is not None else plan.fractions or ())
    # The warm-up handshakes, one at a time on the scenario's path.
    h = view(s)
    one = network_cost(s, model).mean_ms
    warm = plan.warmup * (one + between_attempts_ms(s, h, plan.generator_of(h.stacks[0])))
    warm /= 1000
    t = warm + LOAD_CAPACITY_TRIES * (plan.capacity_s + LOAD_STEP_OVERHEAD_S)
    # The sustainable-rate search, as long as capacity steps (only before `fractions`).
    search = plan.search_steps if plan.fractions is not None else 0
    t += search * (plan.capacity_s + LOAD_STEP_OVERHEAD_S)
    return t + steps * (plan.step_s + LOAD_STEP_OVERHEAD_S)


def fmt_duration(seconds: float) -> str:
    """3725 -> '1h02m05s', 65 -> '1m05s', 4.2 -> '4.2s'."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    s = int(round(seconds))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}h{m:02d}m{sec:02d}s" if h else f"{m}m{sec:02d}s"
