"""chainlab's composite ML-DSA certificates checked by code chainlab did not write: Bouncy
Castle (Java, tests/java/CompositeCheck.java) verifies every certificate of hierarchies with
each composite algorithm at every position under its issuer's key, reads each leaf's private
key file and signs with it, and refuses a certificate whose composite signature was altered
in either component. (The draft's own test vectors are engine/crates/chainlab-engine/tests/
composite.rs's.)"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from chainlab.runner import pki

REPO = Path(__file__).resolve().parents[1]
COMPOSITES = (
    "MLDSA44-ECDSA-P256-SHA256",
    "MLDSA65-ECDSA-P256-SHA512",
    "MLDSA65-Ed25519-SHA512",
    "MLDSA87-ECDSA-P384-SHA512",
)


@pytest.fixture(scope="module")
def checker(tmp_path_factory):
    """(java command, classpath) with CompositeCheck compiled against Bouncy Castle."""
    for tool in ("java", "javac"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is missing: this machine kind has a JDK (docs/testing.md)")
    jar = subprocess.run(
        [str(REPO / "scripts" / "fetch-bouncy-castle.sh")],
        capture_output=True, text=True, check=True, timeout=600,
    ).stdout.strip()  # fmt: skip
    out = tmp_path_factory.mktemp("java")
    subprocess.run(
        ["javac", "-cp", jar, "-d", str(out), str(REPO / "tests" / "java" / "CompositeCheck.java")],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    return f"{jar}:{out}"


def check(classpath: str, chain: Path, key: Path | None = None) -> subprocess.CompletedProcess:
    argv = ["java", "-cp", classpath, "CompositeCheck", str(chain)]
    return subprocess.run(
        argv + ([str(key)] if key else []), capture_output=True, text=True, timeout=120
    )


# Each composite at the root, at an intermediate and at the leaf, and a hierarchy of
# composites alone, mixed with pure ML-DSA and ECDSA.
HIERARCHIES = [
    *[(c, "ML-DSA-65", "ML-DSA-65") for c in COMPOSITES[:2]],
    *[("ML-DSA-65", c, "ECDSA-P256") for c in COMPOSITES[1:3]],
    *[("ML-DSA-44", "ML-DSA-44", c) for c in COMPOSITES],
    COMPOSITES,
]


@pytest.mark.parametrize("hierarchy", HIERARCHIES, ids=["-".join(h) for h in HIERARCHIES])
def test_bouncy_castle_verifies_every_certificate_and_reads_the_key(
    checker, engine_bin, pki_cache, hierarchy
):
    h = pki.ensure(engine_bin, hierarchy, 7)
    out = check(checker, h / "chain-full.pem", h / "leaf.key")
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    oks = [ln for ln in lines if ln.startswith("ok ")]
    assert len(oks) == len(hierarchy)
    # Leaf first: position i is signed by hierarchy[-(i + 2)] (the root by itself).
    for i, line in enumerate(oks):
        signer = hierarchy[max(len(hierarchy) - i - 2, 0)]
        if signer in COMPOSITES:
            assert f" {signer} 1.3.6.1.5.5.7.6." in line, line
    if hierarchy[-1] in COMPOSITES:
        assert f"key {hierarchy[-1]} matches" in lines


@pytest.mark.parametrize("component", ["ml-dsa", "traditional"])
def test_bouncy_castle_refuses_a_signature_altered_in_either_component(
    checker, engine_bin, pki_cache, tmp_path, component
):
    import base64

    h = pki.ensure(engine_bin, ("MLDSA65-ECDSA-P256-SHA512", "MLDSA65-ECDSA-P256-SHA512"), 7)
    der = bytearray(pki.pem_certs(h / "leaf.pem")[0])
    # The certificate ends with its signature: 3309 bytes of ML-DSA-65, then the DER ECDSA
    # signature (70-72 bytes).
    at = len(der) - 200 if component == "ml-dsa" else len(der) - 10
    der[at] ^= 1
    body = base64.encodebytes(bytes(der)).decode()
    bad = tmp_path / "bad.pem"
    bad.write_text(
        f"-----BEGIN CERTIFICATE-----\n{body}-----END CERTIFICATE-----\n"
        + (h / "ca.pem").read_text()
    )
    out = check(checker, bad)
    assert out.returncode == 1, out.stdout
    assert out.stdout.splitlines()[-1].startswith("FAILED 0 MLDSA65-ECDSA-P256-SHA512")
