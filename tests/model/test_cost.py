"""The cost model's operation lists for hand-worked hierarchies, and its arithmetic."""

import math
import textwrap

import pytest

from chainlab.axes.algorithms import SERVED_CHAINS
from chainlab.campaign.loader import load
from chainlab.campaign.model import NetworkProfile
from chainlab.model import cost, cost_fit, estimate, reference_specs
from chainlab.runner import references

ML, SLH, EC = "ML-DSA-65", "SLH-DSA-SHAKE-128f", "ECDSA-P256"


def counts(ops, side):
    """{(subject, op, message): count} of one side."""
    out = {}
    for o in ops:
        if o.side == side:
            out[o.key] = out.get(o.key, 0) + o.count
    return out


def test_depth_1_self_signed_leaf_verifies_only_the_certificate_verify():
    ops = cost.operations((ML,), "X25519MLKEM768")
    assert counts(ops, "server") == {
        (ML, "sign", "cv"): 1,
        ("X25519MLKEM768", "encaps", None): 1,
    }
    # The self-signed leaf is the trust anchor: its own signature is not verified.
    assert counts(ops, "client") == {
        ("X25519MLKEM768", "keygen", None): 1,
        ("X25519MLKEM768", "decaps", None): 1,
        (ML, "verify", "cv"): 1,
    }


@pytest.mark.parametrize("served", SERVED_CHAINS)
def test_depth_2_to_4_verify_every_certificate_below_the_anchor(served):
    # The served chain changes the bytes, never the operations.
    for hierarchy, issuers in [
        ((SLH, ML), {SLH: 1}),
        ((SLH, ML, ML), {SLH: 1, ML: 1}),
        ((EC, SLH, ML, ML), {EC: 1, SLH: 1, ML: 1}),
        ((ML, ML, ML, ML), {ML: 3}),
    ]:
        client = counts(cost.operations(hierarchy, "X25519"), "client")
        certs = {k[0]: n for k, n in client.items() if k[1:] == ("verify", "cert")}
        assert certs == issuers, hierarchy
        assert client[(hierarchy[-1], "verify", "cv")] == 1
        server = counts(cost.operations(hierarchy, "X25519"), "server")
        assert server == {
            (hierarchy[-1], "sign", "cv"): 1,
            ("X25519", "keygen", None): 1,
            ("X25519", "derive", None): 1,
        }


def test_mixed_hierarchy_counts_per_algorithm_and_side():
    ops = cost.operations((EC, ML, SLH), "P-256")
    assert counts(ops, "server") == {
        (SLH, "sign", "cv"): 1,
        ("P-256", "keygen", None): 1,
        ("P-256", "derive", None): 1,
    }
    assert counts(ops, "client") == {
        ("P-256", "keygen", None): 1,
        ("P-256", "derive", None): 1,
        (SLH, "verify", "cv"): 1,
        (ML, "verify", "cert"): 1,  # the leaf, signed by the intermediate
        (EC, "verify", "cert"): 1,  # the intermediate, signed by the root
    }


def test_resumed_handshake_has_only_the_key_exchange():
    ops = cost.operations(
        (SLH, SLH, SLH), "MLKEM768", "resumed", "zstd", certificate_message_bytes=9
    )
    assert counts(ops, "server") == {("MLKEM768", "encaps", None): 1}
    assert counts(ops, "client") == {
        ("MLKEM768", "keygen", None): 1,
        ("MLKEM768", "decaps", None): 1,
    }


def test_without_verification_only_the_certificate_verify_is_checked():
    client = counts(cost.operations((ML, ML, ML), "X25519", verify=False), "client")
    assert client[(ML, "verify", "cv")] == 1
    assert not any(k[2] == "cert" for k in client)


def test_decompression_scales_with_the_certificate_message():
    ops = cost.operations(
        (ML, ML),
        "X25519",
        cert_compression="brotli",
        certificate_message_bytes=2 * cost.DECOMPRESS_BYTES,
    )
    assert counts(ops, "client")[("brotli", "decompress", None)] == 2
    with pytest.raises(ValueError):
        cost.operations((ML, ML), "X25519", cert_compression="zlib")


# Primitive timings of a fixture: mean ms, se ms.
T = {
    (SLH, "sign", "cv"): cost.Timing(40.0, 0.4, 10),
    (SLH, "verify", "cv"): cost.Timing(2.0, 0.02, 10),
    (SLH, "verify", "cert"): cost.Timing(2.1, 0.03, 10),
    (ML, "sign", "cv"): cost.Timing(1.0, 0.01, 10),
    (ML, "verify", "cv"): cost.Timing(0.2, 0.002, 10),
    (ML, "verify", "cert"): cost.Timing(0.25, 0.002, 10),
    ("X25519MLKEM768", "keygen", None): cost.Timing(0.07, 0.001, 10),
    ("X25519MLKEM768", "encaps", None): cost.Timing(0.08, 0.001, 10),
    ("X25519MLKEM768", "decaps", None): cost.Timing(0.06, 0.001, 10),
}


def test_predictions_are_the_hand_computed_sums():
    ops = cost.operations((SLH, ML, ML), "X25519MLKEM768")
    over = cost.Overhead(
        {
            "server": cost.Line(0.3, 0.01),
            "client": cost.Line(0.4, 0.02),
            "latency": cost.Line(0.5, 0.03),
        },
        {k: cost.Line(0.0, 0.0) for k in ("server", "client", "latency")},
    )
    p = cost.predict(ops, T, over, "full", kib=10.0)
    # server: sign with the ML-DSA leaf + encapsulation + 0.3 + 0.01 x 10
    assert p.server_ms == pytest.approx(1.0 + 0.08 + 0.4)
    # client: keygen + decaps + CertificateVerify (ML) + leaf cert by ML int + int by SLH root
    client_prims = 0.07 + 0.06 + 0.2 + 0.25 + 2.1
    assert p.client_ms == pytest.approx(client_prims + 0.4 + 0.2)
    assert p.latency_ms == pytest.approx(1.0 + 0.08 + client_prims + 0.5 + 0.3)
    assert p.primitives_ms("server") == pytest.approx(1.08)
    assert p.parts["client"]["verify certificates"] == pytest.approx(2.35)
    # Standard errors add in quadrature.
    assert p.server_se == pytest.approx(math.hypot(0.01, 0.001))
    with pytest.raises(cost.MissingPrimitive):
        cost.predict(cost.operations((EC,), "X25519"), T)


def ref(name, mode, latency, client, server, kib, message=None):
    """A reference handshake's summary row (Store.primitive_summary), in ms and KiB."""
    return {
        "subject": reference_specs.REFERENCE_PREFIX + name,
        "op": mode,
        "message": message,
        "n": 100,
        "wall_mean": latency * 1e6,
        "wall_var": 0.0,
        "cpu_mean": client * 1e6,
        "cpu_var": 0.0,
        "server_mean": server * 1e6,
        "server_var": 0.0,
        "kib": kib,
    }


def prim(subject, op, message, ms):
    """A primitive's summary row, in ms."""
    return {"subject": subject, "op": op, "message": message, "n": 10, "cpu_mean": ms * 1e6,
            "cpu_var": 0.0}  # fmt: skip


# The reference chains' primitives (OpenSSL 3.5's, unrecorded as a store before schema 13).
REFERENCE_PRIMITIVES = [
    prim("ECDSA-P256", "sign", "cv", 0.02),
    prim("ECDSA-P256", "verify", "cv", 0.06),
    prim("ECDSA-P256", "verify", "cert", 0.06),
    prim("ML-DSA-44", "sign", "cv", 0.5),
    prim("ML-DSA-44", "verify", "cv", 0.1),
    prim("ML-DSA-44", "verify", "cert", 0.1),
    prim("X25519", "keygen", None, 0.03),
    prim("X25519", "derive", None, 0.03),
]


def test_the_overhead_line_runs_through_the_references():
    rows = [
        *REFERENCE_PRIMITIVES,
        ref("ecdsa", "full", 0.80, 0.50, 0.30, 1.0),
        ref("ecdsa", "resumed", 0.45, 0.26, 0.27, 0.8),
        ref("mldsa", "full", 1.60, 0.90, 0.90, 15.0),
    ]
    m = cost_fit.model_from_summary(rows, "fixture")
    # ecdsa full: server prims 0.02 + 0.06 = 0.08 -> overhead 0.22 at 1 KiB;
    # mldsa full: server prims 0.5 + 0.06 = 0.56 -> overhead 0.34 at 15 KiB.
    line = m.overhead.full["server"]
    assert line.at(1.0) == pytest.approx(0.22)
    assert line.at(15.0) == pytest.approx(0.34)
    # resumed: flat through the one resumed reference (prims 0.06)
    assert m.overhead.resumed["server"].at(123.0) == pytest.approx(0.21)
    # A reference predicted with the model reproduces its measured mean.
    ops = cost.operations(("ML-DSA-44",) * 3, "X25519")
    p = cost.predict(ops, m.timings, m.overhead, "full", 15.0)
    assert (p.server_ms, p.client_ms, p.latency_ms) == pytest.approx((0.90, 0.90, 1.60))


def test_an_attempt_of_two_connections_pays_the_overhead_on_each():
    rows = [
        *REFERENCE_PRIMITIVES,
        ref("ecdsa", "full", 0.80, 0.50, 0.30, 1.0),
        ref("mldsa", "full", 1.60, 0.90, 0.90, 15.0),
    ]
    m = cost_fit.model_from_summary(rows, "fixture")
    ops = cost.operations(("ECDSA-P256",) * 2, "X25519")
    one = cost.predict(ops, m.pricing(("openssl-3.5",) * 2), kib=1.0)
    two = cost.predict(ops, m.pricing(("openssl-3.5",) * 2), kib=1.0, connections=2)
    assert two.overhead == pytest.approx({k: 2 * v for k, v in one.overhead.items()})
    assert two.server_ms - one.server_ms == pytest.approx(one.overhead["server"])


def test_a_path_reference_adds_what_it_measured_beyond_loopback_to_that_path_only():
    def ref(message, client, server):
        return {
            "implementation": "openssl-3.5",
            "subject": reference_specs.REFERENCE_PREFIX + "ecdsa",
            "op": "full",
            "message": message,
            "n": 100,
            "wall_mean": 1e6,
            "wall_var": 0.0,
            "cpu_mean": client * 1e6,
            "cpu_var": 0.0,
            "server_mean": server * 1e6,
            "server_var": 0.0,
            "kib": 1.0,
        }

    wan = NetworkProfile(name="wan", delay_ms=25.0)
    key = reference_specs.path_key(wan)
    assert key.startswith("path:wan:") and reference_specs.path_profile(key) == "wan"
    # A changed profile is another key (it is measured again).
    assert reference_specs.path_key(NetworkProfile(name="wan", delay_ms=50.0)) != key
    rustls = {"implementation": "rustls"}
    rows = [
        ref(None, 0.50, 0.30),
        ref(key, 1.05, 0.72),
        {**ref(None, 0.30, 0.20), **rustls},
        {**ref(key, 0.60, 0.35), **rustls},  # rustls' own: beyond rustls' loopback one
        {**ref(key, 9.0, 9.0), "implementation": "go"},  # no loopback reference: no extra
    ]
    m = cost_fit.model_from_summary(rows, "fixture")
    # A store with the ECDSA path reference alone (before the ML-DSA one): flat in KiB.
    lines = m.path_extras[("openssl-3.5", "wan")]
    assert [lines[side].per_kib_ms for side in cost.SIDES] == [0.0, 0.0]
    assert (lines["client"].at(20.0), lines["server"].at(20.0)) == pytest.approx((0.55, 0.42))
    own = m.path_extras[("rustls", "wan")]
    assert (own["client"].at(1.0), own["server"].at(1.0)) == pytest.approx((0.30, 0.15))
    assert ("go", "wan") not in m.path_extras
    # Each stack its own; a stack without one is priced with the reference stack's, named
    # as borrowed.
    assert m.path_extra("rustls", "wan") == (own, False)
    assert m.path_extra("go", "wan") == (lines, True)
    assert m.path_extra("openssl-3.5", "lan") is None
    # The path reference is not a loopback reference of its stack.
    assert m.stack_references["openssl-3.5"][("ecdsa", "full")]["server"] == pytest.approx(0.30)
    assert "go" not in m.stack_references
    p = cost.Prediction(1.0, 0.8, 1.5, 0.01, 0.01, 0.01)
    extra = {side: lines[side].at(1.0) for side in cost.SIDES} | {
        f"{side}_se": lines[side].se_ms for side in cost.SIDES
    }
    on_path = p.with_path(extra)
    assert (on_path.server_ms, on_path.client_ms) == pytest.approx((1.42, 1.35))
    assert on_path.latency_ms == 1.5 and on_path.path == pytest.approx(
        {"server": 0.42, "client": 0.55}
    )
    assert on_path.borrowed == set()
    # On another stack's side the figure is the reference stack's: named as borrowed.
    other = p.with_path(extra, "wan", ("server",))
    assert other.borrowed == {("server", "wan path", "CPU")}
    assert other.server_ms == on_path.server_ms


def test_a_path_reference_is_measured_against_its_loopback_twin_not_the_cached_loopback():
    wan = NetworkProfile(name="wan", delay_ms=25.0)
    key, twin = reference_specs.path_key(wan), reference_specs.path_base_key(wan)
    assert twin.startswith(reference_specs.PATH_BASE_PREFIX)
    assert reference_specs.path_profile(twin) == "wan"
    assert reference_specs.is_path_reference(twin) and reference_specs.is_path_reference(key)
    assert not reference_specs.is_path_reference(None)
    rows = [
        *REFERENCE_PRIMITIVES,
        # The loopback references, taken when the host was faster.
        ref("ecdsa", "full", 0.80, 0.50, 0.30, 1.0),
        ref("mldsa", "full", 1.60, 0.90, 0.90, 15.0),
        # The path references and, around them, their loopback twins on the slower host.
        ref("ecdsa", "full", 51.0, 0.90, 0.60, 1.0, key),
        ref("mldsa", "full", 52.0, 1.60, 1.40, 15.0, key),
        ref("ecdsa", "full", 0.90, 0.70, 0.40, 1.0, twin),
        ref("mldsa", "full", 1.80, 1.20, 1.10, 15.0, twin),
    ]
    m = cost_fit.model_from_summary(rows, "fixture")
    lines, _ = m.path_extra("openssl-3.5", "wan")
    # Beyond the twins: 0.20 / 0.40 on the client, 0.20 / 0.30 on the server (beyond the
    # cached loopback ones it would be 0.40 / 0.70 and 0.30 / 0.50).
    assert lines["client"].at(1.0) == pytest.approx(0.20)
    assert lines["client"].at(15.0) == pytest.approx(0.40)
    assert lines["server"].at(15.0) == pytest.approx(0.30)
    # The twins are no part of the stack's overhead line: that stays the loopback ones'.
    assert m.stack_references["openssl-3.5"][("mldsa", "full")]["client"] == pytest.approx(0.90)


def test_two_path_references_give_a_line_in_kib_priced_at_the_scenarios_bytes(tmp_path):
    wan = NetworkProfile(name="wan", delay_ms=25.0)
    key = reference_specs.path_key(wan)
    rows = [
        *REFERENCE_PRIMITIVES,
        ref("ecdsa", "full", 0.80, 0.50, 0.30, 1.0),
        ref("mldsa", "full", 1.60, 0.90, 0.90, 15.0),
        # Over the path the ECDSA one paid 0.20 / 0.10 more, the ML-DSA one 0.48 / 0.24.
        ref("ecdsa", "full", 51.0, 0.70, 0.40, 1.0, key),
        ref("mldsa", "full", 52.0, 1.38, 1.14, 15.0, key),
    ]
    m = cost_fit.model_from_summary(rows, "fixture")
    lines, borrowed = m.path_extra("openssl-3.5", "wan")
    assert not borrowed
    # Through (1 KiB, 0.20) and (15 KiB, 0.48): 0.02 ms a KiB on the client; the server
    # (1, 0.10) and (15, 0.24): 0.01 ms a KiB.
    assert lines["client"].per_kib_ms == pytest.approx(0.02)
    assert lines["client"].at(8.0) == pytest.approx(0.34)
    assert lines["server"].at(29.0) == pytest.approx(0.38)
    # A falling line is the references' noise: flat at their mean.
    noisy = [r if r["message"] != key or r["subject"].endswith("ecdsa") else
             ref("mldsa", "full", 52.0, 0.95, 0.92, 15.0, key) for r in rows]  # fmt: skip
    flat = cost_fit.model_from_summary(noisy, "fixture").path_extras[("openssl-3.5", "wan")]
    assert flat["client"].per_kib_ms == 0.0
    assert flat["client"].at(0.0) == pytest.approx((0.20 + 0.05) / 2)

    # A scenario over the path is priced with the line at the bytes it carries, per
    # connection.
    toml = tmp_path / "c.toml"
    toml.write_text(
        textwrap.dedent(
            """
            [campaign]
            order = "declared"
            [network.wan]
            delay_ms = 25
            [sampling]
            mode = "fixed"
            count = 2
            [matrix.m]
            kex = ["X25519"]
            hierarchy = [["ECDSA-P256", "ECDSA-P256"], ["ML-DSA-44", "ML-DSA-44", "ML-DSA-44"]]
            network = ["wan"]
            """
        )
    )
    got = []
    for s in load(toml).scenarios.values():
        assert reference_specs.path_key(s.network_profile) == key
        client, server = estimate.flight_bytes(estimate.view(s))
        kib = (client + server) / 1024
        p = estimate.predict(s, m)
        assert p.path["client"] == pytest.approx(lines["client"].at(kib))
        assert p.path["server"] == pytest.approx(lines["server"].at(kib))
        got.append((kib, p.path["client"]))
    (small, small_extra), (big, big_extra) = sorted(got)
    assert big > 3 * small and big_extra > small_extra


def test_a_peer_reference_adds_what_each_side_cost_beyond_its_own_stack(tmp_path):
    boring, openssl = {"implementation": "boringssl"}, {"implementation": "openssl-3.5"}
    peer = reference_specs.PEER_PREFIX + "openssl-3.5"
    assert reference_specs.peer_of(peer) == "openssl-3.5" and reference_specs.peer_of(None) is None
    rows = [
        *[{**r, **openssl} for r in REFERENCE_PRIMITIVES],
        *[{**r, **boring} for r in REFERENCE_PRIMITIVES],
        {**ref("ecdsa", "full", 0.80, 0.50, 0.30, 1.0), **openssl},
        {**ref("ecdsa", "full", 0.60, 0.33, 0.25, 1.0), **boring},
        # An OpenSSL client to BoringSSL's server: the server 0.035 ms above its own pair,
        # the client 0.02 ms below.
        {**ref("ecdsa", "full", 0.70, 0.48, 0.285, 1.0, peer), **boring},
    ]
    m = cost_fit.model_from_summary(rows, "fixture")
    extra = m.peer_extras[("openssl-3.5", "boringssl")]
    assert (extra["server"], extra["client"]) == pytest.approx((0.035, -0.02))
    assert set(m.peer_extras) == {("openssl-3.5", "boringssl")}
    # The peer reference is not a reference of either stack.
    assert m.stack_references["boringssl"][("ecdsa", "full")]["server"] == pytest.approx(0.25)

    toml = tmp_path / "c.toml"
    toml.write_text(
        textwrap.dedent(
            """
            [campaign]
            order = "declared"
            [sampling]
            mode = "fixed"
            count = 2
            [matrix.m]
            kex = ["X25519"]
            hierarchy = [["ECDSA-P256", "ECDSA-P256"]]
            client_stack = ["openssl-3.5", "boringssl"]
            server_stack = ["boringssl"]
            handshake_mode = ["full", "resumed"]
            """
        )
    )
    by_pair = {
        (estimate.view(s).stacks, estimate.view(s).mode): s for s in load(toml).scenarios.values()
    }
    cross = ("openssl-3.5", "boringssl")
    p = estimate.predict(by_pair[(cross, "full")], m)
    assert p.peer == pytest.approx({"server": 0.035, "client": -0.02})
    own = estimate.predict(by_pair[(("boringssl", "boringssl"), "full")], m)
    assert own.peer == {}
    # A resumed handshake between them: the peer reference is a full one.
    assert estimate.predict(by_pair[(cross, "resumed")], m).peer == {}
    # The pairs a campaign's scenarios need, its own pairs none.
    assert references.peers_of(list(by_pair.values())) == [cross]


def test_references_over_quic_give_the_stack_its_own_full_overhead_there():
    quic = reference_specs.TRANSPORT_PREFIX + "quic"
    rows = [
        *REFERENCE_PRIMITIVES,
        ref("ecdsa", "full", 1.0, 0.50, 0.30, 1.0),
        ref("ecdsa", "resumed", 1.0, 0.26, 0.27, 0.8),
        ref("mldsa", "full", 1.0, 0.90, 0.90, 15.0),
        # The same chains over QUIC: 0.3 ms more server CPU at 1 KiB, 0.5 ms at 15 KiB.
        ref("ecdsa", "full", 1.0, 0.70, 0.60, 1.0, quic),
        ref("mldsa", "full", 1.0, 1.20, 1.40, 15.0, quic),
    ]
    m = cost_fit.model_from_summary(rows, "fixture")
    over_quic = reference_specs.overhead_key("openssl-3.5", "quic")
    assert over_quic != "openssl-3.5" and reference_specs.overhead_key("rustls", "tcp") == "rustls"
    # Over TCP nothing moved: ecdsa's server overhead 0.22 at 1 KiB, mldsa's 0.34 at 15.
    tcp = m.pricing(("openssl-3.5",) * 2).overhead("server").full["server"]
    assert (tcp.at(1.0), tcp.at(15.0)) == pytest.approx((0.22, 0.34))
    got = m.pricing(("openssl-3.5",) * 2, None, "quic").overhead("server")
    assert (got.full["server"].at(1.0), got.full["server"].at(15.0)) == pytest.approx((0.52, 0.84))
    # A resumed handshake over QUIC keeps the TCP line (no resumed QUIC reference).
    assert got.resumed == m.overheads["openssl-3.5"].resumed
    # A QUIC reference reproduces its measured mean.
    ops = cost.operations(("ML-DSA-44",) * 3, "X25519")
    p = cost.predict(ops, m.pricing(("openssl-3.5",) * 2, None, "quic"), kib=15.0)
    assert (p.server_ms, p.client_ms) == pytest.approx((1.40, 1.20))
    # A stack without QUIC references is priced over QUIC with its TCP overhead (rustls has
    # none here either: the reference stack's).
    other = m.pricing(("rustls",) * 2, None, "quic").overhead("server")
    assert other is m.overheads["openssl-3.5"]
    assert m.references == m.stack_references["openssl-3.5"]
    assert set(m.stack_references) == {"openssl-3.5", over_quic}


def test_a_falling_overhead_line_is_taken_as_flat():
    refs = {
        ("ecdsa", "full"): {
            "latency": 1.0,
            "latency_se": 0.01,
            "client": 1.0,
            "client_se": 0.01,
            "server": 1.0,
            "server_se": 0.01,
            "kib": 1.0,
        },
        ("mldsa", "full"): {
            "latency": 0.8,
            "latency_se": 0.02,
            "client": 2.0,
            "client_se": 0.01,
            "server": 0.8,
            "server_se": 0.02,
            "kib": 15.0,
        },
    }
    zero = {k: cost.Timing(0.0, 0.0, 5) for k in (
        ("ECDSA-P256", "sign", "cv"), ("ECDSA-P256", "verify", "cv"),
        ("ECDSA-P256", "verify", "cert"), ("ML-DSA-44", "sign", "cv"),
        ("ML-DSA-44", "verify", "cv"), ("ML-DSA-44", "verify", "cert"),
        ("X25519", "keygen", None), ("X25519", "derive", None))}  # fmt: skip
    over = cost_fit.fit_overhead(refs, zero)
    assert over.full["server"] == cost.Line(0.9, 0.0, 0.02)
    assert over.full["client"].per_kib_ms == pytest.approx(1.0 / 14.0)


def test_a_resumption_mix_weighs_full_and_resumed_operations():
    ops = cost.operations((ML, SLH), "X25519MLKEM768", "resume90")
    server = counts(ops, "server")
    assert server[(SLH, "sign", "cv")] == pytest.approx(0.1)
    assert server[("X25519MLKEM768", "encaps", None)] == pytest.approx(1.0)
    client = counts(ops, "client")
    assert client[(ML, "verify", "cert")] == pytest.approx(0.1)


def test_an_intermediate_anchor_leaves_only_the_leaf_to_verify():
    for hierarchy, anchor_depth in [((SLH, ML, ML), 1), ((EC, SLH, ML, ML), 2)]:
        client = counts(cost.operations(hierarchy, "X25519", anchor_depth=anchor_depth), "client")
        certs = {k[0]: n for k, n in client.items() if k[1:] == ("verify", "cert")}
        # Only the leaf's signature is checked, with its issuer's (the anchor's) key.
        assert certs == {hierarchy[-2]: 1}, hierarchy


def test_a_client_certificate_signs_on_the_client_and_verifies_on_the_server():
    ops = cost.operations((ML, ML), "X25519", client_hierarchy=(EC, ML, SLH))
    client = counts(ops, "client")
    server = counts(ops, "server")
    assert client[(SLH, "sign", "cv")] == 1
    assert server[(SLH, "verify", "cv")] == 1
    # The client chain below the client root: the leaf (by ML) and the intermediate (by EC).
    assert server[(ML, "verify", "cert")] == 1 and server[(EC, "verify", "cert")] == 1
    # A resumed handshake asks for no certificate; a mix asks on its full share.
    resumed = cost.operations((ML, ML), "X25519", "resumed", client_hierarchy=(ML, SLH))
    assert (SLH, "sign", "cv") not in counts(resumed, "client")
    mix = cost.operations((ML, ML), "X25519", "resume90", client_hierarchy=(ML, SLH))
    assert counts(mix, "client")[(SLH, "sign", "cv")] == pytest.approx(0.1)


def test_a_merkle_tree_certificate_replaces_chain_verification_by_its_proof_and_signers():
    """The client accepts the MTC (entry hashed, proof evaluated) and verifies each subtree
    signature; whatever sits above the leaf in X.509 is no longer verified. The server's
    operations do not change."""
    h = (SLH, EC, ML)
    x509 = cost.operations(h, "X25519MLKEM768")
    landmark = cost.operations(h, "X25519MLKEM768", signers=())
    standalone = cost.operations(h, "X25519MLKEM768", signers=("ML-DSA-44", "ML-DSA-44", EC))
    assert counts(landmark, "server") == counts(x509, "server")
    kex = {("X25519MLKEM768", "keygen", None): 1, ("X25519MLKEM768", "decaps", None): 1}
    assert counts(landmark, "client") == {
        **kex, (ML, "verify", "cv"): 1, (ML, cost.MTC_VERIFY, None): 1,
    }  # fmt: skip
    assert counts(standalone, "client") == {
        **kex,
        (ML, "verify", "cv"): 1,
        (ML, cost.MTC_VERIFY, None): 1,
        ("ML-DSA-44", "verify", "cert"): 2,
        (EC, "verify", "cert"): 1,
    }
    # Without verification only the CertificateVerify is checked, as for X.509.
    off = cost.operations(h, "X25519MLKEM768", verify=False, signers=("ML-DSA-44",))
    assert counts(off, "client") == {**kex, (ML, "verify", "cv"): 1}


def test_a_wait_reference_prices_the_wake_up_of_a_client_that_waits_long_on_loopback():
    """The wait reference's client CPU beyond its primitives and the overhead line at its
    bytes is the stack's wake-up extra; it is added to a scenario whose client idles
    LONG_WAIT_MS or more for the server's signature, on loopback only, and it leaves the
    overhead line as the two overhead references draw it."""
    from chainlab.campaign.model import Scenario
    from chainlab.model import estimate

    rows = [
        *REFERENCE_PRIMITIVES,
        prim(SLH, "sign", "cv", 40.0),
        prim(SLH, "verify", "cv", 2.0),
        ref("ecdsa", "full", 0.80, 0.50, 0.30, 1.0),
        ref("mldsa", "full", 1.60, 0.90, 0.90, 15.0),
        # Client primitives: X25519 0.06 + SLH-DSA CertificateVerify 2.0 + the ECDSA-signed
        # leaf 0.06 = 2.12; the client line at 18 KiB: 0.32 + 17 x 0.22 / 14; 0.5 beyond.
        ref(
            reference_specs.WAIT_REFERENCE,
            "full",
            45.0,
            2.12 + 0.32 + 17 * 0.22 / 14 + 0.5,
            40.4,
            18.0,
        ),
    ]
    m = cost_fit.model_from_summary(rows, "fixture")
    assert m.overhead.full["client"].at(1.0) == pytest.approx(0.32)
    assert m.overhead.full["client"].at(15.0) == pytest.approx(0.54)
    assert m.wait_extras["openssl-3.5"]["client"] == pytest.approx(0.5)

    def scenario(hierarchy, profile=None):
        return Scenario(
            scenario_id="s", kex="X25519", hierarchy=hierarchy, sampling=None,
            network=profile.name if profile else "loopback", network_profile=profile,
        )  # fmt: skip

    slh_leaf = scenario((EC, SLH))
    p = estimate.predict(slh_leaf, m)
    assert p.wait == {"client": pytest.approx(0.5)}
    without = cost_fit.model_from_summary(rows[:-1], "fixture")
    assert p.client_ms - estimate.predict(slh_leaf, without).client_ms == pytest.approx(0.5)
    assert p.server_ms == pytest.approx(estimate.predict(slh_leaf, without).server_ms)
    # A 0.02 ms ECDSA signature is no long wait; over a path its reference pays the wake-up.
    assert estimate.predict(scenario((EC, EC)), m).wait == {}
    wan = NetworkProfile(name="wan", delay_ms=25.0)
    assert estimate.predict(scenario((EC, SLH), wan), m).wait == {}
    # The runner takes the wait reference for the client stacks that wait that long.
    assert references.waits_of([slh_leaf, scenario((EC, EC))]) == ["openssl-3.5"]
    assert references.waits_of([scenario((EC, EC))]) == []
