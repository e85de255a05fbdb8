"""The cost model's primitives, measured with the real engine: adaptive sampling with a time
cap, the reference handshakes, the cache per machine and engine build; and a small real
campaign whose report's residuals are computed from the store."""

import json
import shutil
import statistics
import uuid
from dataclasses import replace

import duckdb
import pytest

from chainlab import axes
from chainlab.analysis.analyze import analyze
from chainlab.campaign import load
from chainlab.campaign.model import (
    PATH_REFERENCE_COUNT,
    REFERENCE_KEPT_SHARE,
    NetworkProfile,
    PrimitivesPlan,
)
from chainlab.model import cost, estimate, implementations, reference_specs
from chainlab.report import build_report
from chainlab.runner import primitives, references
from chainlab.runner.campaign import RunOptions, run

from .conftest import REPO

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("serial")]  # measures: runs alone

SIGN = primitives.item_of(("ML-DSA-44", "sign", cost.CV))
KEYGEN = primitives.item_of(("X25519", "keygen", None))
# aws-lc's ML-DSA-44 signature, timed by the rustls engine.
AWS_SIGN = primitives.item_of(
    ("aws-lc", "ML-DSA-44", "sign", cost.CV), implementations.Timer("rustls")
)


def test_the_interval_or_the_cap_ends_sampling():
    plan = PrimitivesPlan(target_rel_halfwidth=0.02, time_cap_s=1.0)
    assert not primitives.satisfied([], plan)
    assert primitives.satisfied([1_000_000] * 5, plan)  # no spread: the interval is met
    assert not primitives.satisfied([1_000_000, 2_000_000] * 2, plan)  # too few, too wide
    assert primitives.satisfied([500_000_000, 600_000_000], plan)  # 1.1 s: the cap
    assert primitives.next_count([], plan) == primitives.PILOT
    # CV 0.5 at 2 %: (1.96 x 0.5 / 0.02)^2 = 2401 operations, but 1 s of 1 ms ones left
    values = [500_000, 1_500_000] * 3
    assert primitives.next_count(values, plan) == pytest.approx(994, abs=2)


def test_a_primitive_the_host_slowed_around_is_measured_again_and_named(
    engine_bin, tmp_path, monkeypatch
):
    monkeypatch.delenv("CHAINLAB_HOST_PASSES")  # the default passes, not the tests' one
    # The host reference read 60 ms after the first measurement, 40 ms otherwise: the
    # measurement is taken again after a reading of its own, and only that one is kept.
    # (A time cap of 1 µs is met by the pilot batch, whatever its spread: no reading between
    # batches. An interval alone was not: one pilot preempted on a busy CI host took another.)
    readings = iter([40_000_000, 60_000_000, 40_000_000, 40_000_000])
    plan = PrimitivesPlan(target_rel_halfwidth=1.0, time_cap_s=1e-6)
    out = primitives.ensure(
        engine_bin, [KEYGEN], plan, uuid.uuid4().hex, tmp_path / "w", with_references=False,
        read_cache=False, write_cache=False, host_reading=lambda: next(readings),
    )  # fmt: skip
    assert next(readings, None) is None  # every reading taken, no more
    rows = [r for r in out.rows if r["subject"] == "X25519"]
    assert rows and len({r["seq"] for r in rows}) == len(rows)  # one measurement, not both
    # Each row keeps the host's speed around the kept measurement: the mean of its readings.
    assert {r["host_cpu_ns"] for r in rows} == {40_000_000}
    assert (out.measured, out.cached) == (1, 0)
    [note] = out.host_notes
    assert note.startswith(f"{KEYGEN.implementation} X25519 keygen: measured again")


def test_each_batch_carries_the_host_readings_around_it(engine_bin, tmp_path, monkeypatch):
    # Batches of ~0.2 ms and an interval no batch meets: the primitive runs to its 2 ms cap
    # in about ten batches, the host read between each two (its n-th reading n + 40 ms).
    monkeypatch.setattr(primitives, "BATCH_MAX_S", 0.0002)
    calls = []

    def read():
        calls.append(None)
        return (40 + len(calls)) * 1_000_000

    plan = PrimitivesPlan(target_rel_halfwidth=0.0001, time_cap_s=0.002)
    out = primitives.ensure(
        engine_bin, [KEYGEN], plan, uuid.uuid4().hex, tmp_path / "w", with_references=False,
        read_cache=False, write_cache=False, host_reading=read,
    )  # fmt: skip
    rows = sorted((r for r in out.rows if r["subject"] == "X25519"), key=lambda r: r["seq"])
    hosts = [r["host_cpu_ns"] for r in rows]
    # Batch k lies between readings k + 1 and k + 2: the mean of the two, in batch order.
    assert hosts == sorted(hosts) and len(set(hosts)) >= 3
    assert set(hosts) == {(41 + k + 0.5) * 1_000_000 for k in range(len(calls) - 1)}
    assert "batch" not in rows[0]


def test_items_cover_every_operation_and_the_references():
    c = load(REPO / "campaigns" / "quick.toml")
    keys = {i.key for i in primitives.items_for(c.select())}
    assert ("SLH-DSA-SHAKE-128f", "sign", "cv") in keys
    assert ("ML-DSA-65", "verify", "cert") in keys
    assert ("X25519MLKEM768", "encaps", None) in keys
    assert ("ECDSA-P256", "verify", "cert") in keys  # the ecdsa reference's
    assert ("SLH-DSA-SHAKE-128f", "verify", "cert") not in keys  # a leaf never signs certs
    # A rustls server signs and encapsulates with aws-lc (its engine times both); a
    # BoringSSL server's with BoringSSL; a BoringSSL client's decompression no engine times:
    # OpenSSL 3.5's figure is measured for it.
    c2 = load(REPO / "campaigns" / "stacks.toml")
    rustls = [
        s
        for s in c2.select()
        if estimate.view(s).stacks == ("rustls", "rustls")
        and s.hierarchy[-1] == "ML-DSA-65"
        and s.kex == "X25519MLKEM768"
    ]
    timed = {i.timing_key: i.timer.engine for i in primitives.items_for(rustls[:1])}
    leaf = rustls[0].hierarchy[-1]
    assert timed[("aws-lc", leaf, "sign", "cv")] == "rustls"
    assert timed[("aws-lc", rustls[0].kex, "encaps", None)] == "rustls"
    boring = [
        replace(
            rustls[0],
            levers=(
                (axes.STACK.key, ("boringssl", "boringssl")),
                (axes.CERT_COMPRESSION.key, "zlib"),
            ),
        )
    ]
    timed_boring = {i.timing_key: i.timer.engine for i in primitives.items_for(boring)}
    assert timed_boring[("boringssl", rustls[0].kex, "encaps", None)] == "boringssl"
    assert timed_boring[("boringssl", "ML-DSA-65", "sign", "cv")] == "boringssl"
    assert timed_boring[("openssl-3.5", "zlib", "decompress", None)] == "openssl-3.5"
    # The references run on each stack: the rustls ones' ECDSA leaf in aws-lc, the OpenSSL
    # 3.5 ones' (always run: its overhead prices a stack without its own) in OpenSSL.
    assert timed[("aws-lc", "ECDSA-P256", "sign", "cv")] == "rustls"
    assert timed[("openssl-3.5", "ECDSA-P256", "sign", "cv")] == "openssl-3.5"
    assert timed[("aws-lc", "ML-DSA-44", "verify", "cv")] == "rustls"  # the mldsa reference's
    # Beside OpenSSL 3.5's: each other implementation's own signatures, liboqs' ML-DSA only.
    others = {(i.implementation, i.subject) for i in primitives.stack_items()}
    assert ("liboqs", "ML-DSA-65") in others and ("go", "ECDSA-P384") in others
    assert not {s for impl, s in others if impl == "liboqs"} - set(implementations.ML_DSA)
    every = {i.key for i in primitives.all_items()}
    # Per signature algorithm: sign cv, verify cv, verify cert, accepting an MTC of its key;
    # the composites priced as their parts plus M''s pre-hash (SHA256, SHA512; cv and cert).
    assert len(every) == 29 * 4 + 10 * 2 + 6 * 3 + 3 + 2 * 2  # 20 of OpenSSL, 9 of liboqs
    assert ("SHA512", "prehash", "cert") in every
    assert keys <= every


def test_primitives_are_measured_then_taken_from_the_cache(
    engine_bin, pki_cache, tmp_path, monkeypatch
):
    monkeypatch.setenv("CHAINLAB_PRIMITIVES_CACHE", str(tmp_path / "cache"))
    plan = PrimitivesPlan(target_rel_halfwidth=1e-6, time_cap_s=0.05)
    first = uuid.uuid4().hex
    items, stacks = [SIGN, KEYGEN, AWS_SIGN], ["openssl-3.5", "rustls"]
    out = primitives.ensure(engine_bin, items, plan, first, tmp_path / "w1", stacks=stacks)
    assert out.measured == 3 + 2 * 3 and out.cached == 0 and out.cache_note is None
    sign = [
        r for r in out.rows if r["subject"] == "ML-DSA-44" and r["implementation"] == "openssl-3.5"
    ]
    # An interval of 1e-6 is never met: the 50 ms cap stops it (ML-DSA-44 signs in ~0.6 ms).
    total = sum(r["cpu_ns"] for r in sign) / 1e9
    assert total >= 0.05
    assert len(sign) < 1000  # batches sized by the time left: no runaway
    assert all(r["message_bytes"] == 130 and r["message"] == "cv" for r in sign)
    refs = [r for r in out.rows if r["subject"].startswith(reference_specs.REFERENCE_PREFIX)]
    assert len(refs) == 2 * 3 * primitives.REFERENCE_COUNT
    assert all(r["server_cpu_ns"] > 0 and r["kib"] > 0 for r in refs)
    # Each stack's references carry the stack; each primitive its implementation.
    assert {r["implementation"] for r in refs} == {"openssl-3.5", "rustls"}
    by_impl = {(r["implementation"], r["subject"]) for r in out.rows if r["op"] == "sign"}
    assert by_impl == {("openssl-3.5", "ML-DSA-44"), ("aws-lc", "ML-DSA-44")}
    # A second run takes everything from the cache, keeping who measured it.
    second = uuid.uuid4().hex
    again = primitives.ensure(engine_bin, items, plan, second, tmp_path / "w2", stacks=stacks)
    assert again.measured == 0 and again.cached == 3 + 2 * 3
    assert {r["run_id"] for r in again.rows} == {second}
    assert {r["measured_run"] for r in again.rows} == {first}
    assert len(again.rows) == len(out.rows)
    m = primitives.model(again.rows, "test")
    # Every row keeps the host reading around it, and the model brings each to its median
    # (chainlab.model.host_speed).
    assert all(r["host_cpu_ns"] > 0 for r in again.rows)
    assert m.host_ns is not None
    # Each row as its own batch's reading would have it, at the model's reading.
    assert m.timings[SIGN.timing_key].mean_ms == pytest.approx(
        statistics.mean(r["cpu_ns"] / r["host_cpu_ns"] for r in sign) * m.host_ns / 1e6
    )
    assert m.timings[AWS_SIGN.timing_key].n >= primitives.MIN_SAMPLES
    assert m.stacks == ["openssl-3.5", "rustls"]
    assert set(m.stack_references["rustls"]) == {
        ("ecdsa", "full"),
        ("ecdsa", "resumed"),
        ("mldsa", "full"),
    }


TINY = """
[campaign]
name = "costtiny"
order = "declared"
baseline = "x25519mlkem768__ml_root__ml_leaf"
[aliases]
ml = "ML-DSA-44"
slhf = "SLH-DSA-SHA2-128f"
[sampling]
mode = "fixed"
count = 40
warmup = 3
[primitives]
target_rel_halfwidth = 0.05
time_cap_s = 1
[matrix.m]
kex = ["X25519MLKEM768"]
hierarchy = [["ml", "ml"], ["ml", "slhf"]]
handshake_mode = ["full", "resumed"]
"""


@pytest.fixture(scope="module")
def cost_store(tmp_path_factory, engine_bin, pki_cache):
    d = tmp_path_factory.mktemp("cost")
    f = d / "costtiny.toml"
    f.write_text(TINY)
    store = d / "costtiny.duckdb"
    summary = run(load(f), RunOptions(store=store, live_progress=False))
    assert len(summary.completed) == 4
    return store


def independent_residuals(store) -> dict:
    """Per scenario and side: measured mean CPU minus its primitives' mean CPU at the host's
    speed during the scenario (each primitive row's CPU over the reading around its batch,
    averaged, times the scenario's reading: chainlab.model.host_speed), computed from the stored
    rows with SQL and the operation list, not by the analysis."""
    con = duckdb.connect(str(store), read_only=True)
    try:
        means = {
            (s, o, m): v
            for s, o, m, v in con.execute(
                "SELECT subject, op, message, avg(cpu_ns::DOUBLE / host_cpu_ns) / 1e6 "
                "FROM primitive_samples GROUP BY ALL"
            ).fetchall()
        }
        hosts = dict(
            con.execute(
                "SELECT scenario_id, avg(cpu_ns) FROM host_reference WHERE step = -1 GROUP BY ALL"
            ).fetchall()
        )
        measured = con.execute(
            "SELECT scenario_id, avg(server_cpu_ns) / 1e6, avg(client_cpu_ns) / 1e6 "
            "FROM samples WHERE NOT warmup AND outcome = 'ok' GROUP BY ALL"
        ).fetchall()
        params = dict(con.execute("SELECT scenario_id, params FROM scenarios").fetchall())
    finally:
        con.close()
    out = {}
    for sid, server, client in measured:
        p = json.loads(params[sid])
        ops = cost.operations(p["hierarchy"], p["kex"], p["handshake_mode"])
        prim = {side: 0.0 for side in cost.SIDES}
        for o in ops:
            prim[o.side] += o.count * means[o.key] * hosts[sid]
        out[sid] = {"server": server - prim["server"], "client": client - prim["client"]}
    return out


def test_residuals_in_the_analysis_are_computed_from_the_store(cost_store, tmp_path):
    a = analyze(cost_store)
    m = a.cost_model.set_index("scenario_id")
    assert len(m) == 4
    for column in (
        "server_residual",
        "server_residual_share",
        "client_residual",
        "server_predicted",
    ):
        assert m[column].notna().all(), column
    expected = independent_residuals(cost_store)
    for sid, sides in expected.items():
        for side, residual in sides.items():
            assert m.loc[sid, f"{side}_residual"] == pytest.approx(residual, rel=1e-9, abs=1e-9)
    # The SLH-DSA leaf's server primitives are its signature (how close the prediction comes
    # is a benchmark figure, `chainlab bench model`, never a test's).
    slh = "x25519mlkem768__ml_root__slhf_leaf"
    assert m.loc[slh, "server_sign"] > 0.9 * m.loc[slh, "server_primitives"]
    assert m.loc[f"{slh}__resumed", "server_sign"] == 0  # resumed: no CertificateVerify
    # Change the stored primitive and the residual moves by exactly the change, at the
    # host's speed during the scenario.
    changed = tmp_path / "changed.duckdb"
    shutil.copy(cost_store, changed)
    con = duckdb.connect(str(changed))
    con.execute(
        "UPDATE primitive_samples SET cpu_ns = cpu_ns + 1000000 "
        "WHERE subject = 'SLH-DSA-SHA2-128f' AND op = 'sign'"
    )
    [(speed,)] = con.execute(
        "SELECT (SELECT avg(cpu_ns) FROM host_reference WHERE scenario_id = ? AND step = -1) "
        "* (SELECT avg(1 / host_cpu_ns) FROM primitive_samples "
        "WHERE subject = 'SLH-DSA-SHA2-128f' AND op = 'sign')",
        [slh],
    ).fetchall()
    con.close()
    m2 = analyze(changed).cost_model.set_index("scenario_id")
    assert m2.loc[slh, "server_residual"] == pytest.approx(
        m.loc[slh, "server_residual"] - 1.0 * speed
    )
    assert m2.loc["x25519mlkem768__ml_root__ml_leaf", "server_residual"] == pytest.approx(
        m.loc["x25519mlkem768__ml_root__ml_leaf", "server_residual"]
    )


def test_the_report_shows_the_cost_model(cost_store, tmp_path, figures):
    build_report(cost_store, tmp_path / "r")
    md = (tmp_path / "r" / "report.md").read_text()
    assert "## Cost model: primitives, prediction and residual" in md
    assert "residual share" in md and "Hardware counters" in md
    assert (tmp_path / "r" / "tables" / "cost_model_server.csv").exists()
    assert (tmp_path / "r" / "figures" / "cost_breakdown.png").exists()


def test_a_path_reference_is_taken_over_the_emulated_link_and_priced_into_its_scenarios(
    engine_bin, pki_cache, netns_root, tmp_path, monkeypatch
):
    monkeypatch.setenv("CHAINLAB_PRIMITIVES_CACHE", str(tmp_path / "cache"))
    plan = PrimitivesPlan(target_rel_halfwidth=0.5, time_cap_s=0.05)
    path = NetworkProfile(name="wan5", delay_ms=5.0)
    run_id = uuid.uuid4().hex
    # A rustls scenario over the path: each stack on it takes its own path reference.
    s = next(
        s
        for s in load(REPO / "campaigns" / "families.toml").scenarios.values()
        if s.network != "loopback" and estimate.view(s).stacks == ("rustls", "rustls")
    )
    assert references.profiles_of([replace(s, network_profile=path)]) == [(path, "rustls")]
    paths = [(path, "openssl-3.5"), (path, "rustls")]
    stacks = ["openssl-3.5", "rustls"]
    out = primitives.ensure(engine_bin, [KEYGEN], plan, run_id, tmp_path / "w", stacks=stacks,
                            profiles=paths)  # fmt: skip
    assert out.path_notes == []
    over = [r for r in out.rows if r["message"] == reference_specs.path_key(path)]
    # Both full references (ECDSA and ML-DSA: the path's CPU as a line in KiB) per stack.
    assert len(over) == 4 * PATH_REFERENCE_COUNT
    assert {(r["subject"], r["op"], r["implementation"]) for r in over} == {
        (reference_specs.REFERENCE_PREFIX + name, "full", stack)
        for name in ("ecdsa", "mldsa")
        for stack in ("openssl-3.5", "rustls")
    }
    # Each handshake paid the path's round trips (10 ms each), loopback's did not.
    assert min(r["wall_ns"] for r in over) > 10_000_000
    # Around each, its loopback twin (half before, half after), what its extra is taken
    # against: loopback's latency (a median: one of them may meet a busy host).
    twins = [r for r in out.rows if r["message"] == reference_specs.path_base_key(path)]
    assert len(twins) == 4 * PATH_REFERENCE_COUNT
    assert statistics.median(r["wall_ns"] for r in twins) < 10_000_000

    # On OpenSSL (--random-seed) each path handshake has a twin that drew the same bytes: per
    # seq the same size (an ECDSA signature's DER is 70-72 bytes, set by its random nonce).
    def sizes(rows):
        return {r["seq"]: r["kib"] for r in rows if r["implementation"] == "openssl-3.5"
                and r["subject"] == reference_specs.REFERENCE_PREFIX + "ecdsa"}  # fmt: skip

    paired = sizes(over).keys() & sizes(twins).keys()
    assert len(paired) >= PATH_REFERENCE_COUNT - 2
    assert all(sizes(over)[q] == sizes(twins)[q] for q in paired)
    assert len({sizes(over)[q] for q in paired}) > 1
    m = primitives.model(out.rows, "test")
    assert set(m.path_extras) == {("openssl-3.5", "wan5"), ("rustls", "wan5")}
    assert set(m.stack_references) == {"openssl-3.5", "rustls"}
    # A second run takes them from the cache.
    again = primitives.ensure(engine_bin, [KEYGEN], plan, uuid.uuid4().hex, tmp_path / "w2",
                              stacks=stacks, profiles=paths)  # fmt: skip
    assert again.measured == 0
    assert sum(r["message"] == reference_specs.path_key(path) for r in again.rows) == len(over)


def test_a_peer_reference_runs_the_server_stack_against_the_other_client(
    engine_bin, pki_cache, tmp_path, monkeypatch
):
    monkeypatch.setenv("CHAINLAB_PRIMITIVES_CACHE", str(tmp_path / "cache"))
    plan = PrimitivesPlan(target_rel_halfwidth=0.5, time_cap_s=0.05)
    stacks = ["openssl-3.5", "rustls"]
    items = primitives.items_for([])
    peers = [("rustls", "openssl-3.5")]
    out = primitives.ensure(engine_bin, items, plan, uuid.uuid4().hex, tmp_path / "w",
                            stacks=stacks, peers=peers)  # fmt: skip
    pair = [r for r in out.rows if r["message"] == reference_specs.PEER_PREFIX + "rustls"]
    # The server's row (OpenSSL 3.5), the classical full reference, in full.
    assert {(r["subject"], r["op"], r["implementation"]) for r in pair} == {
        (reference_specs.REFERENCE_PREFIX + "ecdsa", "full", "openssl-3.5")
    }
    assert len(pair) == primitives.REFERENCE_COUNT
    m = primitives.model(out.rows, "test")
    assert set(m.peer_extras) == {("rustls", "openssl-3.5")}
    assert set(m.stack_references) == set(stacks)
    # What rustls' client cost beyond its own pair's is measured, not assumed: within the
    # spread of a sub-millisecond handshake.
    extra = m.peer_extras[("rustls", "openssl-3.5")]
    assert abs(extra["client"]) < 0.5 and abs(extra["server"]) < 0.5
    assert all(r["server_cpu_ns"] > 0 and r["kib"] > 0.5 for r in pair)


def test_full_references_are_taken_again_over_quic_and_give_its_overhead(
    engine_bin, pki_cache, tmp_path, monkeypatch
):
    monkeypatch.setenv("CHAINLAB_PRIMITIVES_CACHE", str(tmp_path / "cache"))
    plan = PrimitivesPlan(target_rel_halfwidth=0.5, time_cap_s=0.05)
    quic = [("openssl-3.5", "quic")]
    items = primitives.items_for([])  # the references' own primitives
    out = primitives.ensure(engine_bin, items, plan, uuid.uuid4().hex, tmp_path / "w",
                            transports=quic)  # fmt: skip
    over = [r for r in out.rows if r["message"] == reference_specs.TRANSPORT_PREFIX + "quic"]
    assert {(r["subject"], r["op"], r["implementation"]) for r in over} == {
        (reference_specs.REFERENCE_PREFIX + "ecdsa", "full", "openssl-3.5"),
        (reference_specs.REFERENCE_PREFIX + "mldsa", "full", "openssl-3.5"),
    }
    # A QUIC server leaves a few handshakes' CPU null (the previous connection still closing).
    assert len(over) >= 2 * primitives.REFERENCE_COUNT * REFERENCE_KEPT_SHARE
    assert len(over) <= 2 * primitives.REFERENCE_COUNT
    m = primitives.model(out.rows, "test")
    key = reference_specs.overhead_key("openssl-3.5", "quic")
    assert set(m.stack_references) == {"openssl-3.5", key}
    # Its own lines, fitted on the QUIC handshakes (they carry more bytes: datagrams'
    # headers, acknowledgements), and the TCP resumed line.
    assert m.overheads[key].full != m.overheads["openssl-3.5"].full
    assert m.overheads[key].resumed == m.overheads["openssl-3.5"].resumed
    quic_kib = m.stack_references[key][("ecdsa", "full")]["kib"]
    assert quic_kib > m.stack_references["openssl-3.5"][("ecdsa", "full")]["kib"]
    # The cache keeps them: a second run measures nothing, and fresh.py counts none to make.
    again = primitives.ensure(engine_bin, items, plan, uuid.uuid4().hex, tmp_path / "w2",
                              transports=quic)  # fmt: skip
    assert again.measured == 0
    assert sum(
        r["message"] == reference_specs.TRANSPORT_PREFIX + "quic" for r in again.rows
    ) == len(over)
