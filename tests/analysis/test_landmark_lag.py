"""Landmark lag's analysis (chainlab.analysis.landmark_lag) on the kept store of a real run
(tests/data/stores/tiny-landmark-lag.toml) and on frames built by hand: what falls back, by
prediction and by the records; the comparison with the X.509 dual chain; the rollback rule
and the landmark interval it fires from."""

import math
import shutil
from pathlib import Path

import pandas as pd
import pytest

from chainlab.analysis import landmark_lag
from chainlab.analysis.analyze import analyze

STORE = Path(__file__).parents[1] / "data" / "stores" / "v15-landmark-lag.duckdb"
OPENSSL = "x25519mlkem768__ml_root__ml_leaf__mtcl64_ren3__pop_cur50_late30_never20__tai0"


@pytest.fixture(scope="module")
def a(tmp_path_factory):
    store = tmp_path_factory.mktemp("lag") / STORE.name
    shutil.copy(STORE, store)  # never write next to the kept file
    return analyze(store)


def test_each_kind_got_what_its_landmarks_predict(a):
    """Per kind, every attempt: 'cur' (current landmarks) the landmark-relative MTC of the
    newest landmark (4: landmarks 2, 3, 4 renewed), 'late' (3 behind) and 'never' the
    standalone one; so the measured share is the kinds' drawn share, inside its interval."""
    att = a.data.landmark_attempts
    assert set(att["scenario_id"]) == {OPENSSL, OPENSSL.replace("__pop", "__stack_boring__pop")}
    for kind, g in att.groupby("client_kind"):
        want = "landmark" if kind == "cur" else "standalone"
        assert (g["mtc_kind"] == want).all(), kind
    assert set(att.loc[att["client_kind"] == "cur", "mtc_landmark"]) == {4}
    lag = a.landmark_lag.set_index("scenario_id")
    for sid, r in lag.iterrows():
        drawn = att[att["scenario_id"] == sid]
        assert r["fallback_measured"] == pytest.approx((drawn["client_kind"] != "cur").mean())
        assert r["fallback_measured_lo"] <= r["fallback_measured"] <= r["fallback_measured_hi"]
        assert r["fallback_predicted"] == pytest.approx(0.5)
        assert r["renewals"] == 3 and r["mtc_batch"] == 64


def test_the_comparison_is_with_the_dual_chain_of_the_same_stack_and_path(a):
    lag = a.landmark_lag.set_index("scenario_id")
    # The campaign's X.509 dual chain runs on OpenSSL only.
    assert lag.at[OPENSSL, "x509_id"] == "x25519mlkem768__ec_root__ec_leaf__dual_ml_ml__pop_pq100"
    assert lag["x509_id"].isna().sum() == 1
    r = lag.loc[OPENSSL]
    summary = a.summary.set_index("scenario_id")
    want = summary.at[OPENSSL, "server_cpu_ms"] / summary.at[r["x509_id"], "server_cpu_ms"]
    assert r["server_cpu_ms_vs_x509"] == pytest.approx(want)
    assert r["server_cpu_ms_vs_x509_lo"] < want < r["server_cpu_ms_vs_x509_hi"]


def test_the_rule_reads_each_load_against_the_classical_baseline(a):
    rule = a.landmark_lag_rule
    assert set(rule["baseline_id"]) == {
        "x25519mlkem768__ec_root__ec_leaf__dual_ml_ml__pop_classical100"
    }
    for r in rule.to_dict("records"):
        assert r["ratio"] == pytest.approx(r["p99_ms"] / r["baseline_p99_ms"])
        if r["verdict"] == "rolls back":
            assert r["ratio_lo"] > 2
        elif r["verdict"] == "holds":
            assert r["ratio_hi"] < 2


def _verdict(batch, verdict, ratio, load="single"):
    return {"server_stack": "boringssl", "network": "loopback", "load": load,
            "mtc_batch": batch, "verdict": verdict, "ratio": ratio}  # fmt: skip


def test_the_crossing_is_the_smallest_interval_that_rolls_back():
    verdicts = pd.DataFrame(
        [
            _verdict(65536, "holds", 1.2),
            _verdict(1572864, "undecided", 1.9),
            _verdict(1572864, "rolls back", 2.6),
            _verdict(65536, "holds", 1.1, load="0.5"),
        ]
    )
    got = landmark_lag.crossing(verdicts).set_index("load")
    assert got.at["single", "rolls_back_at"] == 1572864
    assert got.at["single", "may_roll_back_at"] == 1572864
    assert got.at["single", "max_ratio"] == pytest.approx(2.6)
    assert math.isnan(got.at["0.5", "rolls_back_at"])
    assert got.at["0.5", "highest"] == 65536
    assert landmark_lag.crossing(pd.DataFrame()).empty


def test_the_report_gives_the_interval_in_hours_at_the_campaigns_issuance_rate(tmp_path):
    """[analysis] mtc_entries_per_hour turns entries per landmark into hours; without it the
    report gives entries only."""
    from chainlab.report import build_report

    store = tmp_path / STORE.name
    shutil.copy(STORE, store)
    md = (build_report(store, tmp_path / "r", mtc_entries_per_hour=32) / "report.md").read_text()
    assert "landmarks every 2.00 h (64 entries)" in md
    plain = (build_report(store, tmp_path / "p") / "report.md").read_text()
    assert "| 64 entries |" in plain and " h (64 entries)" not in plain


@pytest.mark.bad_input
def test_a_bad_issuance_rate_is_one_line(tmp_path):
    from chainlab.campaign.analysis_settings import parse_analysis
    from chainlab.errors import ChainlabError

    with pytest.raises(ChainlabError) as e:
        parse_analysis({"mtc_entries_per_hour": 0}, "c.toml")
    assert "analysis.mtc_entries_per_hour" in str(e.value)
