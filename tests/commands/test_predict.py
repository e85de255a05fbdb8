"""`chainlab predict`: predictions from measured primitives, labelled as such, missing
primitives measured first and cached; `validate` then uses the same model."""

import re

import pytest

from chainlab import engine
from chainlab.campaign import load
from chainlab.cli import main
from chainlab.model import estimate, flights
from chainlab.runner import primitives_cache

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("serial")]  # measures: runs alone

CAMPAIGN = """
[campaign]
name = "predicttiny"
[aliases]
ml = "ML-DSA-44"
slhf = "SLH-DSA-SHA2-128f"
[sampling]
mode = "fixed"
count = 10
[primitives]
target_rel_halfwidth = 0.1
time_cap_s = 0.5
[network.wan]
delay_ms = 25
[matrix.m]
kex = ["X25519", "MLKEM768"]
hierarchy = [["ml", "ml", "ml"], ["ml", "slhf"]]
network = ["loopback", "wan"]
"""


def test_predict_prints_every_scenario_from_measured_primitives(
    tmp_path, monkeypatch, capsys, engine_bin
):
    monkeypatch.setenv("CHAINLAB_PRIMITIVES_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CHAINLAB_PKI_CACHE", str(tmp_path / "pki"))
    f = tmp_path / "p.toml"
    f.write_text(CAMPAIGN)
    assert main(["predict", str(f)]) == 0
    out = capsys.readouterr().out
    assert "PREDICTED from this machine's primitives" in out
    assert re.search(r"0 from its cache, \d+ measured now", out), out
    c = load(f)
    model = primitives_cache.cached_model()
    assert model is not None
    for s in c.select():
        line = next(x for x in out.splitlines() if x.startswith(s.scenario_id + " "))
        latency, server, client, cb, sb, per_core = line.split()[1:]
        p = estimate.predict(s, model)
        assert float(server) == pytest.approx(p.server_ms, abs=6e-4)
        assert float(client) == pytest.approx(p.client_ms, abs=6e-4)
        assert float(latency) == pytest.approx(estimate.handshake_ms(s, model), abs=6e-4)
        assert (int(cb), int(sb)) == flights.flight_bytes(s)
        # printed to one decimal
        assert float(per_core) == pytest.approx(1000 / p.server_ms, abs=0.051)
        if s.network == "wan":  # two round trips of 50 ms at least
            assert float(latency) > 100
    # A second prediction measures nothing.
    assert main(["predict", str(f)]) == 0
    assert re.search(r", 0 measured now", capsys.readouterr().out)
    # validate now prices handshakes with the same model.
    assert main(["validate", str(f)]) == 0
    assert "handshake costs: the cost model" in capsys.readouterr().out


def test_validate_says_when_it_falls_back_to_the_built_in_table(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CHAINLAB_PRIMITIVES_CACHE", str(tmp_path / "empty"))
    f = tmp_path / "p.toml"
    f.write_text(CAMPAIGN)
    assert main(["validate", str(f)]) == 0
    out = capsys.readouterr().out
    assert "handshake costs: the built-in table for 8 of 8 scenarios" in out


def test_the_estimates_take_an_earlier_builds_cache_until_this_build_has_one(tmp_path, monkeypatch):
    monkeypatch.setenv("CHAINLAB_PRIMITIVES_CACHE", str(tmp_path / "cache"))
    assert primitives_cache.cached_model() is None
    # A cache of another build beside this build's path (as an engine rebuild leaves it).
    row = {
        "run_id": "r",
        "implementation": "openssl-3.5",
        "subject": "ML-DSA-65",
        "op": "sign",
        "message": "cv",
        "message_bytes": 64,
        "seq": 0,
        "wall_ns": 900_000,
        "cpu_ns": 800_000,
        "server_cpu_ns": None,
        "kib": None,
        "measured_run": "r",
        "measured_at": primitives_cache.now(),
    }
    info = engine.info()
    other = tmp_path / "cache" / "0123456789abcdef.duckdb"
    boring = {**row, "implementation": "boringssl", "cpu_ns": 200_000}
    earlier = [row, {**row, "seq": 1}, boring, {**boring, "seq": 1}]
    assert primitives_cache.save_to_cache(other, earlier, info) is None
    m = primitives_cache.cached_model()
    assert m is not None and "earlier engine build" in m.source
    assert m.timings[("openssl-3.5", "ML-DSA-65", "sign", "cv")].mean_ms == pytest.approx(0.8)
    # This build's own cache, once it has a primitive, gives it; what it lacks still comes
    # from the earlier build's (a run that measured only OpenSSL's primitives leaves the
    # other stacks' to be priced).
    mine = primitives_cache.cache_path(info)
    assert primitives_cache.save_to_cache(mine, [{**row, "cpu_ns": 500_000}], info) is None
    m = primitives_cache.cached_model()
    assert "this machine and engine build" in m.source and "earlier build" in m.source
    assert m.timings[("openssl-3.5", "ML-DSA-65", "sign", "cv")].mean_ms == pytest.approx(0.5)
    assert m.timings[("boringssl", "ML-DSA-65", "sign", "cv")].mean_ms == pytest.approx(0.2)
    # Once this build holds everything the earlier one did, its source says so alone.
    assert primitives_cache.save_to_cache(mine, [{**boring, "cpu_ns": 300_000}], info) is None
    m = primitives_cache.cached_model()
    assert m.source == "primitives cache of this machine and engine build"
    assert m.timings[("boringssl", "ML-DSA-65", "sign", "cv")].mean_ms == pytest.approx(0.3)


def test_merged_summaries_keep_the_first_row_of_each_primitive():
    nan = float("nan")
    a = [{"implementation": "go", "subject": "X", "op": "sign", "message": nan, "n": 1}]
    b = [
        {"implementation": "go", "subject": "X", "op": "sign", "message": nan, "n": 2},
        {"implementation": "go", "subject": "X", "op": "verify", "message": nan, "n": 3},
    ]
    got = primitives_cache.merged_summary([a, b])
    assert [(r["op"], r["n"]) for r in got] == [("sign", 1), ("verify", 3)]
