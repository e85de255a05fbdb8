"""An interop matrix through a whole run: every client stack against every server stack on
a chain every stack verifies and on one only the OpenSSL clients verify (an SLH-DSA root),
and with Merkle Tree Certificates (BoringSSL's clients verifying standalone ones with
BoringSSL's own verifier); each cell's outcome by category, as the capability tables
predict, nothing retried."""

import pytest

import chainlab
from chainlab.analysis.analyze import analyze
from chainlab.campaign import load
from chainlab.runner.campaign import RunOptions, run

from .conftest import engine_processes

pytestmark = pytest.mark.slow

STACKS = ("openssl-3.5", "rustls", "boringssl")
COUNT, WARMUP = 3, 1
CAMPAIGN = f"""
[campaign]
seed = 3
order = "interleaved"
interop = true

[aliases]
ml = "ML-DSA-44"
slhf = "SLH-DSA-SHAKE-128f"

[primitives]
measure = false   # the cost model is test_primitives.py's
[sampling]
mode = "fixed"
count = {COUNT}
warmup = {WARMUP}

[matrix.m]
kex = ["X25519MLKEM768"]
hierarchy = [["ml", "ml"], ["slhf", "ml", "ml"]]
client_stack = {list(STACKS)}
server_stack = {list(STACKS)}

[matrix.mtc]
kex = ["X25519MLKEM768"]
hierarchy = [["ml", "ml"]]
client_stack = {list(STACKS)}
server_stack = {list(STACKS)}
certificate = [
  {{ kind = "mtc-standalone", batch = 64 }},
  {{ kind = "mtc-landmark", batch = 64 }},
]
exclude = [{{ client_stack = "boringssl", certificate = "mtc-landmark" }}]
"""


def test_every_pair_fails_or_completes_as_the_tables_predict(tmp_path, engine_bin, pki_cache):
    toml = tmp_path / "interop.toml"
    toml.write_text(CAMPAIGN.replace("'", '"'))
    c = load(toml)
    # validate ran the cells a comparison would refuse, and said so.
    assert sum("an interop cell" in n for n in c.notes) == 6
    store = tmp_path / "interop.duckdb"
    summary = run(c, RunOptions(store=store, live_progress=False))
    assert len(summary.completed) + len(summary.failed) == 18 + 9 + 6
    assert engine_processes(str(pki_cache)) == []

    cells = analyze(store).interop.set_index(["context", "client_stack", "server_stack"])
    assert len(cells) == 33 and cells["as_predicted"].all(), cells
    for (context, client, _server), r in cells.iterrows():
        refused = context.startswith("SLH-DSA") and client != "openssl-3.5"
        assert r["outcome"] == ("verify_failed" if refused else "ok"), r
    mtc = [k for k in cells.index if "mtc-" in k[0]]
    assert len(mtc) == 15 and sum(k[1] == "boringssl" for k in mtc) == 3, mtc
    # What each client checked: BoringSSL's verifier the CA's signature of a standalone MTC.
    with chainlab.open(store) as st:
        measured = st.samples[~st.samples["warmup"]]
    sid = measured["scenario_id"]
    boring = measured[sid.str.contains("mtcs64") & sid.str.contains("__stack_boring")]
    assert len(boring) == 3 * COUNT and (boring["mtc_kind"] == "standalone").all()
    assert (boring["mtc_signatures_checked"] == 1).all()
    # Nothing retried: each scenario made its warm-up and at most its count of attempts,
    # one connection each.
    with chainlab.open(store) as st:
        samples = st.samples
    per = samples.groupby("scenario_id").size()
    assert (per <= COUNT + WARMUP).all(), per
    assert samples.groupby("scenario_id")["seq"].nunique().equals(per)


GO_CAMPAIGN = f"""
[campaign]
seed = 4
order = "interleaved"
interop = true

[aliases]
ml = "ML-DSA-65"
ec = "ECDSA-P256"
slhf = "SLH-DSA-SHAKE-128f"

[primitives]
measure = false   # the cost model is test_primitives.py's
[sampling]
mode = "fixed"
count = {COUNT}
warmup = {WARMUP}

[matrix.m]
kex = ["X25519MLKEM768"]
hierarchy = [["ml", "ec"], ["slhf", "ml", "ml"]]
client_stack = ["openssl-3.5", "go"]
server_stack = ["openssl-3.5", "go"]
"""


def test_go_meets_openssl_both_ways_and_refuses_slh_dsa_by_category(
    tmp_path, engine_bin, pki_cache
):
    """The Go stack in a whole run: its client and server against OpenSSL's both ways; an
    SLH-DSA root its crypto/x509 cannot check fails as `verify_failed` on its client."""
    toml = tmp_path / "interop-go.toml"
    toml.write_text(GO_CAMPAIGN)
    c = load(toml)
    assert sum("an interop cell" in n for n in c.notes) == 2
    store = tmp_path / "interop-go.duckdb"
    run(c, RunOptions(store=store, live_progress=False))
    assert engine_processes(str(pki_cache)) == []
    cells = analyze(store).interop.set_index(["context", "client_stack", "server_stack"])
    assert len(cells) == 8 and cells["as_predicted"].all(), cells
    for (context, client, _server), r in cells.iterrows():
        refused = context.startswith("SLH-DSA") and client == "go"
        assert r["outcome"] == ("verify_failed" if refused else "ok"), r
    with chainlab.open(store) as st:
        measured = st.samples[~st.samples["warmup"] & (st.samples["outcome"] == "ok")]
    go_server = measured[measured["scenario_id"].str.endswith("_go")]
    assert len(go_server) and go_server["server_cpu_ns"].notna().all()
