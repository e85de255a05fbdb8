"""Algorithm families, placement classes and labels."""

import pandas as pd
import pytest

from chainlab.analysis import families as fam


@pytest.mark.parametrize(
    ("alg", "family"),
    [
        ("ML-DSA-65", "ml-dsa"),
        ("ml-dsa-44", "ml-dsa"),
        ("SLH-DSA-SHA2-128s", "slh-dsa"),
        ("ECDSA-P256", "ecdsa"),
        ("Ed25519", "ed-dsa"),
        ("RSA-2048", "rsa"),
        ("Falcon", "other"),
        (None, None),
    ],
)
def test_family(alg, family):
    assert fam.family(alg) == family


def row(depth=3, root="ML-DSA-65", int1="ML-DSA-65", int2=None, leaf="ML-DSA-65"):
    return {"depth": depth, "root_alg": root, "int1_alg": int1, "int2_alg": int2, "leaf_alg": leaf}


@pytest.mark.parametrize(
    ("r", "cls", "groups"),
    [
        (row(), "none", ["none"]),
        (row(root="SLH-DSA-SHAKE-192s"), "root", ["root_leaf_not_heavy"]),
        (row(int1="SLH-DSA-SHAKE-192s"), "intermediate", ["intermediate_any"]),
        (
            row(int1="SLH-DSA-SHAKE-192s", leaf="SLH-DSA-SHAKE-192s"),
            "leaf",
            ["intermediate_any", "leaf"],
        ),
        (row(depth=1, root=None, int1=None, leaf="SLH-DSA-SHAKE-128f"), "leaf", ["leaf"]),
        (row(depth=4, int2="SLH-DSA-SHAKE-128f"), "intermediate", ["intermediate_any"]),
        (row(depth=2, int1="SLH-DSA-SHAKE-192s"), "none", ["none"]),  # no int at depth 2
    ],
)
def test_placement_class_and_table7_groups(r, cls, groups):
    assert fam.placement_class(r, "slh-dsa") == cls
    assert fam.table7_groups(r, "slh-dsa") == groups


def test_heavy_family_is_configurable():
    assert fam.placement_class(row(), "ml-dsa") == "leaf"


def test_labels_show_only_what_varies_and_stay_unique():
    scen = pd.DataFrame(
        [
            {
                "scenario_id": "a",
                "kex": "X25519",
                "served_chain": "full",
                "handshake_mode": "full",
                "cert_compression": "none",
                "network": "loopback",
                **row(depth=2, int1=None),
            },
            {
                "scenario_id": "b",
                "kex": "X25519",
                "served_chain": "leaf",
                "handshake_mode": "full",
                "cert_compression": "none",
                "network": "loopback",
                **row(depth=2, int1=None),
            },
        ]
    )
    labels = fam.scenario_labels(scen)
    assert labels["a"] == ("ML65 › ML65", "X25519 · sends full")
    assert labels["b"] == ("ML65 › ML65", "X25519 · sends leaf")
    scen.loc[1, "served_chain"] = "full"
    labels = fam.scenario_labels(scen)
    assert labels["a"] != labels["b"] and labels["b"][1].endswith("#2")


def test_short_algorithm_names():
    assert fam.short_algorithm("SLH-DSA-SHAKE-192s", False) == "SLH192s"
    assert fam.short_algorithm("SLH-DSA-SHA2-128f", True) == "SLH-SHA2-128f"
    assert fam.short_algorithm("ECDSA-P384", False) == "P384"
    assert fam.hierarchy_label(row(depth=1, root=None, int1=None)) == "ML leaf (self-signed)"
