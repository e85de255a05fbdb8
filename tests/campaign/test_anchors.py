"""The `trust_anchors` axis: the number of trust anchor IDs a client requests (BoringSSL, OpenSSL),
read from a campaign file, named in ids and read back, validated with one-line errors, and
the flags each side gets: the real extension in place of the MTC retry's SNI stand-in."""

import textwrap

import pytest

from chainlab.axes import certificate as certificate_axis
from chainlab.axes import credential as certificates
from chainlab.axes import trust_anchors as anchors
from chainlab.campaign import CampaignError, ids, load
from chainlab.runner import engine_args

HEAD = """
[campaign]
name = "c"

[aliases]
ml = "ML-DSA-44"

[sampling]
mode = "fixed"
count = 5

[matrix.m]
kex = ["X25519MLKEM768"]
hierarchy = [["ml", "ml"]]
"""


def load_text(tmp_path, text):
    p = tmp_path / "c.toml"
    p.write_text(textwrap.dedent(HEAD + text))
    return load(p)


def flags(s):
    """(server flags, client flags) the axes give a scenario."""
    server = [f for a in (certificate_axis.CERTIFICATE, anchors.TRUST_ANCHORS)
              for f in a.server_flags(s.value(a.key), s, None)]  # fmt: skip
    client = engine_args.client_extras(s, [], None, 0)
    return server, client


def test_each_value_asks_for_its_ids_and_replaces_the_stand_in(tmp_path):
    c = load_text(
        tmp_path,
        """
        stack = ["boringssl"]
        trust_anchors = [0, 1, 28]
        certificate = [
            "x509",
            { kind = "mtc-landmark", batch = 64 },
            { kind = "mtc-landmark", batch = 64, landmark_held = false },
            { kind = "mtc-landmark", batch = 64, landmark_held = false, retry = true },
        ]

        [matrix.stand_in]
        kex = ["X25519MLKEM768"]
        hierarchy = [["ml", "ml"]]
        certificate = [
            { kind = "mtc-landmark", batch = 64, landmark_held = false, retry = true },
        ]
        """,
    )
    got = {s.scenario_id: s for s in c.scenarios.values()}
    assert len(got) == 13
    base = "x25519mlkem768__ml_root__ml_leaf__"
    for sid, s in got.items():
        parts = ids.decode(sid, {"ml": "ML-DSA-44"}, {"loopback"})
        assert parts["trust_anchors"] == s.value("trust_anchors")
    # The stand-in: the SNI retry, no extension.
    server, client = flags(got[base + "mtcl64_nolm_retry"])
    assert server == ["--mtc-retry-standalone"] and "--mtc-retry" in client
    assert "--trust-anchors" not in client
    # The real extension: the server's MTCs under their IDs, the client's own IDs first.
    server, client = flags(got[base + "mtcl64_nolm_retry__stack_boring__tai28"])
    assert server == ["--trust-anchor-ids"]
    assert client[-5:] == [
        "--trust-anchors", "", "--trust-anchors-filler", "28", "--trust-anchor-retry",
    ]  # fmt: skip
    assert "--mtc-retry" not in client
    held = got[base + "mtcl64__stack_boring__tai28"]
    _, client = flags(held)
    assert client[-4:] == [
        "--trust-anchors", certificates.LANDMARK_ID, "--trust-anchors-filler", "27",
    ]  # fmt: skip
    assert "--mtc-landmarks" in held.handshake.credential.client_flags(tmp_path)
    _, client = flags(got[base + "mtcl64_nolm__stack_boring__tai1"])
    assert client[-4:] == ["--trust-anchors", certificates.CA_ID, "--trust-anchors-filler", "0"]
    _, client = flags(got[base + "mtcl64__stack_boring__tai0"])
    assert client[-4:] == ["--trust-anchors", "", "--trust-anchors-filler", "0"]
    # X.509: only the ClientHello changes.
    server, client = flags(got[base + "stack_boring__tai28"])
    assert server == [] and client[-4:] == ["--trust-anchors", "", "--trust-anchors-filler", "28"]


@pytest.mark.parametrize(
    "matrix,message",
    [
        ("trust_anchors = [1001]", "trust_anchors[0]: bad value 1001; allowed: 'sni'"),
        ('trust_anchors = ["all"]', "trust_anchors[0]: bad value 'all'"),
        ("trust_anchors = [true]", "trust_anchors[0]: bad value true"),
        # rustls has no trust_anchors extension: refused on the side it would run on.
        (
            'client_stack = ["rustls"]\ntrust_anchors = [0]',
            "client stack rustls cannot do the trust_anchors extension",
        ),
        (
            'client_stack = ["boringssl"]\nserver_stack = ["rustls"]\ntrust_anchors = [1]\n'
            'certificate = [{ kind = "mtc-standalone", batch = 64 }]',
            "server stack rustls cannot do the trust_anchors extension",
        ),
        # Neither engine carries it over QUIC, nor a match in a pre-compressed Certificate.
        (
            'trust_anchors = [0]\ntransport = ["quic"]',
            "trust_anchors with transport 'quic': the engines carry the extension over TCP only",
        ),
        (
            'trust_anchors = [1]\ncert_compression = ["zlib"]\n'
            'certificate = [{ kind = "mtc-standalone", batch = 64 }]',
            "trust_anchors with an MTC and cert_compression 'zlib'",
        ),
    ],
)
@pytest.mark.bad_input
def test_bad_values_and_stacks_without_the_extension_are_one_line_errors(tmp_path, matrix, message):
    with pytest.raises(CampaignError) as e:
        load_text(tmp_path, matrix + "\n")
    assert message in str(e.value), str(e.value)


def test_openssl_carries_it_on_both_sides(tmp_path):
    c = load_text(
        tmp_path,
        'trust_anchors = [0, 28]\ncertificate = [{ kind = "mtc-landmark", batch = 64 }]\n',
    )
    assert len(c.scenarios) == 2


def test_a_boringssl_client_may_send_it_to_any_x509_server(tmp_path):
    c = load_text(tmp_path, 'client_stack = ["boringssl"]\ntrust_anchors = [0, 100]\n')
    assert len(c.scenarios) == 2
