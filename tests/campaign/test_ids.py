"""Scenario ids: composed from parts, read back into the same parts."""

import pytest

from chainlab import axes
from chainlab.campaign import ids

ALGS = {"ml": "ML-DSA-65", "slh": "SLH-DSA-SHAKE-192s", "mldsa44": "ML-DSA-44"}
TOKEN = {alg: tok for tok, alg in ALGS.items()}
DEFAULT_PAIR = ("openssl-3.5", "openssl-3.5")


def compose(kex, toks, served, mode, comp, net, client=(), *, target=None, transport="tcp",
            stack_pair=DEFAULT_PAIR, certificate="x509"):  # fmt: skip
    """ids.compose of parts given as tokens, in the order an id names them (axes not named
    here at their defaults)."""
    parts = {a.key: a.default for a in axes.registered()}
    parts |= {
        "kex": kex,
        "hierarchy": tuple(ALGS[t] for t in toks),
        "served_chain": served,
        "certificate": certificate,
        "handshake_mode": mode,
        "cert_compression": comp,
        "client_auth": tuple(ALGS[t] for t in client),
        "transport": transport,
        "stack": stack_pair,
        "network": net,
        "target": target,
    }
    return ids.compose(parts, TOKEN.__getitem__)


@pytest.mark.parametrize(
    "parts,expected",
    [
        (
            (
                "X25519MLKEM768",
                ["slh", "ml", "ml"],
                "leaf+intermediates",
                "full",
                "none",
                "loopback",
            ),
            "x25519mlkem768__slh_root__ml_int__ml_leaf",
        ),
        (("X25519", ["ml"], "leaf+intermediates", "full", "none", "loopback"), "x25519__ml_self"),
        (
            ("MLKEM768", ["ml", "ml", "slh", "mldsa44"], "full", "resumed", "zstd", "wan"),
            "mlkem768__ml_root__ml_int1__slh_int2__mldsa44_leaf__served_full__resumed__zstd__net_wan",
        ),
        (
            ("P-256", ["ml", "ml"], "leaf", "full", "brotli", "loopback"),
            "p256__ml_root__ml_leaf__served_leaf__brotli",
        ),
        (
            ("X25519", ["ml", "ml", "ml"], "intermediate-anchor", "full", "none", "wan"),
            "x25519__ml_root__ml_int__ml_leaf__served_intanchor__net_wan",
        ),
        (
            (
                "X25519",
                ["ml", "ml"],
                "leaf+intermediates",
                "resume90",
                "none",
                "loopback",
                ["mldsa44", "slh"],
            ),
            "x25519__ml_root__ml_leaf__resume90__client_mldsa44_slh",
        ),
    ],
)
def test_compose_and_decode_round_trip(parts, expected):
    kex, toks, served, mode, comp, net, *client = parts
    client = client[0] if client else []
    sid = compose(kex, toks, served, mode, comp, net, client)
    assert sid == expected
    back = ids.decode(sid, ALGS, {"wan"})
    assert back.pop("target") is None
    assert back.pop("transport") == "tcp"
    assert back.pop("stack") == DEFAULT_PAIR
    for key in (
        "second_chain",
        "population",
        "server_groups",
        "chain_order",
        "signature_impl",
        "trust_anchors",
        "client_profile",
    ):
        assert back.pop(key) == axes.get(key).default
    assert back == {
        "kex": kex,
        "hierarchy": tuple(ALGS[t] for t in toks),
        "served_chain": served,
        "certificate": "x509",
        "handshake_mode": mode,
        "cert_compression": comp,
        "network": net,
        "client_auth": tuple(ALGS[t] for t in client),
    }


def test_quic_is_named_after_the_client_part_and_before_the_network():
    sid = compose(
        "X25519MLKEM768", ["ml", "ml"], "full", "full", "none", "wan", ["mldsa44"],
        transport="quic",
    )  # fmt: skip
    assert sid == "x25519mlkem768__ml_root__ml_leaf__served_full__client_mldsa44__quic__net_wan"
    back = ids.decode(sid, ALGS, {"wan"})
    assert back["transport"] == "quic"
    assert back["network"] == "wan"
    assert back["served_chain"] == "full"
    # TCP is the default and never named.
    assert compose("X25519", ["ml"], "leaf+intermediates", "full", "none", "loopback",
                       transport="tcp") == "x25519__ml_self"  # fmt: skip
    with pytest.raises(ValueError, match="unknown part 'tcp'"):
        ids.decode("x25519__ml_self__tcp", ALGS, set())


@pytest.mark.parametrize(
    "bad,fragment",
    [
        ("x25519mlkem786__ml_root__ml_leaf", "unknown key-exchange token"),
        ("x25519__ml_leaf__ml_root", "positions leaf/root"),
        ("x25519__ml_root__foo_leaf", "unknown algorithm token 'foo'"),
        ("x25519__ml_root__ml_leaf__net_lan", "unknown part 'net_lan'"),
        ("x25519__ml_root__ml_leaf__zlib__resumed", "canonical form"),
        ("x25519", "0 certificate positions"),
        ("x25519__ml_root__ml_leaf__client_ml_foo", "bad client certificate part"),
        ("x25519__target_nowhere", "unknown target 'nowhere'"),
        ("x25519__target_edge__ml_leaf", "no positions after target_"),
        ("x25519__ml_root__ml_leaf__dual_ml_foo", "bad second chain part"),
        ("x25519__ml_root__ml_leaf__pop_pq_classical", "bad population part"),
        ("x25519__ml_root__ml_leaf__sgrp_x25519_nope", "bad server groups part"),
        ("x25519__ml_root__ml_leaf__pop_pq10__dual_ml_ml", "canonical form"),
    ],
)
@pytest.mark.bad_input
def test_decode_names_the_bad_part(bad, fragment):
    with pytest.raises(ValueError, match=fragment):
        ids.decode(bad, ALGS, {"wan"}, {"edge"})


def test_a_target_takes_the_place_of_the_positions():
    sid = compose("X25519MLKEM768", [], "leaf+intermediates", "resumed", "zlib",
                      "loopback", target="edge")  # fmt: skip
    assert sid == "x25519mlkem768__target_edge__resumed__zlib"
    back = ids.decode(sid, ALGS, {"wan"}, {"edge"})
    assert back["target"] == "edge" and back["hierarchy"] == ()
    assert back["handshake_mode"] == "resumed" and back["cert_compression"] == "zlib"


@pytest.mark.parametrize(
    "pair,part",
    [
        (("rustls", "rustls"), "__stack_rustls"),
        (("openssl-4.0", "openssl-4.0"), "__stack_ossl40"),
        (("openssl-3.5", "rustls"), "__stack_ossl35_rustls"),
        (("rustls", "openssl-4.0"), "__stack_rustls_ossl40"),
    ],
)
def test_stacks_are_named_client_first_after_the_transport(pair, part):
    sid = compose(
        "X25519MLKEM768", ["ml", "ml"], "leaf+intermediates", "full", "none", "wan",
        transport="quic", stack_pair=pair,
    )  # fmt: skip
    assert sid == f"x25519mlkem768__ml_root__ml_leaf__quic{part}__net_wan"
    back = ids.decode(sid, ALGS, {"wan"})
    assert back["stack"] == pair
    # The default pair is never named; a pair of one stack is written once.
    plain = compose("X25519", ["ml"], "leaf+intermediates", "full", "none", "loopback")
    assert "stack" not in plain
    with pytest.raises(ValueError, match="canonical"):
        ids.decode("x25519__ml_self__stack_rustls_rustls", ALGS, set())
    with pytest.raises(ValueError, match="stack_<tok>"):
        ids.decode("x25519__ml_self__stack_boringssl", ALGS, set())


def test_rollout_parts_follow_the_stack_and_read_back():
    """A second chain, a population (kinds and shares, by name) and the server's groups."""
    parts = {a.key: a.default for a in axes.registered()}
    parts |= {
        "kex": "X25519",
        "hierarchy": ("ML-DSA-65", "ML-DSA-65"),
        "second_chain": ("SLH-DSA-SHAKE-192s", "ML-DSA-44"),
        "population": "classical=0.9/X25519/ecdsa_secp256r1_sha256,pq=0.1/X25519MLKEM768/mldsa65",
        "server_groups": "X25519MLKEM768:X25519",
        "stack": ("openssl-3.5", "openssl-4.0"),
        "network": "wan",
    }
    sid = ids.compose(parts, TOKEN.__getitem__)
    assert sid == (
        "x25519__ml_root__ml_leaf__stack_ossl35_ossl40__dual_slh_mldsa44__pop_classical90_pq10"
        "__sgrp_x25519mlkem768_x25519__net_wan"
    )
    back = ids.decode(sid, ALGS, {"wan"})
    assert back["second_chain"] == parts["second_chain"]
    # An id names the kinds and shares; the file's [clients] give their offers.
    assert back["population"] == "classical=0.9,pq=0.1"
    assert back["server_groups"] == "X25519MLKEM768:X25519"
