"""The per-stack cost model on a kept store (v13-stacks.duckdb, from
tests/data/stores/tiny-every-stack.toml): the ML-DSA-44 baseline on every stack, each side
priced with its own stack's primitives and overhead. Its error per side and stack stays
within a band, so pricing one library's primitives for every stack again (the rustls
server's CPU predicted +282 % that way) fails here."""

from pathlib import Path

import duckdb

from chainlab.analysis.analyze import analyze
from chainlab.analysis.cost_model import model_of, stored_scenarios
from chainlab.model import estimate

STORE = Path(__file__).parents[1] / "data" / "stores" / "v13-stacks.duckdb"
# The band: each side and stack's median |error| on this store was at most 12.4 % when it
# was made (one scenario per stack, 200 handshakes each, on a host whose speed moves by tens
# of per cent within a run); a wrong implementation's primitives miss by 2-4 times.
BAND = 0.30


def test_every_stack_is_priced_with_its_own_primitives_within_the_band():
    st = analyze(STORE).cost_model_stacks
    assert set(st["stack"]) == {"openssl-3.5", "openssl-4.0", "rustls", "boringssl", "go"}
    for r in st.to_dict("records"):
        assert abs(r["median_error"]) <= BAND, r
    # Each engine timed its own signatures and key exchange: nothing priced from OpenSSL.
    assert set(st["borrowed"]) == {""}


def test_the_store_records_whose_code_ran_each_primitive():
    con = duckdb.connect(str(STORE), read_only=True)
    try:
        rows = con.execute(
            "SELECT DISTINCT implementation, subject FROM primitive_samples "
            "WHERE op = 'sign' AND subject = 'ML-DSA-44'"
        ).fetchall()
        kex = con.execute(
            "SELECT DISTINCT implementation FROM primitive_samples "
            "WHERE op = 'encaps' AND subject = 'X25519MLKEM768'"
        ).fetchall()
        stacks = con.execute(
            "SELECT DISTINCT implementation FROM primitive_samples "
            "WHERE subject LIKE 'tls-reference:%'"
        ).fetchall()
    finally:
        con.close()
    assert {r[0] for r in rows} == {"openssl-3.5", "openssl-4.0", "aws-lc", "boringssl", "go"}
    assert {r[0] for r in stacks} == {"openssl-3.5", "openssl-4.0", "rustls", "boringssl", "go"}
    assert {r[0] for r in kex} == {"openssl-3.5", "openssl-4.0", "aws-lc", "boringssl", "go"}


def test_each_scenario_is_priced_as_its_stored_campaign_made_it():
    """An MTC is priced as an MTC (its proof, no chain to verify) and a trust-anchor retry as
    the two handshakes it is, because the analysis takes each scenario from the stored
    campaign file, not rebuilt from its columns (which had priced both as X.509)."""
    stores = Path(__file__).parents[1] / "data" / "stores"
    mtc = analyze(stores / "v7-mtc.duckdb").cost_model.set_index("scenario_id")
    x509, one = (
        mtc.loc["x25519mlkem768__ml_root__ml_leaf"],
        mtc.loc["x25519mlkem768__ml_root__ml_leaf__mtcl4096"],
    )
    assert one["client_predicted"] < 0.9 * x509["client_predicted"]
    anchors = analyze(stores / "v11-anchors.duckdb")
    got = anchors.cost_model.set_index("scenario_id")["server_predicted"]
    retry = got["x25519mlkem768__ml_root__ml_leaf__mtcl4096_nolm_retry__stack_boring__tai28"]
    assert retry > 1.5 * got["x25519mlkem768__ml_root__ml_leaf__mtcl4096__stack_boring__tai1"]
    # Exactly the runner's own prediction of the campaign's scenario.
    stored = stored_scenarios(anchors.data.runs)
    model = model_of(anchors.data.primitives)
    for sid, server in got.items():
        assert server == estimate.predict(stored[sid], model).server_ms
