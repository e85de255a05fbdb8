"""The Trust anchor IDs analysis by hand-made rows: a scenario is set against the one of its
setting that requests the fewest IDs, and the number of IDs it is labelled with is its
ClientHello's, not the retry's (whose records say the retry's own request)."""

import math

import pandas as pd

from chainlab.analysis.anchors import table


def row(sid: str, ids: str, written: float, median: float) -> dict:
    cpu = {f"{s}_cpu_ms{e}": 0.5 for s in ("client", "server") for e in ("", "_lo", "_hi")}
    return {
        "scenario_id": sid, "failed": False, "kex": "X25519MLKEM768", "root_alg": "ML-DSA-44",
        "leaf_alg": "ML-DSA-65", "certificate": "mtc-landmark", "mtc_landmark_held": "no, retry",
        "client_stack": "boringssl", "server_stack": "boringssl", "network": "loopback",
        "trust_anchors": ids, "bytes_written": written, "bytes_read": 17621.0,
        "mean_ms": median, "median_ms": median, **cpu,
    }  # fmt: skip


def test_a_retried_request_is_labelled_with_its_first_client_hellos_ids():
    summary = pd.DataFrame([row("a_tai0", "0", 2869.0, 1.4), row("a_tai28", "28", 3037.0, 1.4)])
    # Both retried: their records' count is the retry's request, the CA's ID alone.
    per = pd.DataFrame(
        [
            {"scenario_id": sid, "trust_anchors_requested": 1.0, "matched_share": 1.0,
             "trust_anchors_available": 2.0, "retried_share": 1.0}
            for sid in ("a_tai0", "a_tai28")
        ]
    )  # fmt: skip
    t = table(summary, per).set_index("scenario_id")
    assert t.loc["a_tai28", "ids"] == 28 and t.loc["a_tai28", "requested"] == 1
    assert t.loc["a_tai28", "growth_bytes"] == 168 and t.loc["a_tai28", "base_id"] == "a_tai0"
    # The lightest request of its setting has nothing to be set against.
    assert pd.isna(t.loc["a_tai0", "base_id"]) and math.isnan(t.loc["a_tai0", "growth_bytes"])
