"""The staged-rollout analysis: figures split by kind, and the guide's rollback rule read on
p99 intervals (docs/methods/rollout.md#staged-rollout)."""

import math

import numpy as np
import pandas as pd
import pytest

from chainlab.analysis import rollout


def shares_frame(rows):
    """per_share-shaped rows: (group, share, p99, lo, hi) one at a time."""
    out = []
    for group, share, p99, lo, hi in rows:
        r = {"scenario_id": f"{group}{share}", "group": group, "group_key": group,
             "network": "loopback", "pq_share": share}  # fmt: skip
        for load in rollout.loads():
            v = (p99, lo, hi) if load == rollout.SINGLE else (math.nan,) * 3
            r[f"p99_ms_{load}"], r[f"p99_ms_{load}_lo"], r[f"p99_ms_{load}_hi"] = v
        out.append(r)
    return pd.DataFrame(out)


def test_the_guide_threshold_is_read_from_its_claims():
    factor, quote, line = rollout.rollback_factor()
    assert factor == 2.0 and "2× baseline" in quote and line == 158


def test_the_rule_rolls_back_only_when_the_interval_lies_above_the_factor():
    shares = shares_frame(
        [
            ("g", 0.0, 1.0, 0.9, 1.1),
            ("g", 0.1, 1.5, 1.4, 1.6),  # 1.27 .. 1.78: holds
            ("g", 0.5, 2.1, 1.9, 2.3),  # 1.73 .. 2.56: undecided
            ("g", 0.9, 3.0, 2.5, 3.5),  # 2.27 .. 3.89: rolls back
            ("g", 1.0, 4.0, 3.5, math.nan),  # no upper end, lower end above: rolls back
        ]
    )
    rule = rollout.rollback(shares)
    # The baseline itself is no row.
    assert list(rule["verdict"]) == ["holds", "undecided", "rolls back", "rolls back"]
    assert rule["ratio"].iloc[2] == pytest.approx(3.0)
    assert rule["ratio_lo"].iloc[2] == pytest.approx(2.5 / 1.1)
    first = rollout.first_crossing(rule)
    assert first["rolls_back_at"].iloc[0] == 0.9
    assert first["may_roll_back_at"].iloc[0] == 0.5


def test_a_group_without_an_all_classical_scenario_has_no_verdict():
    assert rollout.rollback(shares_frame([("g", 0.5, 2.0, 1.9, 2.1)])).empty


def test_figures_are_split_by_kind_and_given_for_all():
    rng = np.random.default_rng(1)
    rows = []
    for kind, ms, n in (("classical", 1.0, 300), ("pq", 2.0, 100)):
        for v in rng.normal(ms, 0.05, n):
            rows.append({"scenario_id": "s", "client_kind": kind, "chain_index": int(kind == "pq"),
                         "outcome": "ok", "error_category": None, "server_error_category": None,
                         "total_ns": v * 1e6, "server_cpu_ns": 1e5, "client_cpu_ns": 2e5,
                         "bytes_read": 1000 + 4000 * (kind == "pq"),
                         "bytes_written": 700})  # fmt: skip
    rows.append({"scenario_id": "s", "client_kind": "stranger", "chain_index": None,
                 "outcome": "failed", "error_category": "tls_alert",
                 "server_error_category": "no_shared_sigalg", "total_ns": None,
                 "server_cpu_ns": None, "client_cpu_ns": None, "bytes_read": 7,
                 "bytes_written": 300})  # fmt: skip
    kinds = rollout.by_kind(pd.DataFrame(rows), 0.95).set_index("kind")
    assert list(kinds.index) == ["classical", "pq", "stranger", "all"]
    assert kinds.at["pq", "latency_ms"] == pytest.approx(2.0, abs=0.02)
    assert kinds.at["all", "latency_ms"] == pytest.approx(1.25, abs=0.02)
    assert kinds.at["all", "n"] == 401 and kinds.at["all", "n_failed"] == 1
    assert kinds.at["stranger", "failures"] == "no_shared_sigalg 1"
    assert kinds.at["all", "chain_sent"] == "0, 1"
    # The mix's p99 is the slow kind's: a quarter of the handshakes are PQ.
    assert kinds.at["all", "p99_ms"] > 1.9
