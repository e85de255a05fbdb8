"""Campaign files: validation messages, matrix expansion, id stability, deduplication."""

import textwrap
from pathlib import Path

import pytest

from chainlab.axes.algorithms import ALGORITHM_NAMES
from chainlab.campaign import CampaignError, load

REPO = Path(__file__).resolve().parents[2]

GOOD = """
[campaign]
name = "t"
baseline = "x25519mlkem768__ml_root__ml_leaf"

[aliases]
ml = "ML-DSA-65"
slhf = "SLH-DSA-SHAKE-128f"

[network.wan]
delay_ms = 20
rate_mbit = 50

[sampling]
min = 50

[[sampling.override]]
where = { leaf = "slhf" }
min = 10

[matrix.m]
kex = ["X25519", "X25519MLKEM768"]
hierarchy = [["ml", "ml"], ["ml", "slhf"], ["ml", "ml", "ml"]]
exclude = [{ kex = "X25519", depth = 3 }]

[matrix.n]
kex = ["X25519MLKEM768"]
hierarchy = [["ml", "ml"], ["slhf"], ["ml", "ml", "ml", "slhf"]]
handshake_mode = ["full", "resumed"]
network = ["loopback", "wan"]
served_chain = ["leaf+intermediates", "full"]
cert_compression = ["none", "zlib"]

[campaigns.one]
matrices = ["m"]

[campaigns.two]
matrices = ["n"]
scenarios = ["x25519__ml_root__slhf_leaf"]
"""


def write(tmp_path, text, name="c.toml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def test_good_file_expands_and_ids_are_compositional(tmp_path):
    c = load(write(tmp_path, GOOD))
    one = [s.scenario_id for s in c.select(["one"])]
    assert one == [
        "x25519__ml_root__ml_leaf",
        "x25519__ml_root__slhf_leaf",
        "x25519mlkem768__ml_root__ml_leaf",
        "x25519mlkem768__ml_root__slhf_leaf",
        "x25519mlkem768__ml_root__ml_int__ml_leaf",
    ]
    two = {s.scenario_id for s in c.select(["two"])}
    assert len(two) == 3 * 2 * 2 * 2 * 2 + 1
    assert "x25519mlkem768__slhf_self" in two
    assert "x25519mlkem768__ml_root__ml_int1__ml_int2__slhf_leaf" in two
    assert "x25519mlkem768__ml_root__ml_leaf__served_full__resumed__zlib__net_wan" in two
    s = c.scenarios["x25519mlkem768__ml_root__ml_leaf__served_full__resumed__zlib__net_wan"]
    assert (
        s.value("served_chain"),
        s.value("handshake_mode"),
        s.value("cert_compression"),
        s.network,
    ) == (
        "full",
        "resumed",
        "zlib",
        "wan",
    )
    # Sampling overrides follow the scenario's properties.
    assert c.scenarios["x25519__ml_root__slhf_leaf"].sampling.min == 10
    assert c.scenarios["x25519__ml_root__ml_leaf"].sampling.min == 50
    assert c.networks["wan"].rate_mbit == 50


def test_ids_are_stable_and_shared_scenarios_run_once(tmp_path):
    p = write(tmp_path, GOOD)
    a, b = load(p), load(p)
    assert list(a.scenarios) == list(b.scenarios)
    assert a.campaigns == b.campaigns
    # x25519mlkem768__ml_root__ml_leaf is in both campaigns but once in the scenario space.
    shared = "x25519mlkem768__ml_root__ml_leaf"
    assert shared in a.campaigns["one"] and shared in a.campaigns["two"]
    everything = [s.scenario_id for s in a.select()]
    assert len(everything) == len(set(everything))
    assert everything.count(shared) == 1
    assert ("one", shared) in a.memberships() and ("two", shared) in a.memberships()


def test_bundled_files_validate():
    sp = load(REPO / "campaigns" / "signature-placement.toml")
    assert len(sp.scenarios) == 15  # Table 14's 17 rows, two of which are the same scenario
    assert set(sp.campaigns) == {"A", "B", "C", "D"}
    assert sp.baseline == "x25519mlkem768__ml_root__ml_int__ml_leaf"
    slh_leaf = [s for s in sp.scenarios.values() if s.leaf_alg == "SLH-DSA-SHAKE-192s"]
    assert len(slh_leaf) == 8
    # Table 1's ids, in this file's notation: depth 2 serves root + leaf, as the paper did.
    for sid in [
        "x25519__ml_root__ml_leaf__served_full",
        "x25519__slh_root__slh_leaf__served_full",
        "x25519mlkem768__ml_root__slh_leaf__served_full",
        "x25519mlkem768__slh_root__ml_int__ml_leaf",
        "x25519mlkem768__ml_root__slh_int__slh_leaf",
        "mlkem768__slh_root__ml_int__ml_leaf",
        "mlkem768__slh_root__slh_leaf__served_full",
    ]:
        assert sid in sp.scenarios
    for s in sp.scenarios.values():
        assert s.value("served_chain") == (
            "full" if len(s.hierarchy) == 2 else "leaf+intermediates"
        )
    q = load(REPO / "campaigns" / "quick.toml")
    assert 4 <= len(q.scenarios) <= 8
    assert q.primitives.measure and q.primitives.target_rel_halfwidth == 0.02
    # Every ML-DSA and SLH-DSA set at each position of a depth-3 hierarchy, the rest ML-DSA-65.
    ap = load(REPO / "campaigns" / "all-placements.toml")
    placed = {(i, s.hierarchy[i]) for s in ap.scenarios.values() for i in range(3)}
    pq = [a for a in ALGORITHM_NAMES if a.startswith(("ML-DSA", "SLH-DSA"))]
    assert len(pq) == 15
    assert {(i, a) for i in range(3) for a in pq} <= placed
    assert len(ap.scenarios) == 43 and all(s.depth == 3 for s in ap.scenarios.values())
    # Each lever of issue #12 on the four hierarchies it names.
    lv = load(REPO / "campaigns" / "levers.toml").scenarios.values()
    assert {s.handshake.resumed_share for s in lv} == {0, 0.5, 0.9, 1}
    assert {s.value("cert_compression") for s in lv} == {"none", "zlib", "brotli", "zstd"}
    assert {s.value("served_chain") for s in lv} == {
        "leaf+intermediates",
        "leaf",
        "intermediate-anchor",
    }
    assert {s.value("client_auth")[-1] for s in lv if s.value("client_auth")} == {
        "ML-DSA-44",
        "SLH-DSA-SHAKE-128f",
    }
    assert {s.network for s in lv} == {"loopback", "rtt50"}
    assert len({s.hierarchy for s in lv}) == 4
    # Issue #14's hierarchies over TCP and QUIC, loopback and 50 ms RTT, each QUIC scenario
    # with its TCP twin.
    qs = load(REPO / "campaigns" / "quic.toml").scenarios
    assert {s.value("transport") for s in qs.values()} == {"tcp", "quic"}
    assert {s.network for s in qs.values()} == {"loopback", "rtt50"}
    assert {s.kex for s in qs.values()} == {"X25519MLKEM768"}
    assert len({s.hierarchy for s in qs.values()}) == 6
    assert any(
        s.value("served_chain") == "full" and s.root_alg.startswith("SLH") for s in qs.values()
    )
    assert all(sid.replace("__quic", "") in qs for sid in qs if "__quic" in sid)


BAD = [
    # (name, campaign text, fragments every message must hold)
    (
        "unknown_key",
        GOOD.replace("[sampling]\nmin = 50", "[sampling]\nmin = 50\ntarget_rel_halfwith = 0.01"),
        ["sampling.target_rel_halfwith", "unknown key", "allowed:", "'target_rel_halfwidth'"],
    ),
    (
        "misspelt_algorithm",
        GOOD.replace('ml = "ML-DSA-65"', 'ml = "ML-DSA-66"'),
        ["aliases.ml", "'ML-DSA-66'", "allowed:", "ML-DSA-65"],
    ),
    (
        "misspelt_group",
        GOOD.replace('kex = ["X25519", "X25519MLKEM768"]', 'kex = ["X25519", "X25519MLKEM786"]'),
        ["matrix.m.kex[1]", "'X25519MLKEM786'", "allowed:", "X25519MLKEM768"],
    ),
    (
        "impossible_depth",
        GOOD.replace('["ml", "ml", "ml"]]\nexclude', '["ml", "ml", "ml", "ml", "ml"]]\nexclude'),
        ["matrix.m.hierarchy[2]", "impossible depth 5", "allowed: 1 to 4"],
    ),
    (
        "bad_number",
        GOOD.replace("[sampling]\nmin = 50", "[sampling]\nmin = 50\ntarget_rel_halfwidth = -0.1"),
        ["sampling.target_rel_halfwidth", "-0.1", "allowed: a number > 0"],
    ),
    (
        "bad_type",
        GOOD.replace("delay_ms = 20", 'delay_ms = "20ms"'),
        ["network.wan.delay_ms", "'20ms'", "expected a number"],
    ),
    (
        "min_above_max",
        GOOD.replace("[sampling]\nmin = 50", "[sampling]\nmin = 50\nmax = 20"),
        ["sampling.min", "min exceeds max", "allowed: min <= max"],
    ),
    (
        "bad_scenario_id",
        GOOD.replace('"x25519__ml_root__slhf_leaf"]', '"x25519__ml_root__slh_leaf"]'),
        [
            "campaigns.two.scenarios[0]",
            "'x25519__ml_root__slh_leaf'",
            "unknown algorithm token",
            "allowed:",
        ],
    ),
    (
        "bad_choice",
        GOOD.replace('name = "t"', 'name = "t"\norder = "shuffled"'),
        ["campaign.order", "'shuffled'", "allowed: random, interleaved, declared"],
    ),
    (
        "baseline_not_a_scenario",
        GOOD.replace('baseline = "x25519mlkem768__ml_root__ml_leaf"', 'baseline = "nope"'),
        ["campaign.baseline", "'nope'", "allowed:"],
    ),
    (
        "bad_resumption_ratio",
        GOOD.replace(
            'hierarchy = [["ml", "ml"]',
            'resumption_ratio = [0.5, 0.333]\nhierarchy = [["ml", "ml"]',
            1,
        ),
        ["resumption_ratio[1]", "0.333", "allowed: a share from 0 to 1 in whole per cent"],
    ),
    (
        "bad_handshake_mode",
        GOOD.replace(
            'hierarchy = [["ml", "ml"]',
            'handshake_mode = ["resume100"]\nhierarchy = [["ml", "ml"]',
            1,
        ),
        ["handshake_mode[0]", "'resume100'", "allowed: full, resumed or resume1 .. resume99"],
    ),
    (
        "bad_primitives_interval",
        GOOD + "\n[primitives]\ntarget_rel_halfwidth = 0.7\n",
        ["primitives.target_rel_halfwidth", "0.7", "allowed:"],
    ),
    (
        "unknown_primitives_key",
        GOOD + "\n[primitives]\ncap_s = 3\n",
        ["primitives.cap_s", "unknown key", "allowed:", "'time_cap_s'"],
    ),
    ("invalid_toml", GOOD + "\n[matrix.m\n", ["invalid TOML", "line"]),
]


@pytest.mark.parametrize("name,text,fragments", BAD, ids=[b[0] for b in BAD])
@pytest.mark.bad_input
def test_each_bad_input_is_named_in_process(tmp_path, name, text, fragments):
    p = write(tmp_path, text, f"{name}.toml")
    with pytest.raises(CampaignError) as e:
        load(p)
    msg = str(e.value)
    assert str(p) in msg
    for f in fragments:
        assert f in msg, f"{f!r} not in {msg!r}"


@pytest.mark.parametrize("name,text,fragments", BAD, ids=[b[0] for b in BAD])
@pytest.mark.bad_input
def test_validate_and_run_reject_bad_files_and_write_nothing(
    tmp_path, main, monkeypatch, name, text, fragments
):
    """The command in this process (the `main` fixture: its exit status, both streams); a
    subprocess adds only the interpreter's start, which tests/test_cli.py covers."""
    monkeypatch.setenv("CI", "true")
    work = tmp_path / "work"
    work.mkdir()
    p = write(work, text, f"{name}.toml")
    before = sorted(work.rglob("*"))
    for cmd in (["validate", p.name], ["run", p.name]):
        out = main(*cmd, cwd=work)
        assert out.returncode == 2, out.stderr
        assert out.stdout == ""
        lines = out.stderr.strip().splitlines()
        assert lines and all(p.name in ln for ln in lines), out.stderr
        for f in fragments:
            assert f in out.stderr
    assert sorted(work.rglob("*")) == before  # no store, no results/ directory


def test_all_problems_are_reported_together(tmp_path):
    text = GOOD.replace('ml = "ML-DSA-65"', 'ml = "ML-DSA-66"').replace(
        "[sampling]\nmin = 50", "[sampling]\nmin = 0"
    )
    with pytest.raises(CampaignError) as e:
        load(write(tmp_path, text))
    assert len(e.value.problems) >= 2
    assert any("sampling.min" in p for p in e.value.problems)


def test_resumed_mode_needs_a_warmup(tmp_path):
    text = GOOD.replace("[sampling]\nmin = 50", "[sampling]\nmin = 50\nbatch_warmup = 0")
    with pytest.raises(CampaignError) as e:
        load(write(tmp_path, text))
    assert "sampling.batch_warmup" in str(e.value) and "resumed" in str(e.value)


@pytest.mark.bad_input
def test_two_aliases_for_one_algorithm_are_refused(tmp_path):
    text = GOOD.replace('ml = "ML-DSA-65"', 'ml = "ML-DSA-65"\nml2 = "ml-dsa-65"')
    with pytest.raises(CampaignError) as e:
        load(write(tmp_path, text))
    assert "aliases.ml2" in str(e.value) and "one alias per algorithm" in str(e.value)


NETWORK_BASE = """
[aliases]
ml = "ML-DSA-65"
[network.x]
{body}
[matrix.m]
kex = ["X25519"]
hierarchy = [["ml", "ml"]]
network = ["x"]
"""


def test_network_profiles_take_every_key_of_the_link(tmp_path):
    body = (
        "delay_ms = 25\njitter_ms = 2\nrate_mbit = 10\nloss = 0.01\nmtu = 1400\n"
        'queue_packets = 50\ninitcwnd = 4\nbackend = "tun"\nseed = 9\n'
        'congestion_control = "reno"\ndescription = "all keys"\n'
    )
    c = load(write(tmp_path, NETWORK_BASE.format(body=body)))
    p = c.networks["x"]
    assert (p.delay_ms, p.jitter_ms, p.rate_mbit, p.loss, p.mtu) == (25, 2, 10, 0.01, 1400)
    assert (p.queue_packets, p.initcwnd, p.backend, p.seed) == (50, 4, "tun", 9)
    assert p.congestion_control == "reno" and p.description == "all keys"
    s = c.scenarios["x25519__ml_root__ml_leaf__net_x"]
    assert s.network_profile == p
    # Unset: the runner fills in the run's seed; the link its defaults.
    q = load(write(tmp_path, NETWORK_BASE.format(body="delay_ms = 1"), "q.toml")).networks["x"]
    assert (q.seed, q.congestion_control, q.initcwnd) == (None, None, None)
    # A plain veth pair (the benchmark's reference) is a profile too, unshaped.
    v = load(write(tmp_path, NETWORK_BASE.format(body='backend = "veth"'), "v.toml"))
    assert v.networks["x"].backend == "veth"


NETWORK_BAD = [
    # (body of [network.x], fragments of the one message)
    ('congestion_control = "BBR"', ["network.x.congestion_control", "'BBR'", "allowed:",
                                    "cubic, reno, bbr"]),
    ("congestion_control = 5", ["network.x.congestion_control", "expected a kernel congestion"]),
    ('congestion_control = "a_very_long_name"', ["network.x.congestion_control",
                                                 "1-15 lower-case"]),
    ("seed = -1", ["network.x.seed", "bad value -1", "allowed: an integer 0 to"]),
    ('seed = "1"', ["network.x.seed", "expected an integer, got '1'"]),
    ("jitter_ms = 2", ["network.x.jitter_ms", "bad value 2", "allowed: at most delay_ms (0)"]),
    ("delay_ms = 1\njitter_ms = 3", ["network.x.jitter_ms", "allowed: at most delay_ms (1)"]),
    ("rate_mbit = 0.0001", ["network.x.rate_mbit", "0.0001", "allowed: a number >= 0.001"]),
    ("queue_packets = 2000000", ["network.x.queue_packets", "allowed: an integer 1 to 1000000"]),
    ("loss = 1.0", ["network.x.loss", "allowed: a number >= 0.0 and <= 0.99"]),
    ('backend = "ns3"', ["network.x.backend", "'ns3'", "allowed: tun, netem, veth"]),
    ('backend = "veth"\ndelay_ms = 5', ["network.x.delay_ms", "backend 'veth' emulates nothing",
                                        "allowed: 0 or unset"]),
    ("rtt_ms = 5", ["network.x.rtt_ms", "unknown key", "congestion_control"]),
]  # fmt: skip


@pytest.mark.parametrize("body,fragments", NETWORK_BAD, ids=[b[0] for b in NETWORK_BAD])
@pytest.mark.bad_input
def test_each_bad_network_value_is_one_line_naming_file_key_value_and_allowed(
    tmp_path, body, fragments
):
    p = write(tmp_path, NETWORK_BASE.format(body=body))
    with pytest.raises(CampaignError) as e:
        load(p)
    # One problem: the matrix naming the refused profile adds no second, misleading one.
    assert len(e.value.problems) == 1, e.value.problems
    msg = e.value.problems[0]
    assert msg.startswith(f"{p}: ") and "\n" not in msg
    for f in fragments:
        assert f in msg, f"{f!r} not in {msg!r}"


def test_bundled_network_file_crosses_three_profiles_and_loopback():
    c = load(REPO / "campaigns" / "network.toml")
    lan, wan, lossy = (c.networks[n] for n in ("lan", "wan", "lossy"))
    assert 2 * lan.delay_ms == 1 and lan.rate_mbit is None and lan.loss == 0
    assert 2 * wan.delay_ms == 50 and wan.rate_mbit == 10 and wan.loss == 0
    assert 2 * lossy.delay_ms == 100 and lossy.rate_mbit is None and lossy.loss == 0.01
    assert all(p.seed is None for p in c.networks.values())  # the campaign seed applies
    hierarchies = {
        (("ML-DSA-65", "ML-DSA-65"), "leaf+intermediates"),
        (("SLH-DSA-SHAKE-128s", "ML-DSA-65"), "full"),
        (("ML-DSA-65", "ML-DSA-65", "SLH-DSA-SHAKE-128f"), "leaf+intermediates"),
    }
    got = {}
    for s in c.scenarios.values():
        assert s.kex == "X25519MLKEM768"
        got.setdefault((s.hierarchy, s.value("served_chain")), set()).add(s.network)
    assert set(got) == hierarchies
    assert all(nets == {"loopback", "lan", "wan", "lossy"} for nets in got.values())


def test_a_resumption_ratio_axis_gives_mixes(tmp_path):
    text = GOOD.replace(
        'hierarchy = [["ml", "ml"]', 'resumption_ratio = [0, 0.5, 1]\nhierarchy = [["ml", "ml"]', 1
    )
    c = load(write(tmp_path, text, "mix.toml"))
    modes = {s.value("handshake_mode") for s in c.scenarios.values()}
    assert {"full", "resume50", "resumed"} <= modes
    mix = next(s for s in c.scenarios.values() if s.value("handshake_mode") == "resume50")
    assert mix.handshake.resumed_share == 0.5 and mix.scenario_id.endswith("__resume50")
    from chainlab.campaign import ids

    parts = ids.decode(
        mix.scenario_id, {"ml": "ML-DSA-65", "slhf": "SLH-DSA-SHAKE-128f"}, set(c.networks)
    )
    assert parts["handshake_mode"] == "resume50"
    both = text.replace(
        "resumption_ratio = [0, 0.5, 1]", 'resumption_ratio = [0.5]\nhandshake_mode = ["full"]'
    )
    with pytest.raises(CampaignError, match="given with handshake_mode"):
        load(write(tmp_path, both, "both.toml"))


def test_a_client_auth_axis_gives_mutual_tls_scenarios(tmp_path):
    text = GOOD.replace(
        "[matrix.m]",
        '[hierarchies]\nclientml = ["ml", "ml"]\n\n[matrix.c]\nkex = ["X25519"]\n'
        'hierarchy = [["ml", "ml"]]\nclient_auth = ["none", "clientml", ["ml", "slhf"]]\n\n'
        "[matrix.m]",
    ).replace('matrices = ["m"]', 'matrices = ["m", "c"]')
    c = load(write(tmp_path, text, "mtls.toml"))
    auth = {
        s.scenario_id: s.value("client_auth") for s in c.scenarios.values() if s.kex == "X25519"
    }
    assert auth["x25519__ml_root__ml_leaf"] == ()
    assert auth["x25519__ml_root__ml_leaf__client_ml_ml"] == ("ML-DSA-65", "ML-DSA-65")
    s = c.scenarios["x25519__ml_root__ml_leaf__client_ml_slhf"]
    assert s.columns()["client_auth"] == "ML-DSA-65,SLH-DSA-SHAKE-128f"
    assert s.params()["client_auth"] == "ML-DSA-65,SLH-DSA-SHAKE-128f"
    bad = text.replace('"clientml", ["ml", "slhf"]', '"mutual"')
    with pytest.raises(CampaignError) as e:
        load(write(tmp_path, bad, "bad.toml"))
    assert "matrix.c.client_auth[1]: bad value 'mutual'; allowed: 'none'" in str(e.value)


def test_an_intermediate_anchor_needs_an_intermediate(tmp_path):
    text = GOOD.replace(
        'exclude = [{ kex = "X25519", depth = 3 }]',
        'exclude = [{ kex = "X25519", depth = 3 }]\nserved_chain = ["intermediate-anchor"]',
    )
    with pytest.raises(CampaignError) as e:
        load(write(tmp_path, text, "anchor.toml"))
    msg = str(e.value)
    assert "served_chain 'intermediate-anchor' at depth 2" in msg
    assert "allowed: depth 3 or 4" in msg and "exclude" in msg
    fixed = text.replace(
        'served_chain = ["intermediate-anchor"]',
        'served_chain = ["intermediate-anchor"]\n'
        'exclude = [{ kex = "X25519", depth = 3 }, { depth = [1, 2] }]',
    ).replace('exclude = [{ kex = "X25519", depth = 3 }]\nserved', "served")
    c = load(write(tmp_path, fixed, "anchor2.toml"))
    anchored = [s for s in c.scenarios.values() if s.value("served_chain") == "intermediate-anchor"]
    assert anchored and all(s.depth == 3 and s.handshake.anchor_depth == 1 for s in anchored)
    assert anchored[0].handshake.engine_chain == "leaf"


@pytest.mark.bad_input
def test_a_transport_axis_gives_quic_scenarios_and_refuses_what_quic_cannot_do(tmp_path):
    text = GOOD.replace(
        "[matrix.m]",
        '[matrix.q]\nkex = ["X25519"]\nhierarchy = [["ml", "ml"]]\n'
        'transport = ["tcp", "quic"]\n\n[matrix.m]',
    ).replace('matrices = ["m"]', 'matrices = ["m", "q"]')
    c = load(write(tmp_path, text, "quic.toml"))
    q = c.scenarios["x25519__ml_root__ml_leaf__quic"]
    assert q.value("transport") == "quic" and q.params()["transport"] == "quic"
    tcp = c.scenarios["x25519__ml_root__ml_leaf"]
    assert tcp.value("transport") == "tcp" and "transport" not in tcp.params()
    # Resumption, compression and client certificates run over QUIC too.
    levers = text.replace(
        'transport = ["tcp", "quic"]',
        'transport = ["tcp", "quic"]\nhandshake_mode = ["full", "resumed"]\n'
        'cert_compression = ["none", "zlib"]\nclient_auth = ["none", ["ml", "ml"]]',
    )
    assert (
        "x25519__ml_root__ml_leaf__resumed__zlib__client_ml_ml__quic"
        in load(write(tmp_path, levers, "levers.toml")).scenarios
    )
    with_load = text + "\n[load]\nrates = [50]\nstep_s = 3\n"
    loaded = load(write(tmp_path, with_load, "load.toml")).scenarios
    assert loaded["x25519__ml_root__ml_leaf__quic"].load.rates == (50,)

    with pytest.raises(CampaignError) as e:
        load(write(tmp_path, text.replace('"tcp", "quic"', '"udp"'), "udp.toml"))
    assert "matrix.q.transport[0]: bad value 'udp'; allowed: tcp, quic" in str(e.value)


TARGETS = """
[campaign]
name = "probe"
[targets.edge]
address = "edge.example.com:443"
ca = "none"
[matrix.edge]
kex = ["X25519MLKEM768"]
target = ["edge"]
handshake_mode = ["full", "resumed"]
"""


def test_a_target_matrix_measures_a_server_chainlab_does_not_start(tmp_path):
    c = load(write(tmp_path, TARGETS, "probe.toml"))
    s = c.scenarios["x25519mlkem768__target_edge"]
    assert s.hierarchy == () and s.depth == 0 and s.leaf_alg is None
    assert s.target == "edge" and s.target_spec.servername == "edge.example.com"
    assert s.params()["target"] == {
        "name": "edge",
        "address": "edge.example.com:443",
        "servername": "edge.example.com",
        "ca": "none",
        "sigalgs": None,
    }
    assert "x25519mlkem768__target_edge__resumed" in c.scenarios


@pytest.mark.parametrize(
    "change,fragment",
    [
        (('address = "edge.example.com:443"', 'address = "edge.example.com"'),
         "targets.edge.address: bad value 'edge.example.com'; allowed: host:port"),
        (('address = "edge.example.com:443"\n', ""), "targets.edge.address: missing"),
        (('ca = "none"', 'ca = "anchors.pem"'),
         "targets.edge.ca: bad value 'anchors.pem': no such file next to the campaign file"),
        (('target = ["edge"]', 'target = ["egde"]'),
         "matrix.edge.target[0]: bad value 'egde'; allowed: edge (did you mean 'edge'?)"),
        # A target named in a file that declares none: what a target is, not an empty list.
        (('[targets.edge]\naddress = "edge.example.com:443"\nca = "none"\n', ""),
         "matrix.edge.target[0]: bad value 'edge'; allowed: the name of a [targets.<name>] "
         "table (none declared)"),
        (('target = ["edge"]', 'target = ["edge"]\nhierarchy = [["ML-DSA-44"]]'),
         "matrix.edge.hierarchy: given with target"),
        (('target = ["edge"]', 'target = ["edge"]\nnetwork = ["wan"]\n[network.wan]\ndelay_ms = 5'),
         "matrix.edge.network: given with target; allowed: loopback only"),
        (('[matrix.edge]', '[load]\nfractions = [0.5]\n[matrix.edge]'),
         "load.fractions: scenario x25519mlkem768__target_edge probes target 'edge'"),
    ],
)  # fmt: skip
@pytest.mark.bad_input
def test_bad_targets_are_named(tmp_path, change, fragment):
    text = TARGETS.replace(*change)
    with pytest.raises(CampaignError) as e:
        load(write(tmp_path, text, "probe.toml"))
    assert fragment in str(e.value)


def test_a_cluster_table_names_the_scheduler(tmp_path):
    c = load(write(tmp_path, GOOD + '\n[cluster]\naddress = "tcp://10.0.0.5:8786"\n', "cl.toml"))
    assert c.cluster == "tcp://10.0.0.5:8786"
    assert load(write(tmp_path, GOOD, "nocl.toml")).cluster is None
    with pytest.raises(CampaignError) as e:
        load(write(tmp_path, GOOD + '\n[cluster]\naddress = "10.0.0.5:8786"\n', "bad.toml"))
    assert "cluster.address: bad value '10.0.0.5:8786'; allowed: a Dask scheduler" in str(e.value)


@pytest.mark.bad_input
def test_split_placement_refuses_what_it_cannot_measure(tmp_path):
    split = '\n[cluster]\naddress = "tcp://10.0.0.5:8786"\nplacement = "split"\n'
    with pytest.raises(CampaignError) as e:
        load(write(tmp_path, GOOD + split, "split.toml"))
    assert "cluster.placement: 'split' but scenario" in str(e.value)
    assert "runs on the emulated profile 'wan'" in str(e.value)
    loopback = GOOD.replace('network = ["loopback", "wan"]', 'network = ["loopback"]')
    c = load(write(tmp_path, loopback + split, "split2.toml"))
    assert c.placement == "split" and c.cluster == "tcp://10.0.0.5:8786"
