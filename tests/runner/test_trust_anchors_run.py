"""The trust_anchors extension on OpenSSL through a whole run: an OpenSSL server choosing its
Merkle Tree Certificate by the IDs an OpenSSL or a BoringSSL client requests, and a client
without the landmark retrying for the ID the server's available list names; what the
report's Trust anchor IDs section reads from the store."""

import json

import pytest

from chainlab.analysis.analyze import analyze
from chainlab.axes import credential as certificates
from chainlab.campaign import load
from chainlab.report import build_report
from chainlab.runner.campaign import RunOptions, run

from .conftest import engine_processes

pytestmark = pytest.mark.slow

CAMPAIGN = """
[campaign]
seed = 7
order = "interleaved"

[aliases]
ml44 = "ML-DSA-44"
ml65 = "ML-DSA-65"

[primitives]
measure = false   # the cost model is test_primitives.py's
[sampling]
mode = "fixed"
count = 4
warmup = 1

[matrix.m]
kex = ["X25519MLKEM768"]
hierarchy = [["ml44", "ml65"]]
client_stack = ["openssl-3.5", "boringssl"]
server_stack = ["openssl-3.5"]
certificate = [
    { kind = "mtc-landmark", batch = 64 },
    { kind = "mtc-landmark", batch = 64, landmark_held = false, retry = true },
]
trust_anchors = [1]
"""


def test_an_openssl_server_answers_both_clients_by_id(tmp_path, engine_bin, pki_cache):
    toml = tmp_path / "anchors.toml"
    toml.write_text(CAMPAIGN)
    store = tmp_path / "anchors.duckdb"
    summary = run(load(toml), RunOptions(store=store, live_progress=False))
    assert len(summary.completed) == 4 and not summary.failed
    assert engine_processes(str(pki_cache)) == []
    # The IDs the campaign requests are the ones `pki` wrote.
    trusts = [json.loads(p.read_text()) for p in pki_cache.glob("**/mtc/trust.json")]
    assert trusts and all(t["ca_id"] == certificates.CA_ID for t in trusts), trusts
    # A single landmark's file names landmark 2 (another test's renewals may share the cache).
    for t in trusts:
        newest = max(s.get("landmark", 2) for s in t["trusted_subtrees"])
        assert t["landmark_id"] == certificates.LANDMARK_ID[:-1] + str(newest), t
    a = analyze(store)
    t = a.trust_anchors.set_index("scenario_id")
    assert len(t) == 4, t
    # Every attempt got the certificate its request asked for, and the server said so.
    assert (t["matched_share"] == 1.0).all(), t
    # The server's available list: its landmark's ID and its CA's.
    assert (t["available"] == 2.0).all(), t
    retry = t.index.str.contains("retry")
    assert (t.loc[retry, "retried_share"] == 1.0).all(), t
    assert (t.loc[~retry, "retried_share"] == 0.0).all(), t
    report = build_report(store, tmp_path / "report")
    md = (report / "report.md").read_text()
    assert "## Trust anchor IDs" in md
