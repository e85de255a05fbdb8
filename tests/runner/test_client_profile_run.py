"""A Chrome ClientHello through a whole run: each placement with `client_profile = "chrome"`
against its twin with the engine's own ClientHello, and with Chrome 152's 28 trust anchor
IDs; what the report's Client profiles and Trust anchor IDs sections read from the store."""

import pytest

from chainlab.analysis.analyze import analyze
from chainlab.campaign import load
from chainlab.report import build_report
from chainlab.runner.campaign import RunOptions, run

from .conftest import engine_processes

pytestmark = pytest.mark.slow

CAMPAIGN = """
[campaign]
seed = 5
order = "interleaved"

[aliases]
ml = "ML-DSA-44"

[primitives]
measure = false   # the cost model is test_primitives.py's
[sampling]
mode = "fixed"
count = 6
warmup = 1

[matrix.m]
kex = ["X25519MLKEM768"]
hierarchy = [["ml", "ml"]]
client_stack = ["boringssl"]
client_profile = ["none", "chrome"]
trust_anchors = ["sni", 28]
"""


def test_chrome_against_the_engines_own_client_hello(tmp_path, engine_bin, pki_cache):
    toml = tmp_path / "browser.toml"
    toml.write_text(CAMPAIGN)
    store = tmp_path / "browser.duckdb"
    summary = run(load(toml), RunOptions(store=store, live_progress=False))
    assert len(summary.completed) == 4 and not summary.failed
    assert engine_processes(str(pki_cache)) == []
    a = analyze(store)
    p = a.client_profiles
    assert len(p) == 2 and set(p["client_profile"]) == {"chrome"}
    # Chrome's ClientHello: an X25519 key share (32 bytes) and its group, TLS 1.2 suites,
    # ALPN, OCSP/SCT requests, brotli, GREASE and a GREASE ECH extension: hundreds of bytes.
    assert (p["written_more_bytes"] > 300).all(), p
    assert set(p["negotiated_sigalg"]) == {"mldsa44"}
    t = a.trust_anchors.set_index("scenario_id")
    own = "x25519mlkem768__ml_root__ml_leaf__stack_boring_ossl35__tai28"
    # The engine's own ClientHello with 28 filler IDs: 6 bytes of header and list length,
    # 6 bytes per ID, against the same client without the extension.
    assert t.loc[own, "growth_bytes"] == 6 + 28 * 6
    report = build_report(store, tmp_path / "report")
    md = (report / "report.md").read_text()
    assert "## Client profiles" in md and "What does a chrome user pay per placement" in md
