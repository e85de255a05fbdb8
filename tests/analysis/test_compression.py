"""Certificate compression, judged: sizes from the server's ready line, the client's cost and
the latency against the uncompressed twin, and a verdict that follows the data."""

import pytest

from chainlab.analysis.analyze import analyze
from chainlab.analysis.compression import guide_claim

from .conftest import ML, SLH, constant


def pair(share, leaf=ML, **kw):
    """An uncompressed scenario and its brotli twin keeping `share` of the message."""
    return [
        constant(leaf_alg=leaf, latency_ms=2.0, client_cpu_ms=1.0, bytes_read=16000, **kw),
        constant(
            leaf_alg=leaf, cert_compression="brotli", compressed_share=share, latency_ms=2.2,
            client_cpu_ms=1.1, bytes_read=15500, **kw,
        ),
    ]  # fmt: skip


def test_the_guide_claim_is_read_with_its_source():
    claim = guide_claim()
    assert (claim["low"], claim["high"]) == (0.40, 0.50)
    assert "40–50%" in claim["quote"] and claim["line"] == 123


def test_small_savings_do_not_hold_the_claim(make_store):
    a = analyze(make_store(pair(0.97) + pair(0.986, leaf=SLH)))
    c = a.compression.set_index("algorithm")
    assert len(a.compression) == 2
    row = a.compression[a.compression["family"] == "ML-DSA"].iloc[0]
    assert row["saving"] == pytest.approx(0.03, abs=2e-4)
    assert row["before_bytes"] - row["after_bytes"] == row["saving_bytes"]
    assert row["wire_saving_bytes"] == 500
    assert row["client_cpu_diff_ms"] == pytest.approx(0.1)
    assert row["latency_ratio"] == pytest.approx(1.1)
    assert set(c.index) == {"brotli"}
    v = a.compression_verdicts.set_index("family")
    assert v.loc["ML-DSA", "verdict"] == "does not hold"
    assert v.loc["mixed ML-DSA + SLH-DSA", "verdict"] == "does not hold"


def test_a_45_percent_saving_turns_the_verdict(make_store, tmp_path):
    a = analyze(make_store(pair(0.55)))
    v = a.compression_verdicts.set_index("family")
    assert v.loc["ML-DSA", "saving_median"] == pytest.approx(0.45, abs=2e-4)
    assert v.loc["ML-DSA", "verdict"] == "holds"
    from chainlab.report import build_report

    out = build_report(make_store(pair(0.55), name="r.duckdb"), tmp_path / "r")
    md = (out / "report.md").read_text()
    assert "## Certificate compression, judged" in md
    assert "the claim holds" in md and "40–50%" in md


def test_a_chain_that_does_not_shrink_is_sent_as_it_is(make_store):
    a = analyze(make_store(pair(1.02)))
    row = a.compression.iloc[0]
    assert not row["installed"] and row["after_bytes"] == row["before_bytes"]
    assert row["saving"] == 0


def test_no_compressed_scenario_no_section(make_store):
    a = analyze(make_store([constant()]))
    assert a.compression.empty and a.compression_verdicts.empty
