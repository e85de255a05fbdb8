"""Composite ML-DSA through a whole run: a composite signature at each position of a rustls
hierarchy beside the pure ML-DSA one and an SLH-DSA root on OpenSSL 3.5, stored, analysed
and shown in the report's "Composite ML-DSA by position" section."""

import pytest

from chainlab.analysis.analyze import analyze
from chainlab.campaign import load
from chainlab.report import build_report
from chainlab.runner.campaign import RunOptions, run

pytestmark = pytest.mark.slow

CAMPAIGN = """
[campaign]
seed = 3
order = "interleaved"

[aliases]
ml = "ML-DSA-44"
comp = "MLDSA44-ECDSA-P256-SHA256"
slh = "SLH-DSA-SHA2-128f"

[primitives]
measure = false   # the cost model's pricing of composites is test_composite.py's
[sampling]
mode = "fixed"
count = 12
warmup = 1

[matrix.composite]
kex = ["X25519"]
hierarchy = [["ml", "ml"], ["comp", "ml"], ["ml", "comp"]]
stack = ["rustls"]

[matrix.slh]
kex = ["X25519"]
hierarchy = [["ml", "ml"], ["slh", "ml"]]
"""


def test_composite_placements_run_and_are_reported_against_pure_ml_dsa(
    tmp_path, engine_bin, pki_cache
):
    toml = tmp_path / "composite.toml"
    toml.write_text(CAMPAIGN)
    store = tmp_path / "composite.duckdb"
    summary = run(load(toml), RunOptions(store=store, live_progress=False))
    assert len(summary.completed) == 5 and not summary.failed, summary.failures
    a = analyze(store)
    table = a.composite_placements
    got = {(r["stack"], r["placement"]): r for r in table.to_dict("records")}
    assert set(got) == {
        ("rustls", "MLDSA44-ECDSA-P256-SHA256 root"),
        ("rustls", "MLDSA44-ECDSA-P256-SHA256 leaf"),
        ("openssl-3.5", "SLH-DSA-SHA2-128f root"),
    }, got
    leaf = got[("rustls", "MLDSA44-ECDSA-P256-SHA256 leaf")]
    # The composite leaf's key and CertificateVerify carry an ECDSA component too.
    assert leaf["bytes_read_ratio"] > 1 and leaf["composite_positions"] == "leaf"
    assert leaf["mean_ms_ratio_lo"] <= leaf["mean_ms_ratio"] <= leaf["mean_ms_ratio_hi"]
    report = build_report(store, tmp_path / "report", analysis=a)
    md = (tmp_path / "report" / "report.md").read_text()
    assert "## Composite ML-DSA by position" in md, report
    assert "MLDSA44-ECDSA-P256-SHA256 leaf" in md
