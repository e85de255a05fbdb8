"""The kept copy of the engine's algorithm table must equal the engine's."""

import re
from pathlib import Path

import pytest

from chainlab import engine
from chainlab.axes.algorithm_sizes import KEY_SIG_BYTES
from chainlab.axes.algorithms import (
    OPENSSL_ALGORITHMS,
    SIGNATURE_ALGORITHMS,
    canonical_group,
    token,
)
from chainlab.errors import ChainlabError
from chainlab.model.algorithm_costs import SIGN_VERIFY_MS

RUST_TABLE = Path(engine.REPO) / "engine/crates/chainlab-engine/src/algorithms.rs"
LIBOQS_TABLE = Path(engine.REPO) / "engine/crates/chainlab-oqs/src/algorithms.rs"
COMPOSITE_TABLE = Path(engine.REPO) / "engine/crates/chainlab-composite/src/algorithms.rs"


def test_copy_matches_the_engine_source():
    src = RUST_TABLE.read_text()
    rows = re.findall(r'alg\(\s*"([^"]+)",\s*Family::(\w+),\s*"([^"]+)"', src)
    families = {
        "MlDsa": "ml-dsa",
        "SlhDsa": "slh-dsa",
        "Ecdsa": "ecdsa",
        "EdDsa": "ed-dsa",
        "Rsa": "rsa",
        "Falcon": "falcon",
        "Mayo": "mayo",
        "Uov": "uov",
        "Cross": "cross",
        "Composite": "composite",
    }
    oqs = re.findall(
        r'alg\(\s*"([^"]+)",\s*Family::(\w+),\s*"[^"]+",\s*0x[0-9a-f]+,\s*"([^"]+)"',
        LIBOQS_TABLE.read_text(),
    )
    rows += [row for row in oqs if row[1] != "MlDsa"]
    composite = COMPOSITE_TABLE.read_text()
    names = re.findall(r'name: "([^"]+)",\s*oid:', composite)
    tls = re.findall(r'tls_name: "([^"]+)"', composite)
    rows += [(n, "Composite", t) for n, t in zip(names, tls, strict=True)]
    assert rows, "algorithm table not found in algorithms.rs"
    assert [(n, families[f], s) for n, f, s in rows] == list(SIGNATURE_ALGORITHMS)


def test_copy_matches_the_built_engine():
    try:
        info = engine.info()
    except ChainlabError as e:
        pytest.skip(f"engine not built: {e}")
    got = [(a["name"], a["family"], a["tls_sigalg"]) for a in info["algorithms"]]
    assert got == list(SIGNATURE_ALGORITHMS)
    openssl = tuple(a["name"] for a in info["algorithms"] if a["provider"] == "openssl")
    assert openssl == OPENSSL_ALGORITHMS


def test_cost_table_covers_every_algorithm():
    assert set(SIGN_VERIFY_MS) == {a[0] for a in SIGNATURE_ALGORITHMS}
    assert set(KEY_SIG_BYTES) == {a[0] for a in SIGNATURE_ALGORITHMS}


def test_names_and_tokens():
    assert canonical_group("x25519mlkem768") == "X25519MLKEM768"
    assert canonical_group("X25519MLKEM786") is None
    assert token("ML-DSA-65") == "mldsa65" and token("P-256") == "p256"


def test_composite_components_are_the_engine_tables():
    """Each composite's components and pre-hash, as chainlab-composite's table has them."""
    from chainlab.axes.algorithms import COMPOSITE_COMPONENTS

    src = COMPOSITE_TABLE.read_text()
    rows = re.findall(
        r'(?<!_)name: "([^"]+)",.*?prehash: PreHash::(\w+),\s*mldsa: MlDsa::Ml(\d+),\s*'
        r"traditional: Traditional::(\w+),",
        src,
        re.S,
    )
    trad = {"EcdsaP256Sha256": "ECDSA-P256", "EcdsaP384Sha384": "ECDSA-P384", "Ed25519": "Ed25519"}
    got = {n: (f"ML-DSA-{m}", trad[t], ph.upper()) for n, ph, m, t in rows}
    assert got == COMPOSITE_COMPONENTS
