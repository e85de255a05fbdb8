"""The `certificate` axis: X.509 or a Merkle Tree Certificate, read from a campaign file,
named in ids and read back, validated with one-line errors, and what it asks of each side."""

import textwrap

import pytest

from chainlab import engine
from chainlab.axes import certificate as certificate_axis
from chainlab.axes import credential as certificates
from chainlab.campaign import CampaignError, ids, load

HEAD = """
[campaign]
name = "c"

[aliases]
ml = "ML-DSA-44"
slhf = "SLH-DSA-SHAKE-128f"

[sampling]
mode = "fixed"
count = 5

[matrix.m]
kex = ["X25519MLKEM768"]
hierarchy = [["ml", "ml"]]
"""


def write(tmp_path, text):
    p = tmp_path / "c.toml"
    p.write_text(textwrap.dedent(HEAD + text))
    return p


def errors(tmp_path, text) -> str:
    with pytest.raises(CampaignError) as e:
        load(write(tmp_path, text))
    return str(e.value)


def test_every_kind_expands_into_scenarios_whose_ids_read_back(tmp_path):
    c = load(
        write(
            tmp_path,
            """
            certificate = [
                "x509",
                { kind = "mtc-landmark", batch = 4096 },
                { kind = "mtc-landmark", batch = 4194304, landmark_held = false },
                { kind = "mtc-standalone", batch = 4096, cosigners = ["ml", "ECDSA-P256"] },
                { kind = "mtc-standalone", batch = 4096, encoding = "experimental" },
            ]
            """,
        )
    )
    got = {s.scenario_id: s.handshake.credential for s in c.scenarios.values()}
    assert sorted(got) == sorted(
        [
            "x25519mlkem768__ml_root__ml_leaf",
            "x25519mlkem768__ml_root__ml_leaf__mtcl4096",
            "x25519mlkem768__ml_root__ml_leaf__mtcl4194304_nolm",
            "x25519mlkem768__ml_root__ml_leaf__mtcs4096_ml_ml_ecdsap256",
            "x25519mlkem768__ml_root__ml_leaf__mtcs4096_ml_exp",
        ]
    )
    standalone = got["x25519mlkem768__ml_root__ml_leaf__mtcs4096_ml_ml_ecdsap256"]
    assert standalone.signers == ("ML-DSA-44", "ML-DSA-44", "ECDSA-P256")
    assert standalone.engine_chain == "mtc-standalone"
    # A client without the landmark gets the standalone certificate, CA-signed only.
    fallback = got["x25519mlkem768__ml_root__ml_leaf__mtcl4194304_nolm"]
    assert fallback.engine_chain == "mtc-standalone" and fallback.signers == ("ML-DSA-44",)
    assert got["x25519mlkem768__ml_root__ml_leaf__mtcl4096"].engine_chain == "mtc-landmark"
    tokens = {"ml": "ML-DSA-44", "ecdsap256": "ECDSA-P256"}
    for sid, cert in got.items():
        parts = ids.decode(sid, tokens, {"loopback"})
        assert parts["certificate"] == cert.spec
    # The store's columns.
    assert certificates.store(standalone.spec) == (
        "mtc-standalone", "4096", "ML-DSA-44,ML-DSA-44,ECDSA-P256", "n/a", "plants-07", "n/a",
    )  # fmt: skip
    # The early experiments' encoding: its own id word, column and `pki` flag.
    old = got["x25519mlkem768__ml_root__ml_leaf__mtcs4096_ml_exp"]
    assert old.spec == "mtc-standalone batch=4096 ca=ML-DSA-44 encoding=experimental"
    assert certificates.store(old.spec)[-2] == "experimental"
    assert old.pki_flags()[4:6] == ["--mtc-encoding", "experimental"]
    assert standalone.pki_flags()[4:6] == ["--mtc-encoding", "plants-07"]
    assert certificates.store("x509")[-2:] == ("n/a", "n/a")


@pytest.mark.parametrize(
    "value,message",
    [
        (
            '{ kind = "mtc-landmark", batch = 4096, cosigners = ["ml"] }',
            "certificate[0].cosigners: given with kind 'mtc-landmark': a landmark-relative "
            "certificate carries no signatures",
        ),
        ('{ kind = "mtc-landmark", batch = 1 }', "certificate[0].batch"),
        ('{ kind = "mtc-landmark", batch = 134217728 }', "certificate[0].batch"),
        ('{ kind = "mtc-landmark" }', "certificate[0].batch: missing"),
        ('{ kind = "mtc-merkle", batch = 4 }', "certificate[0].kind"),
        ('{ kind = "x509", batch = 4 }', "certificate[0].batch: given with kind 'x509'"),
        (
            '{ kind = "mtc-standalone", batch = 4, landmark_held = false }',
            "certificate[0].landmark_held: given with kind 'mtc-standalone'",
        ),
        ('{ kind = "mtc-standalone", batch = 4, cosigners = ["nope"] }', "cosigners[0]"),
        ('"mtc-landmark"', "batch=<entries> is required"),
        (
            '{ kind = "mtc-standalone", batch = 4, encoding = "plants-06" }',
            "certificate[0].encoding",
        ),
    ],
)
@pytest.mark.bad_input
def test_bad_certificates_are_one_line_errors(tmp_path, value, message):
    got = errors(tmp_path, f"certificate = [{value}]\n")
    assert message in got, got
    assert len([ln for ln in got.splitlines() if "certificate[0]" in ln]) <= 1


def test_an_mtc_is_sent_alone_so_no_served_chain_goes_with_it(tmp_path):
    got = errors(
        tmp_path,
        """
        certificate = [{ kind = "mtc-landmark", batch = 4096 }]
        served_chain = ["full"]
        """,
    )
    assert "served_chain 'full' with a Merkle Tree Certificate" in got


@pytest.mark.bad_input
def test_a_stack_that_cannot_verify_a_cosigner_is_refused_by_name(tmp_path):
    got = errors(
        tmp_path,
        """
        certificate = [{ kind = "mtc-standalone", batch = 4096, cosigners = ["slhf"] }]
        stack = ["rustls"]
        """,
    )
    assert "client stack rustls cannot verify SLH-DSA-SHAKE-128f" in got
    # The X.509 chain's issuers are not what an MTC's client verifies: an SLH-DSA root is
    # no problem for a rustls client of an ML-DSA-leaf MTC.
    load(
        write(
            tmp_path,
            """
            certificate = [{ kind = "mtc-landmark", batch = 4096 }]
            stack = ["rustls"]
            [matrix.slh]
            kex = ["X25519MLKEM768"]
            hierarchy = [["slhf", "ml"]]
            certificate = [{ kind = "mtc-landmark", batch = 4096 }]
            stack = ["rustls"]
            """,
        )
    )


def test_the_batch_bounds_are_the_engines():
    mtc = engine.info()["mtc"]
    assert (mtc["min_batch"], mtc["max_batch"]) == (certificates.MIN_BATCH, certificates.MAX_BATCH)
    assert mtc["max_renewals"] == certificates.MAX_RENEWALS


def test_the_retry_is_a_landmark_certificate_the_client_lacks(tmp_path):
    c = load(
        write(
            tmp_path,
            """
            certificate = [
                { kind = "mtc-landmark", batch = 4096, landmark_held = false, retry = true },
            ]
            """,
        )
    )
    (s,) = c.scenarios.values()
    assert s.scenario_id == "x25519mlkem768__ml_root__ml_leaf__mtcl4096_nolm_retry"
    cert = s.handshake.credential
    # The server holds the landmark-relative certificate and the standalone one for the
    # retry; the client holds no landmark and retries.
    assert cert.engine_chain == "mtc-landmark" and cert.server_flags() == ["--mtc-retry-standalone"]
    # The stand-in's retry (no trust_anchors extension): asked for in the SNI.
    assert certificate_axis.CERTIFICATE.client_flags(cert.spec, s, None, 0) == ["--mtc-retry"]
    assert "--mtc-landmarks" not in cert.client_flags(tmp_path)
    assert ids.decode(s.scenario_id, {"ml": "ML-DSA-44"}, {"loopback"})["certificate"] == cert.spec
    assert certificates.store(cert.spec)[3] == "no, retry"


@pytest.mark.parametrize(
    "value,extra,message",
    [
        (
            '{ kind = "mtc-landmark", batch = 4096, retry = true }',
            "",
            "certificate retry with the landmark held and no population",
        ),
        ('{ kind = "mtc-standalone", batch = 4096, retry = true }', "", "certificate[0].retry"),
        (
            '{ kind = "mtc-landmark", batch = 4096, landmark_held = false, retry = true }',
            'transport = ["quic"]',
            "certificate retry with transport 'quic'",
        ),
    ],
)
@pytest.mark.bad_input
def test_a_retry_anywhere_else_is_refused(tmp_path, value, extra, message):
    got = errors(tmp_path, f"certificate = [{value}]\n{extra}\n")
    assert message in got, got
