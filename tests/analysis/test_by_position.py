"""Signature families by position: candidates differ from a uniform base at one position
only, in one context; ranks and the best per position follow the means."""

import math

import pandas as pd

from chainlab.analysis import by_position
from chainlab.analysis.families import family

ML = "ML-DSA-44"


def row(sid, chain, mean, network="loopback", half=0.01, server=None, client=0.3, read=10000):
    root, *mid, leaf = chain
    return {
        "scenario_id": sid,
        "status": "ok",
        "kex": "X25519MLKEM768",
        "network": network,
        "stack": "rustls",
        "signature_impl": "stack",
        "depth": len(chain),
        "root_alg": root,
        "int1_alg": mid[0] if mid else math.nan,
        "int2_alg": mid[1] if len(mid) > 1 else math.nan,
        "leaf_alg": leaf,
        **{
            f"{col}{suffix}": value + delta
            for col, value in (
                ("mean_ms", mean),
                ("server_cpu_ms", server if server is not None else mean / 2),
                ("client_cpu_ms", client),
                ("bytes_read", read),
            )
            for suffix, delta in (("", 0), ("_lo", -half), ("_hi", half))
        },
    }


def summary():
    return pd.DataFrame(
        [
            row("base", (ML, ML, ML), 0.60, read=11966),
            row("f_leaf", (ML, ML, "Falcon-512"), 0.76, read=9783),
            row("m_leaf", (ML, ML, "MAYO-2"), 0.50, read=13326),
            row("f_root", ("Falcon-512", ML, ML), 0.585, read=10195),
            row("u_int", (ML, "UOV-Ip-pkc", ML), 0.90, client=0.2, read=53000),
            # Two positions differ from the base: not a candidate anywhere.
            row("guide", ("ECDSA-P256", "ECDSA-P256", "Falcon-512"), 0.40),
            # Another network: its own context, a base alone ranks nothing.
            row("base_wan", (ML, ML, ML), 101.0, network="wan50"),
        ]
    )


def test_candidates_rank_and_the_best_is_the_least_latency():
    ranked = by_position.ranking(summary())
    assert set(ranked["network"]) == {"loopback"}
    assert "guide" not in set(ranked["scenario_id"])
    leaf = ranked[ranked["position"] == "leaf"].set_index("algorithm")
    assert list(leaf.index) == ["MAYO-2", ML, "Falcon-512"]  # by latency
    assert list(leaf["rank_latency"]) == [1, 2, 3]
    assert leaf.loc["Falcon-512", "rank_bytes_read"] == 1
    assert bool(leaf.loc["MAYO-2", "clear"])  # 0.51 < 0.59: apart from the runner-up
    root = ranked[ranked["position"] == "root"].set_index("algorithm")
    assert root.loc["Falcon-512", "best"] and not root.loc["Falcon-512", "clear"]  # overlaps
    inter = ranked[ranked["position"] == "int1"].set_index("algorithm")
    assert inter.loc["UOV-Ip-pkc", "rank_client_cpu_ms"] == 1
    assert inter.loc["UOV-Ip-pkc", "family"] == "uov"

    best = by_position.best(ranked).set_index("position")
    assert list(best.index) == ["root", "int1", "leaf"]
    assert best.loc["leaf", "best_mean_ms"] == "MAYO-2"
    assert best.loc["leaf", "best_bytes_read"] == "Falcon-512"
    assert best.loc["int1", "best_client_cpu_ms"] == "UOV-Ip-pkc"
    assert best.loc["leaf", "candidates"] == 3 and bool(best.loc["leaf", "clear"])


def test_nothing_to_rank_without_a_uniform_base():
    s = summary()
    s = s[~s["scenario_id"].isin(["base", "base_wan"])]
    assert by_position.ranking(s).empty
    assert by_position.best(pd.DataFrame()).empty


def test_families_of_liboqs_algorithms():
    assert family("Falcon-1024") == "falcon" and family("mayo-1") == "mayo"
    assert family("UOV-Ip-pkc") == "uov" and family("CROSS-RSDPG-128-small") == "cross"
    assert family("Ed448") == "ed-dsa" and family("LMS") == "other"


def test_resumed_handshakes_rank_nothing_and_each_lever_context_ranks_apart():
    """A resumed handshake carries no certificate: a leaf that only wins resumed is no
    answer. Compressed scenarios rank among themselves, labelled, never against plain ones."""
    rows = [
        {**row("base", (ML, ML), 0.60), "handshake_mode": "full", "cert_compression": "none"},
        {**row("m_leaf", (ML, "MAYO-2"), 0.70), "handshake_mode": "full",
         "cert_compression": "none"},
        # Resumed: fastest of all, and not a candidate.
        {**row("base_res", (ML, ML), 0.30), "handshake_mode": "resumed",
         "cert_compression": "none"},
        {**row("m_res", (ML, "MAYO-2"), 0.20), "handshake_mode": "resumed",
         "cert_compression": "none"},
        # Compressed: its own context, where MAYO-2 wins.
        {**row("base_z", (ML, ML), 0.65), "handshake_mode": "full", "cert_compression": "zlib"},
        {**row("m_z", (ML, "MAYO-2"), 0.55), "handshake_mode": "full",
         "cert_compression": "zlib"},
    ]  # fmt: skip
    ranked = by_position.ranking(pd.DataFrame(rows))
    assert not {"base_res", "m_res"} & set(ranked["scenario_id"])
    best = by_position.best(ranked)
    leaf = best[best["position"] == "leaf"].set_index("levers")
    assert leaf.loc["", "best_mean_ms"] == ML
    (zlib,) = [c for c in leaf.index if c]
    assert "zlib" in zlib and leaf.loc[zlib, "best_mean_ms"] == "MAYO-2"
