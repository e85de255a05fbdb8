"""Names a campaign file may use: signature algorithms and key-exchange groups.

The signature algorithms are the engine's table (`chainlab-engine info`, from
`engine/crates/chainlab-engine/src/algorithms.rs` for OpenSSL's and
`engine/crates/chainlab-oqs/src/algorithms.rs` for those only liboqs has). Validation must
work without a built engine (a fresh checkout, CI before the engine step), so a copy is kept
here;
`tests/campaign/test_algorithms.py` fails when the copy and the engine's table differ.
"""

from __future__ import annotations

import re

# (canonical name, family, TLS 1.3 signature scheme) - same order as the engine's table.
SIGNATURE_ALGORITHMS: tuple[tuple[str, str, str], ...] = (
    ("ML-DSA-44", "ml-dsa", "mldsa44"),
    ("ML-DSA-65", "ml-dsa", "mldsa65"),
    ("ML-DSA-87", "ml-dsa", "mldsa87"),
    ("SLH-DSA-SHA2-128s", "slh-dsa", "slhdsa_sha2_128s"),
    ("SLH-DSA-SHA2-128f", "slh-dsa", "slhdsa_sha2_128f"),
    ("SLH-DSA-SHA2-192s", "slh-dsa", "slhdsa_sha2_192s"),
    ("SLH-DSA-SHA2-192f", "slh-dsa", "slhdsa_sha2_192f"),
    ("SLH-DSA-SHA2-256s", "slh-dsa", "slhdsa_sha2_256s"),
    ("SLH-DSA-SHA2-256f", "slh-dsa", "slhdsa_sha2_256f"),
    ("SLH-DSA-SHAKE-128s", "slh-dsa", "slhdsa_shake_128s"),
    ("SLH-DSA-SHAKE-128f", "slh-dsa", "slhdsa_shake_128f"),
    ("SLH-DSA-SHAKE-192s", "slh-dsa", "slhdsa_shake_192s"),
    ("SLH-DSA-SHAKE-192f", "slh-dsa", "slhdsa_shake_192f"),
    ("SLH-DSA-SHAKE-256s", "slh-dsa", "slhdsa_shake_256s"),
    ("SLH-DSA-SHAKE-256f", "slh-dsa", "slhdsa_shake_256f"),
    ("ECDSA-P256", "ecdsa", "ecdsa_secp256r1_sha256"),
    ("ECDSA-P384", "ecdsa", "ecdsa_secp384r1_sha384"),
    ("Ed25519", "ed-dsa", "ed25519"),
    ("RSA-2048", "rsa", "rsa_pss_rsae_sha256"),
    ("RSA-3072", "rsa", "rsa_pss_rsae_sha256"),
    # liboqs' (the OQS provider's TLS names): `pki` issues them, the rustls stack uses them.
    ("Falcon-512", "falcon", "falcon512"),
    ("Falcon-1024", "falcon", "falcon1024"),
    ("MAYO-1", "mayo", "mayo1"),
    ("MAYO-2", "mayo", "mayo2"),
    ("UOV-Is", "uov", "OV_Is"),
    ("UOV-Ip", "uov", "OV_Ip"),
    ("UOV-Ip-pkc", "uov", "OV_Ip_pkc"),
    ("CROSS-RSDPG-128-fast", "cross", "CROSSrsdpg128fast"),
    ("CROSS-RSDPG-128-small", "cross", "CROSSrsdpg128small"),
    # Composite ML-DSA (chainlab-composite's table, draft-ietf-lamps-pq-composite-sigs):
    # `pki` issues them with OpenSSL's components, the rustls stack signs and verifies them.
    ("MLDSA44-ECDSA-P256-SHA256", "composite", "mldsa44_ecdsa_secp256r1_sha256"),
    ("MLDSA65-ECDSA-P256-SHA512", "composite", "mldsa65_ecdsa_secp256r1_sha512"),
    ("MLDSA65-Ed25519-SHA512", "composite", "mldsa65_ed25519_sha512"),
    ("MLDSA87-ECDSA-P384-SHA512", "composite", "mldsa87_ecdsa_secp384r1_sha512"),
)

# Signature algorithm families, the engine's names (kebab-case), in display order.
FAMILIES = (
    "ml-dsa", "slh-dsa", "ecdsa", "ed-dsa", "rsa", "falcon", "mayo", "uov", "cross", "composite",
)  # fmt: skip
# The families only liboqs implements (the engine's `provider` "liboqs"): no OpenSSL stack
# signs or verifies them in TLS.
LIBOQS_FAMILIES = ("falcon", "mayo", "uov", "cross")

# Each composite algorithm's components and pre-hash (chainlab-composite's table): what the
# cost model prices one of its operations as (the sum of its parts plus the pre-hash).
COMPOSITE_COMPONENTS: dict[str, tuple[str, str, str]] = {
    "MLDSA44-ECDSA-P256-SHA256": ("ML-DSA-44", "ECDSA-P256", "SHA256"),
    "MLDSA65-ECDSA-P256-SHA512": ("ML-DSA-65", "ECDSA-P256", "SHA512"),
    "MLDSA65-Ed25519-SHA512": ("ML-DSA-65", "Ed25519", "SHA512"),
    "MLDSA87-ECDSA-P384-SHA512": ("ML-DSA-87", "ECDSA-P384", "SHA512"),
}
COMPOSITES: tuple[str, ...] = tuple(COMPOSITE_COMPONENTS)

ALGORITHM_NAMES: tuple[str, ...] = tuple(a[0] for a in SIGNATURE_ALGORITHMS)
ALGORITHM_FAMILY: dict[str, str] = {a[0]: a[1] for a in SIGNATURE_ALGORITHMS}
# What the OpenSSL stacks sign and verify in TLS: neither liboqs' families nor composites.
OPENSSL_ALGORITHMS: tuple[str, ...] = tuple(
    a[0] for a in SIGNATURE_ALGORITHMS if a[1] not in (*LIBOQS_FAMILIES, "composite")
)

# TLS 1.3 key-exchange groups (OpenSSL 3.5 names) and the family the analysis groups them by:
# classical (ECDHE / FFDHE), hybrid (ECDHE + ML-KEM), pure_pq (ML-KEM alone).
GROUPS: dict[str, str] = {
    "X25519": "classical",
    "X448": "classical",
    "P-256": "classical",
    "P-384": "classical",
    "P-521": "classical",
    "ffdhe2048": "classical",
    "ffdhe3072": "classical",
    "ffdhe4096": "classical",
    "ffdhe6144": "classical",
    "ffdhe8192": "classical",
    "X25519MLKEM768": "hybrid",
    "SecP256r1MLKEM768": "hybrid",
    "SecP384r1MLKEM1024": "hybrid",
    "MLKEM512": "pure_pq",
    "MLKEM768": "pure_pq",
    "MLKEM1024": "pure_pq",
}

# What the server sends. `intermediate-anchor` sends the leaf alone to a client whose trust
# anchor is the leaf's issuing intermediate itself (the Trust Anchor IDs deployment model:
# the client verifies the leaf only, nothing above the anchor); it needs an intermediate
# (depth 3 or 4).
SERVED_CHAINS = ("leaf", "leaf+intermediates", "full", "intermediate-anchor")
# What a server sends where a campaign names no served chain.
DEFAULT_SERVED_CHAIN = "leaf+intermediates"
INTERMEDIATE_ANCHOR = "intermediate-anchor"
# The engine's `serve --chain` policy of each served chain.
ENGINE_CHAIN = {INTERMEDIATE_ANCHOR: "leaf"}
# A scenario without client certificates (the `client_auth` axis's default).
NO_CLIENT_AUTH = "none"
HANDSHAKE_MODES = ("full", "resumed")
# A resumption mix: `resume<NN>` resumes each handshake with probability NN/100 (1-99); a
# campaign matrix may give the probabilities as `resumption_ratio = [0, 0.5, 0.9]` instead
# (0 is `full`, 1 `resumed`).
MIX_RE = re.compile(r"^resume([1-9][0-9]?)$")
MIX_ALLOWED = "full, resumed or resume1 .. resume99 (a resumption mix, in per cent)"


def is_handshake_mode(mode: str) -> bool:
    return mode in HANDSHAKE_MODES or MIX_RE.match(mode) is not None


def resumption_ratio(mode: str) -> float:
    """The share of handshakes that resume: 0 (full), 1 (resumed), NN/100 (resumeNN)."""
    if mode == "full":
        return 0.0
    if mode == "resumed":
        return 1.0
    m = MIX_RE.match(mode)
    if m is None:
        raise ValueError(f"handshake mode {mode!r}; allowed: {MIX_ALLOWED}")
    return int(m.group(1)) / 100


def mode_of_ratio(ratio: float) -> str | None:
    """The handshake mode of a resumption ratio (whole per cent only), or None."""
    pct = round(ratio * 100)
    if not 0 <= ratio <= 1 or abs(ratio * 100 - pct) > 1e-9:
        return None
    return {0: "full", 100: "resumed"}.get(pct, f"resume{pct}")


CERT_COMPRESSIONS = ("none", "zlib", "brotli", "zstd")

# What carries the handshake: TLS over TCP, or QUIC v1 over UDP (the engine's --transport).
TRANSPORTS = ("tcp", "quic")
DEFAULT_TRANSPORT = "tcp"


def canonical_algorithm(name: str, allowed: tuple[str, ...] = ALGORITHM_NAMES) -> str | None:
    """The canonical spelling of a signature algorithm (case-insensitive), or None."""
    for a in allowed:
        if a.lower() == name.strip().lower():
            return a
    return None


def canonical_group(name: str) -> str | None:
    """The canonical spelling of a key-exchange group (case-insensitive), or None."""
    for g in GROUPS:
        if g.lower() == name.strip().lower():
            return g
    return None


def token(name: str) -> str:
    """Id token of an algorithm or group name: lower case, letters and digits only
    (ML-DSA-65 -> mldsa65, X25519MLKEM768 -> x25519mlkem768, P-256 -> p256)."""
    return re.sub(r"[^a-z0-9]", "", name.lower())
