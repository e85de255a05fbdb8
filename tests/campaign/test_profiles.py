"""The `client_profile` axis: a browser's ClientHello on a BoringSSL client, named in ids
and read back, refused where the profile's ClientHello could not be the campaign's (another
key exchange, another compression, a leaf Chrome accepts no signature of) or where the
client's stack has no profiles."""

import textwrap

import pytest

from chainlab.axes import client_profile as profiles
from chainlab.campaign import CampaignError, ids, load
from chainlab.model import estimate
from chainlab.runner import engine_args, primitives

HEAD = """
[campaign]
name = "c"

[aliases]
ml = "ML-DSA-65"

[sampling]
mode = "fixed"
count = 5

[matrix.m]
"""


# A BoringSSL client with and without Chrome's ClientHello; a test adds one axis more.
CHROME_PAIR = """
hierarchy = [["ml", "ml"]]
kex = ["X25519MLKEM768"]
client_stack = ["boringssl"]
client_profile = ["none", "chrome"]
"""


def load_text(tmp_path, text):
    p = tmp_path / "c.toml"
    p.write_text(textwrap.dedent(HEAD + text))
    return load(p)


def test_a_chrome_client_is_named_and_flagged(tmp_path):
    c = load_text(tmp_path, CHROME_PAIR + 'cert_compression = ["none", "brotli"]\n')
    got = {s.scenario_id: s for s in c.scenarios.values()}
    sid = "x25519mlkem768__ml_root__ml_leaf__brotli__stack_boring_ossl35__profile_chrome"
    assert len(got) == 4 and sid in got
    assert ids.decode(sid, {"ml": "ML-DSA-65"}, {"loopback"})["client_profile"] == "chrome"
    flags = engine_args.client_extras(got[sid], [], None, 0)
    assert flags[-2:] == ["--client-profile", "chrome"]
    plain = sid.replace("__profile_chrome", "")
    assert "--client-profile" not in engine_args.client_extras(got[plain], [], None, 0)


@pytest.mark.parametrize(
    "matrix,message",
    [
        (
            'kex = ["X25519"]\nclient_stack = ["boringssl"]\nclient_profile = ["chrome"]',
            "client_profile 'chrome' with kex 'X25519'",
        ),
        (
            'kex = ["X25519MLKEM768"]\nclient_stack = ["boringssl"]\nclient_profile = ["chrome"]'
            '\ncert_compression = ["zlib"]',
            "client_profile 'chrome' with cert_compression 'zlib'",
        ),
        (
            'kex = ["X25519MLKEM768"]\nclient_stack = ["boringssl"]\nclient_profile = ["chrome"]'
            '\nhierarchy = [["ml", "Ed25519"]]',
            "client_profile 'chrome' with a Ed25519 leaf",
        ),
        (
            'kex = ["X25519MLKEM768"]\nclient_profile = ["chrome"]',
            "client stack openssl-3.5 cannot do a browser's ClientHello",
        ),
        ('kex = ["X25519MLKEM768"]\nclient_profile = ["firefox"]', "client_profile[0]"),
    ],
)
@pytest.mark.bad_input
def test_what_the_profile_cannot_send_is_refused_in_one_line(tmp_path, matrix, message):
    if "hierarchy" not in matrix:
        matrix += '\nhierarchy = [["ml", "ml"]]'
    with pytest.raises(CampaignError) as e:
        load_text(tmp_path, matrix + "\n")
    assert message in str(e.value), str(e.value)
    assert profiles.CHROME_KEX == "X25519MLKEM768"


def test_a_chrome_client_generates_its_second_key_share_every_handshake(tmp_path):
    c = load_text(tmp_path, CHROME_PAIR + 'handshake_mode = ["full", "resumed"]\n')
    share = ("client", "key exchange", profiles.CHROME_EXTRA_SHARE, "keygen", None)
    for s in c.scenarios.values():
        ops = {(o.side, o.category, o.subject, o.op, o.message): o.count
               for o in estimate.scenario_operations(s)}  # fmt: skip
        chrome = s.scenario_id.endswith("profile_chrome")
        # The hybrid's own key pair, and with Chrome's ClientHello an X25519 one beside it.
        assert ops[share[:2] + ("X25519MLKEM768", "keygen", None)] == 1
        assert ops.get(share) == (1.0 if chrome else None), s.scenario_id
    # The runner measures it, in the client stack's implementation.
    keys = {i.timing_key for i in primitives.items_for(list(c.scenarios.values()), False)}
    assert ("boringssl", "X25519", "keygen", None) in keys
