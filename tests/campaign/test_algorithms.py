"""The kept copy of the engine's algorithm table must equal the engine's."""

import re
from pathlib import Path

import pytest

from chainlab import engine
from chainlab.campaign.algorithms import SIGNATURE_ALGORITHMS, canonical_group, token
from chainlab.campaign.estimate import SIGN_VERIFY_MS
from chainlab.errors import ChainlabError

RUST_TABLE = Path(engine.REPO) / "engine/crates/chainlab-engine/src/algorithms.rs"


def test_copy_matches_the_engine_source():
    src = RUST_TABLE.read_text()
    rows = re.findall(r'alg\(\s*"([^"]+)",\s*Family::(\w+),\s*"([^"]+)"', src)
    families = {
        "MlDsa": "ml-dsa",
        "SlhDsa": "slh-dsa",
        "Ecdsa": "ecdsa",
        "EdDsa": "ed-dsa",
        "Rsa": "rsa",
    }
    assert rows, "algorithm table not found in algorithms.rs"
    assert [(n, families[f], s) for n, f, s in rows] == list(SIGNATURE_ALGORITHMS)


def test_copy_matches_the_built_engine():
    try:
        info = engine.info()
    except ChainlabError as e:
        pytest.skip(f"engine not built: {e}")
    got = [(a["name"], a["family"], a["tls_sigalg"]) for a in info["algorithms"]]
    assert got == list(SIGNATURE_ALGORITHMS)


def test_cost_table_covers_every_algorithm():
    assert set(SIGN_VERIFY_MS) == {a[0] for a in SIGNATURE_ALGORITHMS}


def test_names_and_tokens():
    assert canonical_group("x25519mlkem768") == "X25519MLKEM768"
    assert canonical_group("X25519MLKEM786") is None
    assert token("ML-DSA-65") == "mldsa65" and token("P-256") == "p256"
