"""Landmark lag (chainlab.axes.landmark_lag): kinds of client saying which Merkle Tree
Certificate landmarks they hold, a server holding its last `renewals` landmarks' MTCs, read
from a campaign file, named in ids and read back, the flags each side gets, what each kind
is predicted to receive, and one line for each rule it breaks."""

import textwrap

import pytest

from chainlab.axes import credential, landmark_lag
from chainlab.axes import rollout as populations
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

[clients.cur]
groups = ["X25519MLKEM768"]
signatures = ["ml"]
landmark_lag = 0

[clients.late]
groups = ["X25519MLKEM768"]
signatures = ["ml"]
landmark_lag = 3

[clients.never]
groups = ["X25519MLKEM768"]
signatures = ["ml"]
landmark_lag = "none"

[clients.plain]
groups = ["X25519MLKEM768"]
signatures = ["ml"]
"""

LAG = """
[matrix.m]
kex = ["X25519MLKEM768"]
hierarchy = [["ml", "ml"]]
stack = ["boringssl", "openssl-3.5"]
certificate = [CERT]
population = [POP]
trust_anchors = [TAI]
"""


def load_text(tmp_path, text, cert='{ kind = "mtc-landmark", batch = 64, renewals = 3 }',
              pop="{ cur = 0.5, late = 0.3, never = 0.2 }", tai="2"):  # fmt: skip
    p = tmp_path / "c.toml"
    body = text.replace("CERT", cert).replace("POP", pop).replace("TAI", tai)
    p.write_text(textwrap.dedent(HEAD + body))
    return load(p)


def test_kinds_carry_their_landmarks_into_ids_flags_and_predictions(tmp_path):
    c = load_text(tmp_path, LAG)
    assert len(c.scenarios) == 2
    s = next(iter(c.scenarios.values()))
    spec = s.value("population")
    kinds = {k.name: k.landmarks for k in populations.parse(spec)}
    assert kinds == {"cur": "0", "late": "3", "never": "none"}
    assert "/mldsa44/3" in spec, "the engine's --population carries each kind's landmarks"
    cert = credential.parse(s.value("certificate"))
    assert cert.renewals == 3 and cert.spec == "mtc-landmark batch=64 renewals=3"
    assert cert.pki_flags()[-2:] == ["--mtc-renewals", "3"]
    # The id names the renewals and reads back.
    assert "__mtcl64_ren3__" in s.scenario_id
    parts = ids.decode(s.scenario_id, {"ml": "ML-DSA-44"}, {"loopback"})
    assert parts["certificate"] == cert.spec
    # Each kind asks for its own IDs (the engine derives them), then 2 of other CAs.
    client = engine_args.client_extras(s, [], None, 0)
    at = client.index("--trust-anchors")
    assert client[at : at + 5] == [
        "--trust-anchors", "", "--trust-anchors-own", "--trust-anchors-filler", "2",
    ]  # fmt: skip
    assert "--trust-anchor-retry" not in client
    # The kinds 3 intervals behind (past the server's 3) and without landmarks fall back.
    assert landmark_lag.fallback_share(spec, 3) == pytest.approx(0.5)
    assert landmark_lag.fallback_share(spec, 4) == pytest.approx(0.2)
    assert landmark_lag.served("2", 3, False) == "landmark"
    assert landmark_lag.served("3", 3, True) == "retry"
    assert landmark_lag.served("none", 3, False) == "standalone"


def test_a_retrying_population_retries_instead_and_is_named_so(tmp_path):
    c = load_text(tmp_path, LAG, cert='{ kind = "mtc-landmark", batch = 64, renewals = 2, '
                  'retry = true }')  # fmt: skip
    s = next(iter(c.scenarios.values()))
    assert s.scenario_id.split("__")[3] == "mtcl64_ren2_retry"
    assert credential.store(s.value("certificate"))[3] == "yes, retry"
    assert "--trust-anchor-retry" in engine_args.client_extras(s, [], None, 0)


@pytest.mark.bad_input
@pytest.mark.parametrize(
    "cert,pop,tai,extra,message",
    [
        ('"x509"', None, None, "",
         "a population whose kinds hold landmarks with certificate 'x509'"),
        ('{ kind = "mtc-landmark", batch = 64, landmark_held = false }', None, None, "",
         "a population whose kinds hold landmarks with a certificate whose landmark is not held"),
        (None, None, '"sni"', "",
         "a population whose kinds hold landmarks with trust_anchors 'sni'"),
        (None, "{ cur = 0.5, plain = 0.5 }", None, "",
         "kinds plain of a population whose other kinds hold landmarks say nothing of theirs"),
        ('{ kind = "mtc-standalone", batch = 64, renewals = 2 }', None, None, "",
         "certificate[0].renewals: given with kind 'mtc-standalone'"),
        ('{ kind = "mtc-landmark", batch = 64, renewals = 17 }', None, None, "",
         "certificate[0].renewals"),
        (None, None, None, "\n[load]\nrates = [500]\nstep_s = 1\nverify = false\n",
         "load.verify: scenario"),
    ],
)  # fmt: skip
def test_what_landmark_lag_cannot_do_is_one_line(tmp_path, cert, pop, tai, extra, message):
    args = {k: v for k, v in (("cert", cert), ("pop", pop), ("tai", tai)) if v is not None}
    with pytest.raises(CampaignError) as e:
        load_text(tmp_path, LAG + extra, **args)
    assert message in str(e.value)


@pytest.mark.bad_input
@pytest.mark.parametrize("value", ["-1", "65", '"soon"', "true", "1.5"])
def test_a_bad_landmark_lag_names_the_kind_and_what_is_allowed(tmp_path, value):
    p = tmp_path / "c.toml"
    p.write_text(textwrap.dedent(HEAD).replace('landmark_lag = 3', f"landmark_lag = {value}")
                 + textwrap.dedent(LAG).replace("CERT", '{ kind = "mtc-landmark", batch = 64 }')
                 .replace("POP", "{ cur = 1 }").replace("TAI", "0"))  # fmt: skip
    with pytest.raises(CampaignError) as e:
        load(p)
    assert "clients.late.landmark_lag: bad value" in str(e.value)
    assert "0 (current) to 64, or 'none'" in str(e.value)


@pytest.mark.bad_input
def test_a_stack_without_the_trust_anchors_extension_is_refused_by_capability(tmp_path):
    """rustls and Go have no trust_anchors extension: a lagging population cannot ask for its
    landmark there (docs/stacks.md's capability tables)."""
    with pytest.raises(CampaignError) as e:
        load_text(tmp_path, LAG.replace('"boringssl", "openssl-3.5"', '"rustls"'))
    assert "client stack rustls cannot do the trust_anchors extension" in str(e.value)
    assert "server stack rustls cannot do the trust_anchors extension" in str(e.value)


def test_the_cost_model_prices_what_each_share_of_the_population_verifies(tmp_path):
    """Half the population falls back (late, never): half its handshakes verify the CA's
    subtree signature; retrying, half of them connect twice."""
    from chainlab.model import estimate

    s = next(iter(load_text(tmp_path, LAG).scenarios.values()))
    assert estimate.mtc_kinds(s.handshake) == [(0.5, (), False), (0.5, ("ML-DSA-44",), False)]
    assert estimate.connections(s.handshake) == 1
    ca = [o for o in estimate.scenario_operations(s)
          if (o.side, o.category, o.subject) == ("client", "verify certificates", "ML-DSA-44")
          and o.op == "verify"]  # fmt: skip
    assert [o.count for o in ca] == [pytest.approx(0.5)]
    retrying = next(
        iter(load_text(tmp_path, LAG, cert='{ kind = "mtc-landmark", batch = 64, renewals = 3, '
                       'retry = true }').scenarios.values())
    )  # fmt: skip
    assert estimate.connections(retrying.handshake) == pytest.approx(1.5)
