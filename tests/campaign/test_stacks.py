"""TLS stacks in campaign files: the stack axes, their ids, and validation refusing what a
side's stack cannot do before anything runs."""

import json
import subprocess
import textwrap

import pytest

from chainlab import engine
from chainlab.axes import stack as stacks
from chainlab.campaign import CampaignError, load

HEAD = """
[campaign]
name = "s"

[aliases]
ml = "ML-DSA-65"
slhf = "SLH-DSA-SHAKE-128f"

[sampling]
mode = "fixed"
count = 5
"""


def write(tmp_path, text, name="s.toml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(HEAD + text))
    return p


@pytest.mark.parametrize("stack", ["rustls", "boringssl", "go"])
def test_the_capability_table_is_the_engines(stack):
    """The copy validation uses (no engine needed) is what the engine's `info` says."""
    out = subprocess.run(
        [str(engine.stack_path(stack)), "info"], capture_output=True, text=True, check=True
    )
    info = json.loads(out.stdout)
    caps = stacks.CAPABILITIES[stack]
    assert info["stack"] == stack
    assert tuple(s["algorithm"] for s in info["signature_algorithms"]) == (
        caps.signature_algorithms
    )
    assert tuple(info["groups"]) == caps.groups
    assert tuple(info["cert_compressions"]) == caps.cert_compressions
    assert ("liboqs" in info["signature_implementations"]) == (
        stacks.has(stack, "signature_impl_liboqs")
    )
    assert info["max_handshake_message"] == caps.max_handshake_message
    root_only = tuple(a["algorithm"] for a in info["root_only_signature_algorithms"])
    assert root_only == caps.root_only


@pytest.mark.parametrize("stack", stacks.STACKS)
def test_every_engine_has_the_features_the_table_gives_its_stack(stack):
    """Each engine's `info` lists the engine features it has (chainlab_record::features,
    engine/go/args.go): exactly the stacks the Python table's declarations name."""
    info = engine.stack_info(stack)
    assert len(info["features"]) == len(set(info["features"]))
    declared = {name for name in stacks.FEATURES if stacks.has(stack, name)}
    assert set(info["features"]) == declared
    assert set(info["features"]) <= set(stacks.FEATURES)


def test_a_feature_is_declared_once_for_stacks_that_exist():
    with pytest.raises(ValueError, match="declared twice"):
        stacks.feature("quic", "QUIC again", ("go",))
    with pytest.raises(ValueError, match="unknown stacks"):
        stacks.feature("teleport", "teleportation", ("openssl-9",))
    assert "teleport" not in stacks.FEATURES
    assert stacks.has("go", "quic") and not stacks.has("rustls", "quic")


def test_every_stack_has_a_binary_that_names_it():
    assert set(engine.STACK_BINARIES) == set(stacks.STACKS) == set(stacks.TOKENS)
    for stack in stacks.STACKS:
        assert engine.stack_info(stack)["stack"] == stack


def test_stack_and_the_two_sides_expand_into_scenarios(tmp_path):
    c = load(
        write(
            tmp_path,
            """
            [matrix.both]
            kex = ["X25519MLKEM768"]
            hierarchy = [["ml", "ml"]]
            stack = ["openssl-3.5", "openssl-4.0", "rustls"]

            [matrix.sides]
            kex = ["X25519MLKEM768"]
            hierarchy = [["ml", "ml"]]
            client_stack = ["rustls"]
            server_stack = ["openssl-3.5", "openssl-4.0"]
            """,
        )
    )
    pairs = {
        sid: (s.columns()["client_stack"], s.columns()["server_stack"])
        for sid, s in c.scenarios.items()
    }
    base = "x25519mlkem768__ml_root__ml_leaf"
    assert pairs == {
        base: ("openssl-3.5", "openssl-3.5"),
        f"{base}__stack_ossl40": ("openssl-4.0", "openssl-4.0"),
        f"{base}__stack_rustls": ("rustls", "rustls"),
        f"{base}__stack_rustls_ossl35": ("rustls", "openssl-3.5"),
        f"{base}__stack_rustls_ossl40": ("rustls", "openssl-4.0"),
    }
    # Only a non-default pair is part of the stored parameters (older stores stay equal).
    assert "client_stack" not in c.scenarios[base].params()
    assert c.scenarios[f"{base}__stack_rustls_ossl35"].params()["server_stack"] == "openssl-3.5"
    assert (
        c.scenarios[f"{base}__stack_rustls_ossl35"].handshake.stack_label == "rustls → openssl-3.5"
    )


def test_zlib_and_brotli_run_on_rustls(tmp_path):
    c = load(
        write(
            tmp_path,
            """
            [matrix.m]
            kex = ["X25519MLKEM768"]
            hierarchy = [["ml", "ml"]]
            stack = ["rustls"]
            cert_compression = ["none", "zlib", "brotli"]
            """,
        )
    )
    assert len(c.scenarios) == 3


def test_exclusions_test_either_side_or_one(tmp_path):
    c = load(
        write(
            tmp_path,
            """
            [matrix.m]
            kex = ["X25519MLKEM768"]
            hierarchy = [["ml", "ml"]]
            client_stack = ["openssl-3.5", "rustls"]
            server_stack = ["openssl-3.5", "rustls"]
            exclude = [
                { stack = "openssl-4.0" },
                { client_stack = "rustls", server_stack = "openssl-3.5" },
            ]
            """,
        )
    )
    assert sorted(s.handshake.stack_label for s in c.scenarios.values()) == [
        "openssl-3.5",
        "openssl-3.5 → rustls",
        "rustls",
    ]


@pytest.mark.parametrize(
    "matrix,expected",
    [
        # rustls has no SLH-DSA: the server cannot sign with an SLH-DSA leaf ...
        (
            'hierarchy = [["ml", "slhf"]]\nserver_stack = ["rustls"]',
            "scenario x25519mlkem768__ml_root__slhf_leaf__stack_ossl35_rustls: server stack "
            "rustls cannot sign with SLH-DSA-SHAKE-128f",
        ),
        # ... and a client cannot verify an SLH-DSA root's signature.
        (
            'hierarchy = [["slhf", "ml"]]\nclient_stack = ["rustls"]',
            "client stack rustls cannot verify SLH-DSA-SHAKE-128f",
        ),
        ('hierarchy = [["ml", "ml"]]\nstack = ["rustls"]\nkex = ["ffdhe2048"]', "no key-exchange"),
        (
            'hierarchy = [["ml", "ml"]]\nstack = ["rustls"]\ntransport = ["quic"]',
            "(missing capability: quic)",
        ),
        (
            'hierarchy = [["ml", "ml"]]\nstack = ["rustls"]\ncert_compression = ["zstd"]',
            "server stack rustls has no certificate compression zstd (it has: zlib, brotli)",
        ),
        (
            'hierarchy = [["ml", "ml"]]\nclient_stack = ["rustls"]\nclient_auth = [["ml", "ml"]]',
            "client stack rustls cannot do client certificates",
        ),
        (
            'hierarchy = [["ml", "ml", "ml"]]\nclient_stack = ["rustls"]\nserved_chain = ["leaf"]',
            "(missing capability: untrusted_intermediates)",
        ),
        (
            'hierarchy = [["ml", "ml"]]\nclient_stack = ["rustls"]\nhandshake_mode = ["resume50"]',
            "(missing capability: resumption_mix)",
        ),
        # liboqs' families: no OpenSSL stack signs or verifies them ...
        (
            'hierarchy = [["ml", "Falcon-512"]]',
            "scenario x25519mlkem768__ml_root__falcon512_leaf: server stack openssl-3.5 cannot "
            "sign with Falcon-512",
        ),
        (
            'hierarchy = [["MAYO-2", "ml"]]\nserver_stack = ["rustls"]',
            "client stack openssl-3.5 cannot verify MAYO-2",
        ),
        # ... rustls takes UOV-Is only as a root above an intermediate, and cannot receive
        # two UOV-Ip-pkc keys ...
        (
            'hierarchy = [["UOV-Is", "ml"]]\nstack = ["rustls"]',
            "client stack rustls can use UOV-Is only as the root of a hierarchy of depth 3",
        ),
        (
            'hierarchy = [["ml", "UOV-Ip", "ml"]]\nstack = ["rustls"]',
            "client stack rustls can use UOV-Ip only as the root",
        ),
        (
            'hierarchy = [["ml", "UOV-Ip-pkc", "UOV-Ip-pkc"]]\nstack = ["rustls"]',
            "client stack rustls cannot receive a Certificate message of about 91339 bytes",
        ),
        # ... and only rustls takes liboqs' ML-DSA.
        (
            'hierarchy = [["ml", "ml"]]\nsignature_impl = ["liboqs"]\nserver_stack = ["rustls"]',
            "client stack openssl-3.5 cannot do liboqs signing and verifying ML-DSA",
        ),
        # BoringSSL: no SLH-DSA, no MLKEM768 alone, no QUIC here, no zstd, no MTC yet.
        (
            'hierarchy = [["ml", "slhf"]]\nserver_stack = ["boringssl"]',
            "server stack boringssl cannot sign with SLH-DSA-SHAKE-128f",
        ),
        (
            'hierarchy = [["slhf", "ml"]]\nclient_stack = ["boringssl"]',
            "client stack boringssl cannot verify SLH-DSA-SHAKE-128f",
        ),
        (
            'hierarchy = [["ml", "ml"]]\nstack = ["boringssl"]\nkex = ["MLKEM768"]',
            "client stack boringssl has no key-exchange group MLKEM768",
        ),
        (
            'hierarchy = [["ml", "ml"]]\nstack = ["boringssl"]\ntransport = ["quic"]',
            "stack boringssl cannot do QUIC (transport 'quic') (missing capability: quic)",
        ),
        (
            'hierarchy = [["ml", "ml"]]\nstack = ["boringssl"]\ncert_compression = ["zstd"]',
            "server stack boringssl has no certificate compression zstd (it has: zlib, brotli)",
        ),
        (
            'hierarchy = [["ml", "ml"]]\nclient_stack = ["boringssl"]\n'
            'certificate = [{ kind = "mtc-landmark", batch = 4096, landmark_held = false, '
            "retry = true }]",
            "client stack boringssl cannot do the MTC retry's SNI stand-in",
        ),
        (
            'hierarchy = [["ml", "ml"]]\nclient_stack = ["boringssl"]\n'
            'certificate = [{ kind = "mtc-standalone", batch = 4096, cosigners = ["ml"] }]',
            "(missing capability: mtc_cosigners)",
        ),
        (
            'hierarchy = [["ml", "ml"]]\nclient_stack = ["boringssl"]\n'
            'certificate = [{ kind = "mtc-standalone", batch = 4096, encoding = "experimental" }]',
            "(missing capability: mtc_experimental)",
        ),
        (
            'hierarchy = [["ml", "ml"]]\nserver_stack = ["boringssl"]\n'
            'certificate = [{ kind = "mtc-landmark", batch = 4096, landmark_held = false, '
            "retry = true }]",
            "server stack boringssl cannot do the MTC retry's SNI stand-in",
        ),
        (
            'hierarchy = [["ml", "ml"]]\nstack = ["boringssl"]\nsignature_impl = ["liboqs"]',
            "(missing capability: signature_impl_liboqs)",
        ),
        # Go: no SLH-DSA, no MLKEM768 alone, no compression, no MTC (QUIC it has; BoringSSL
        # has not).
        (
            'hierarchy = [["ml", "slhf"]]\nserver_stack = ["go"]',
            "server stack go cannot sign with SLH-DSA-SHAKE-128f",
        ),
        (
            'hierarchy = [["ml", "ml"]]\nstack = ["go"]\nkex = ["MLKEM768"]',
            "client stack go has no key-exchange group MLKEM768",
        ),
        (
            'hierarchy = [["ml", "ml"]]\nclient_stack = ["go"]\nserver_stack = ["boringssl"]\n'
            'transport = ["quic"]',
            "server stack boringssl cannot do QUIC (transport 'quic') (missing capability: quic)",
        ),
        (
            'hierarchy = [["ml", "ml"]]\nserver_stack = ["go"]\ncert_compression = ["zlib"]',
            "server stack go has no certificate compression zlib (it has none)",
        ),
        (
            'hierarchy = [["ml", "ml"]]\nserver_stack = ["go"]\n'
            'certificate = [{ kind = "mtc-standalone", batch = 4096 }]',
            "server stack go cannot do Merkle Tree Certificates",
        ),
    ],
)
@pytest.mark.bad_input
def test_validate_refuses_what_a_stack_cannot_do(tmp_path, matrix, expected):
    if "kex =" not in matrix:
        matrix = 'kex = ["X25519MLKEM768"]\n' + matrix
    with pytest.raises(CampaignError) as e:
        load(write(tmp_path, f"[matrix.m]\n{matrix}\n"))
    assert expected in str(e.value)
    assert "exclude it or choose another stack" in str(e.value)


def test_go_takes_quic_with_itself_and_openssl(tmp_path):
    """QUIC through quic-go on the Go engine: with itself and with OpenSSL's QUIC, both ways."""
    c = load(
        write(
            tmp_path,
            """
            [matrix.m]
            kex = ["X25519MLKEM768"]
            hierarchy = [["ml", "ml"]]
            transport = ["quic"]
            client_stack = ["go", "openssl-3.5"]
            server_stack = ["go", "openssl-3.5"]
            """,
        )
    )
    assert len(c.scenarios) == 4


def test_boringssl_takes_the_mtcs_its_own_verifier_checks(tmp_path):
    """A BoringSSL client of a standalone -07 MTC (the CA's signature only, with or without
    the landmark held: the server then sends the standalone one), and a BoringSSL server of
    either kind to a client of another stack."""
    c = load(
        write(
            tmp_path,
            """
            [matrix.m]
            kex = ["X25519MLKEM768"]
            hierarchy = [["ml", "ml"]]
            client_stack = ["boringssl"]
            certificate = [
                { kind = "mtc-standalone", batch = 4096 },
                { kind = "mtc-landmark", batch = 4096, landmark_held = false },
            ]

            [matrix.served]
            kex = ["X25519MLKEM768"]
            hierarchy = [["ml", "ml"]]
            server_stack = ["boringssl"]
            certificate = [
                { kind = "mtc-landmark", batch = 4096 },
                { kind = "mtc-standalone", batch = 4096, encoding = "experimental" },
            ]
            """,
        )
    )
    assert len(c.scenarios) == 4


def test_liboqs_families_and_implementation_are_valid_on_rustls(tmp_path):
    matrix = (
        'kex = ["X25519MLKEM768"]\nstack = ["rustls"]\nsignature_impl = ["stack", "liboqs"]\n'
        'hierarchy = [["UOV-Ip-pkc", "ECDSA-P256", "Falcon-512"], ["ml", "ml"], '
        '["UOV-Is", "ml", "ml"]]'
    )
    c = load(write(tmp_path, f"[matrix.m]\n{matrix}\n"))
    assert sorted(c.scenarios) == [
        "x25519mlkem768__ml_root__ml_leaf__stack_rustls",
        "x25519mlkem768__ml_root__ml_leaf__stack_rustls__impl_liboqs",
        "x25519mlkem768__uovippkc_root__ecdsap256_int__falcon512_leaf__stack_rustls",
        "x25519mlkem768__uovippkc_root__ecdsap256_int__falcon512_leaf__stack_rustls__impl_liboqs",
        "x25519mlkem768__uovis_root__ml_int__ml_leaf__stack_rustls",
        "x25519mlkem768__uovis_root__ml_int__ml_leaf__stack_rustls__impl_liboqs",
    ]


@pytest.mark.bad_input
def test_load_steps_are_valid_on_rustls_and_refused_where_a_stack_lacks_a_feature(tmp_path, cli):
    toml = write(
        tmp_path,
        """
        [matrix.m]
        kex = ["X25519MLKEM768"]
        hierarchy = [["ml", "ml"]]
        stack = ["openssl-4.0", "rustls"]

        [load]
        rates = [50]
        step_s = 3
        """,
    )
    out = cli("validate", str(toml), timeout=120)
    assert out.returncode == 0, out.stderr
    # What rustls still lacks is refused by name, with nothing written.
    toml = write(
        tmp_path,
        """
        [matrix.m]
        kex = ["X25519MLKEM768"]
        hierarchy = [["ml", "ml"]]
        stack = ["rustls"]
        transport = ["quic"]

        [load]
        rates = [50]
        step_s = 3
        """,
        name="quic.toml",
    )
    store = tmp_path / "s.duckdb"
    out = cli("run", str(toml), "--store", str(store), timeout=120)
    assert out.returncode == 2, out
    assert "missing capability: quic" in out.stderr, out.stderr
    assert not store.exists()


def test_stack_and_a_side_are_not_given_together(tmp_path):
    with pytest.raises(CampaignError, match="given with client_stack/server_stack"):
        load(
            write(
                tmp_path,
                '[matrix.m]\nkex = ["X25519"]\nhierarchy = [["ml", "ml"]]\n'
                'stack = ["rustls"]\nserver_stack = ["openssl-3.5"]\n',
            )
        )
    with pytest.raises(CampaignError, match="allowed: openssl-3.5, openssl-4.0, rustls, boringssl"):
        load(
            write(
                tmp_path,
                '[matrix.m]\nkex = ["X25519"]\nhierarchy = [["ml", "ml"]]\nstack = ["wolfssl"]\n',
            )
        )


@pytest.mark.parametrize(
    "matrix,expected",
    [
        ('stack = ["boringssl"]\ntransport = ["quic"]', "(missing capability: quic)"),
        (
            'client_stack = ["boringssl"]\n'
            'certificate = [{ kind = "mtc-standalone", batch = 64, cosigners = ["ml"] }]',
            "(missing capability: mtc_cosigners)",
        ),
        ('server_stack = ["boringssl"]\nkex = ["MLKEM768"]', "has no key-exchange group MLKEM768"),
    ],
)
@pytest.mark.bad_input
def test_what_boringssl_lacks_is_refused_before_anything_is_written(
    tmp_path, cli, matrix, expected
):
    kex = "" if "kex =" in matrix else 'kex = ["X25519MLKEM768"]\n'
    toml = write(tmp_path, f'[matrix.m]\n{kex}hierarchy = [["ml", "ml"]]\n{matrix}\n')
    store = tmp_path / "s.duckdb"
    out = cli("run", str(toml), "--store", str(store), timeout=120)
    assert out.returncode == 2, out
    problems = [ln for ln in out.stderr.splitlines() if "boringssl" in ln]
    assert problems and all(expected in ln for ln in problems), out.stderr
    assert len(problems) == len(set(problems)), "each problem once"
    assert not store.exists() and list(tmp_path.iterdir()) == [toml]
