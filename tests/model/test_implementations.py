"""Whose code runs each operation on each stack, and which engine times it
(chainlab.model.implementations)."""

from chainlab.axes.stack import STACKS
from chainlab.model import implementations as impl


def test_every_stack_has_its_own_library():
    assert set(impl.OWN) == set(STACKS)
    assert impl.OWN["rustls"] == "aws-lc"
    assert impl.of("rustls", None, "ML-DSA-65", "sign") == "aws-lc"
    assert impl.of("rustls", None, "X25519MLKEM768", "encaps") == "aws-lc"
    # liboqs' families are liboqs' on any stack; ML-DSA is liboqs' only when asked.
    assert impl.of("openssl-3.5", None, "Falcon-512", "sign") == impl.LIBOQS
    assert impl.of("rustls", impl.LIBOQS, "ML-DSA-44", "verify") == impl.LIBOQS
    assert impl.of("rustls", impl.LIBOQS, "X25519", "keygen") == "aws-lc"


def test_each_engine_times_its_own_and_nothing_else():
    assert impl.timer("aws-lc", "ECDSA-P256", "sign", "cv") == impl.Timer("rustls")
    assert impl.timer("boringssl", "ML-DSA-87", "verify", "cv") == impl.Timer("boringssl")
    assert impl.timer("go", "Ed25519", "sign", "cv") == impl.Timer("go")
    # Signatures over the CertificateVerify content only; no key exchange.
    assert impl.timer("go", "ML-DSA-65", "verify", "cert") is None
    assert impl.timer("boringssl", "X25519MLKEM768", "encaps", None) == impl.Timer("boringssl")
    assert impl.timer("aws-lc", "X25519MLKEM768", "encaps", None) == impl.Timer("rustls")
    assert impl.timer("aws-lc", "zlib", "decompress", None) is None
    assert impl.timer("openssl-4.0", "X25519MLKEM768", "encaps", None) == impl.Timer("openssl-4.0")
    assert impl.timer(impl.LIBOQS, "ML-DSA-44", "sign", "cv") == impl.Timer(
        "rustls", ("--signature-impl", "liboqs")
    )
    assert impl.timer(impl.LIBOQS, "MAYO-1", "verify", "cert") == impl.Timer(impl.REFERENCE)
    # liboqs has no classical algorithm: nothing times one as liboqs'.
    assert impl.timer(impl.LIBOQS, "ECDSA-P256", "sign", "cv") is None


def test_the_runner_measures_the_first_candidate_an_engine_times():
    # A certificate's ML-DSA signature on BoringSSL: its own CertificateVerify figure.
    key, timer = impl.measured_key("boringssl", None, "ML-DSA-65", "verify", "cert")
    assert key == ("boringssl", "ML-DSA-65", "verify", "cv") and timer.engine == "boringssl"
    # BoringSSL's decompression: nobody times BoringSSL's, so OpenSSL 3.5's (borrowed).
    key, timer = impl.measured_key("boringssl", None, "brotli", "decompress", None)
    assert key == (impl.REFERENCE, "brotli", "decompress", None)
    assert impl.is_borrowed(key, "boringssl", None)
    key, timer = impl.measured_key("go", None, "X25519MLKEM768", "decaps", None)
    assert key == ("go", "X25519MLKEM768", "decaps", None) and timer.engine == "go"
    assert not impl.is_borrowed(("aws-lc", "ECDSA-P256", "sign", "cv"), "rustls", None)
    # OpenSSL 4.0 times everything of its own.
    key, _ = impl.measured_key("openssl-4.0", None, "SLH-DSA-SHA2-128f", "verify", "cert")
    assert key == ("openssl-4.0", "SLH-DSA-SHA2-128f", "verify", "cert")


def test_a_row_without_an_implementation_is_what_the_openssl_35_engine_ran():
    assert impl.unrecorded("ML-DSA-44", "sign") == impl.REFERENCE
    assert impl.unrecorded("X25519MLKEM768", "encaps") == impl.REFERENCE
    assert impl.unrecorded("Falcon-512", "sign") == impl.LIBOQS  # through liboqs
