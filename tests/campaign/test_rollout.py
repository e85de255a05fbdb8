"""Staged rollout in a campaign file: [clients], a second chain, a client population and the
server's groups, expanded into scenarios whose ids read back, validated with one-line
errors; and what the cost model makes of a population."""

import textwrap

import pytest

from chainlab.axes import rollout
from chainlab.campaign import CampaignError, load
from chainlab.model import estimate
from chainlab.runner import engine_args
from chainlab.runner.scenario_state import Files

HEAD = """
[campaign]
name = "r"

[aliases]
ec = "ECDSA-P256"
ml = "ML-DSA-65"

[clients.pq]
groups = ["X25519MLKEM768", "X25519"]
signatures = ["ml", "ec"]

[clients.classical]
groups = ["X25519"]
signatures = ["ECDSA-P256"]

[sampling]
mode = "fixed"
count = 5
"""

MATRIX = """
[matrix.m]
kex = ["X25519"]
hierarchy = [["ec", "ec"]]
"""


def write(tmp_path, text, head=HEAD):
    p = tmp_path / "r.toml"
    p.write_text(textwrap.dedent(head + text))
    return p


def errors(tmp_path, text, head=HEAD) -> str:
    with pytest.raises(CampaignError) as e:
        load(write(tmp_path, text, head))
    return str(e.value)


def test_populations_and_chains_expand_into_scenarios_whose_ids_read_back(tmp_path):
    c = load(
        write(
            tmp_path,
            MATRIX
            + """
            second_chain = [["ml", "ml"]]
            population = [{ classical = 1, pq = 0 }, { pq = 0.1, classical = 0.9 }, "none"]
            server_groups = ["client", ["X25519MLKEM768", "X25519"]]

            [campaigns.all]
            matrices = ["m"]
            scenarios = ["x25519__ec_root__ec_leaf__dual_ml_ml__pop_classical50_pq50"]
            """,
        )
    )
    got = {sid: s for sid, s in c.scenarios.items()}
    assert len(got) == 7
    s = got["x25519__ec_root__ec_leaf__dual_ml_ml__pop_classical90_pq10"]
    assert s.value("second_chain") == ("ML-DSA-65", "ML-DSA-65")
    assert s.value("population") == (
        "classical=0.9/X25519/ecdsa_secp256r1_sha256,"
        "pq=0.1/X25519MLKEM768:X25519/mldsa65:ecdsa_secp256r1_sha256"
    )
    assert s.columns()["pq_share"] == "0.1"
    assert (
        got["x25519__ec_root__ec_leaf__dual_ml_ml__pop_classical100_pq0"].columns()["pq_share"]
        == "0"
    )
    assert got["x25519__ec_root__ec_leaf__dual_ml_ml"].columns()["population"] == "none"
    # An id in [campaigns] gets its kinds' offers from [clients].
    by_id = got["x25519__ec_root__ec_leaf__dual_ml_ml__pop_classical50_pq50"]
    assert "pq=0.5/X25519MLKEM768:X25519/" in by_id.value("population")
    pref = got[
        "x25519__ec_root__ec_leaf__dual_ml_ml__pop_classical90_pq10__sgrp_x25519mlkem768_x25519"
    ]
    assert pref.value("server_groups") == "X25519MLKEM768:X25519"


def test_engine_flags_of_a_rollout_scenario(tmp_path):
    c = load(
        write(
            tmp_path,
            MATRIX
            + """
            second_chain = [["ml", "ml"]]
            population = [{ pq = 0.1, classical = 0.9 }]
            server_groups = ["client", ["X25519MLKEM768", "X25519"]]
            """,
        )
    )
    own, pref = sorted(c.scenarios.values(), key=lambda s: s.scenario_id)
    files = Files(pki_dir=tmp_path / "a", second_pki_dir=tmp_path / "b")
    argv = engine_args.server_argv(
        own, tmp_path / "engine", files, "127.0.0.1:0", tmp_path / "r", 1000
    )
    # The scenario's group first, then every group a kind offers: each client's choice.
    assert argv[argv.index("--groups") + 1] == "X25519:X25519MLKEM768"
    assert argv[argv.index("--second-pki") + 1] == str(tmp_path / "b")
    assert "--prefer-server-groups" not in argv
    argv = engine_args.server_argv(
        pref, tmp_path / "engine", Files(pki_dir=tmp_path / "a"), "127.0.0.1:0",
        tmp_path / "r", 1000,
    )  # fmt: skip
    assert argv[argv.index("--groups") + 1] == "X25519MLKEM768:X25519"
    assert "--prefer-server-groups" in argv
    client = engine_args.client_extras(own, ["handshake"], files, 7)
    assert client[client.index("--population") + 1] == own.value("population")
    assert client[client.index("--population-seed") + 1] == "7"


@pytest.mark.parametrize(
    "text,fragment",
    [
        ("population = [{ pq = 0.5, classical = 0.4 }]", "the shares sum to 0.9"),
        ("population = [{ pq = 0.505, classical = 0.495 }]", "bad share 0.505"),
        ("population = [{ mobile = 1 }]", "unknown kind of client 'mobile'"),
        ("population = [0.5]", "expected a table of kinds and shares"),
        ('server_groups = [["X25519", "X9"]]', "unknown group 'X9'; allowed"),
        ('second_chain = [["ec", "ec"]]', "two leaves of one key type"),
        ('second_chain = [["ml", "ml"]]\ntransport = ["quic"]', "transport 'quic'"),
        ('second_chain = [["ml", "ml"]]\ncert_compression = ["zlib"]', "cert_compression"),
        (
            'stack = ["rustls"]\nserver_groups = [["X25519"]]',
            "server stack rustls cannot do the server's own group preference",
        ),
        ('chain_order = ["server"]', "chain_order 'server' without a second_chain"),
        (
            'second_chain = [["ml", "ml"]]\nchain_order = ["pq-first"]',
            "chain_order[0]: bad value 'pq-first'",
        ),
    ],
)
@pytest.mark.bad_input
def test_bad_rollout_values_are_one_line_errors(tmp_path, text, fragment):
    msg = errors(tmp_path, MATRIX + text)
    assert fragment in msg, msg
    assert "r.toml" in msg


@pytest.mark.parametrize(
    "table,fragment",
    [
        ('[clients.Pq]\ngroups = ["X25519"]\nsignatures = ["ec"]', "bad kind name 'Pq'"),
        ('[clients.pop]\ngroups = ["X25519"]\nsignatures = ["ec"]', "bad kind name 'pop'"),
        ('[clients.old]\ngroups = []\nsignatures = ["ec"]', "clients.old.groups"),
        ('[clients.old]\ngroups = "X25519"\nsignatures = ["ec"]', "clients.old.groups: expected"),
        ('[clients.old]\ngroups = ["X25519"]\nsignatures = ["DSA"]', "clients.old.signatures[0]"),
        ('[clients.old]\ngroups = ["X25519"]\nsignatures = ["ec"]\nos = 1', "clients.old"),
    ],
)
@pytest.mark.bad_input
def test_bad_clients_tables_name_the_key(tmp_path, table, fragment):
    msg = errors(tmp_path, MATRIX, HEAD + table + "\n")
    assert fragment in msg, msg


@pytest.mark.bad_input
def test_a_kind_no_chain_serves_is_noted_not_refused(tmp_path):
    head = HEAD + '[clients.stranger]\ngroups = ["X25519"]\nsignatures = ["Ed25519"]\n'
    c = load(write(tmp_path, MATRIX + "population = [{ stranger = 0.2, classical = 0.8 }]", head))
    assert any("kind 'stranger'" in n and "no_shared_sigalg" in n for n in c.notes), c.notes


def test_the_cost_model_mixes_the_kinds_by_the_chain_and_group_each_gets(tmp_path):
    c = load(
        write(
            tmp_path,
            MATRIX
            + """
            second_chain = [["ml", "ml"]]
            population = [{ pq = 0.25, classical = 0.75 }]
            """,
        )
    )
    (s,) = c.scenarios.values()
    ops = {(o.side, o.subject, o.op): o.count for o in estimate.scenario_operations(s)}
    # A quarter of the handshakes are the ML-DSA chain's over the hybrid group.
    assert ops[("server", "ML-DSA-65", "sign")] == pytest.approx(0.25)
    assert ops[("server", "ECDSA-P256", "sign")] == pytest.approx(0.75)
    assert ops[("server", "X25519MLKEM768", "encaps")] == pytest.approx(0.25)
    assert ops[("client", "X25519", "keygen")] == pytest.approx(0.75)


def test_pq_capability_and_the_chain_each_kind_is_sent():
    kinds = rollout.parse(
        "a=0.5/X25519/ecdsa_secp256r1_sha256,b=0.25/X25519MLKEM768/ecdsa_secp256r1_sha256,"
        "c=0.25/X25519/mldsa65:ecdsa_secp256r1_sha256"
    )
    assert [k.pq_capable for k in kinds] == [False, True, True]
    assert rollout.pq_share(rollout.compose(kinds)) == 0.5
    chains = [("ECDSA-P256", "ECDSA-P256"), ("ML-DSA-65", "ML-DSA-65")]
    assert [rollout.chain_for(k, chains) for k in kinds] == [0, 0, 1]
    assert rollout.chain_for(rollout.Kind("d", 1, ("X25519",), ("ed25519",)), chains) is None


def test_a_kinds_list_given_as_a_string_is_one_error_not_one_per_character(tmp_path):
    head = HEAD + '[clients.old]\ngroups = "X25519"\nsignatures = ["ec"]\n'
    msg = errors(tmp_path, MATRIX, head)
    assert "clients.old.groups: expected a non-empty array" in msg, msg
    assert "clients.old.groups[0]" not in msg, msg


@pytest.mark.bad_input
def test_a_population_on_a_client_stack_that_cannot_narrow_its_schemes_is_refused(tmp_path):
    """Each kind offers its own signature schemes; Go's crypto/tls offers its own list."""
    said = errors(
        tmp_path, MATRIX + 'client_stack = ["go"]\npopulation = [{ pq = 0.1, classical = 0.9 }]\n'
    )
    assert "client stack go cannot do a client offering chosen signature schemes" in said
    assert "(missing capability: client_sigalgs)" in said


def test_the_server_order_sends_the_post_quantum_chain_to_any_kind_that_can_take_it(tmp_path):
    ec_first = rollout.Kind("p", 1, ("X25519",), ("ecdsa_secp256r1_sha256", "mldsa65"))
    classical = rollout.Kind("c", 1, ("X25519",), ("ecdsa_secp256r1_sha256",))
    chains = [("ECDSA-P256", "ECDSA-P256"), ("ML-DSA-65", "ML-DSA-65")]
    assert rollout.chain_for(ec_first, chains, rollout.CLIENT_ORDER) == 0
    assert rollout.chain_for(ec_first, chains, rollout.SERVER_ORDER) == 1
    assert rollout.chain_for(classical, chains, rollout.SERVER_ORDER) == 0
    # The campaign key: its id part, the server's flag, and the cost model's mixture.
    head = HEAD.replace('signatures = ["ml", "ec"]', 'signatures = ["ec", "ml"]')
    c = load(
        write(
            tmp_path,
            MATRIX
            + """
            second_chain = [["ml", "ml"]]
            population = [{ pq = 0.25, classical = 0.75 }]
            chain_order = ["client", "server"]
            """,
            head,
        )
    )
    by_order = {s.value("chain_order"): s for s in c.scenarios.values()}
    server = by_order["server"]
    assert server.scenario_id.endswith("__corder_server")
    assert "corder" not in by_order["client"].scenario_id
    files = Files(pki_dir=tmp_path / "a", second_pki_dir=tmp_path / "b")
    argv = engine_args.server_argv(
        server, tmp_path / "engine", files, "127.0.0.1:0", tmp_path / "r", 1000
    )
    assert argv[argv.index("--chain-order") + 1] == "server"
    client_argv = engine_args.server_argv(
        by_order["client"], tmp_path / "engine", files, "127.0.0.1:0", tmp_path / "r", 1000
    )
    assert "--chain-order" not in client_argv
    signs = {
        order: {o.subject: o.count for o in estimate.scenario_operations(s) if o.op == "sign"}
        for order, s in by_order.items()
    }
    assert signs["client"]["ECDSA-P256"] == pytest.approx(1.0)  # ECDSA is the kind's first
    assert signs["server"]["ML-DSA-65"] == pytest.approx(0.25)
