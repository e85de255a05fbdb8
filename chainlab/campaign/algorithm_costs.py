"""What each signature algorithm costs before this machine's primitives are measured: the
built-in sign and verify times, and the public key and signature sizes a certificate and a
CertificateVerify carry, and a certificate's size from them. `chainlab.campaign.estimate`
reads them (and the cost model's
flight sizes); `tests/campaign/test_algorithms.py` checks every algorithm has both.
"""

from __future__ import annotations

from chainlab.campaign.algorithms import COMPOSITE_COMPONENTS

# Milliseconds per operation: `openssl speed -seconds 1 -mr <alg>` with the project's
# OpenSSL 3.5.5 on this machine kind (2 shared cores), one run per algorithm. The fallback
# of an estimate made before this machine's primitives are measured (`chainlab bench
# primitives`, or any campaign run); with them, the cost model replaces this table.
SIGN_VERIFY_MS: dict[str, tuple[float, float]] = {
    "ML-DSA-44": (0.645, 0.128),
    "ML-DSA-65": (1.004, 0.159),
    "ML-DSA-87": (0.905, 0.253),
    "SLH-DSA-SHA2-128s": (310.0, 0.285),
    "SLH-DSA-SHA2-128f": (12.5, 0.740),
    "SLH-DSA-SHA2-192s": (500.0, 0.402),
    "SLH-DSA-SHA2-192f": (21.1, 1.148),
    "SLH-DSA-SHA2-256s": (453.0, 0.785),
    "SLH-DSA-SHA2-256f": (58.8, 1.445),
    "SLH-DSA-SHAKE-128s": (720.0, 0.740),
    "SLH-DSA-SHAKE-128f": (42.3, 2.555),
    "SLH-DSA-SHAKE-192s": (1430.0, 1.017),
    "SLH-DSA-SHAKE-192f": (67.9, 4.076),
    "SLH-DSA-SHAKE-256s": (1060.0, 1.618),
    "SLH-DSA-SHAKE-256f": (108.3, 2.910),
    "ECDSA-P256": (0.0153, 0.0452),
    "ECDSA-P384": (0.565, 0.476),
    "Ed25519": (0.0205, 0.0622),
    "RSA-2048": (0.233, 0.0140),
    "RSA-3072": (0.666, 0.0306),
    # liboqs 0.13 (the rustls stack's, and `chainlab-engine primitives`): median of 100
    # `primitives --op sign|verify --count 100` on this machine kind, CertificateVerify message.
    "Falcon-512": (0.195, 0.0343),
    "Falcon-1024": (0.379, 0.0674),
    "MAYO-1": (0.161, 0.0772),
    "MAYO-2": (0.0656, 0.0301),
    "UOV-Is": (0.0200, 0.0130),
    "UOV-Ip": (0.0253, 0.0151),
    "UOV-Ip-pkc": (0.0195, 0.0509),
    "CROSS-RSDPG-128-fast": (0.353, 0.216),
    "CROSS-RSDPG-128-small": (1.174, 0.898),
}

# (public key bytes in the certificate, signature bytes) per algorithm: FIPS 204 Table 2,
# FIPS 205 Table 2; ECDSA an uncompressed SEC1 point and a typical DER signature (70-72 and
# 102-104 bytes vary with the values); Ed25519 RFC 8032; RSA the DER RSAPublicKey and the
# modulus-sized signature.
KEY_SIG_BYTES: dict[str, tuple[int, int]] = {
    "ML-DSA-44": (1312, 2420),
    "ML-DSA-65": (1952, 3309),
    "ML-DSA-87": (2592, 4627),
    "SLH-DSA-SHA2-128s": (32, 7856),
    "SLH-DSA-SHAKE-128s": (32, 7856),
    "SLH-DSA-SHA2-128f": (32, 17088),
    "SLH-DSA-SHAKE-128f": (32, 17088),
    "SLH-DSA-SHA2-192s": (48, 16224),
    "SLH-DSA-SHAKE-192s": (48, 16224),
    "SLH-DSA-SHA2-192f": (48, 35664),
    "SLH-DSA-SHAKE-192f": (48, 35664),
    "SLH-DSA-SHA2-256s": (64, 29792),
    "SLH-DSA-SHAKE-256s": (64, 29792),
    "SLH-DSA-SHA2-256f": (64, 49856),
    "SLH-DSA-SHAKE-256f": (64, 49856),
    "ECDSA-P256": (65, 71),
    "ECDSA-P384": (97, 103),
    "Ed25519": (32, 64),
    "RSA-2048": (270, 256),
    "RSA-3072": (398, 384),
    # liboqs 0.13's lengths (Falcon's signature varies: the size a `pki` certificate held).
    "Falcon-512": (897, 656),
    "Falcon-1024": (1793, 1278),
    "MAYO-1": (1420, 454),
    "MAYO-2": (4912, 186),
    "UOV-Is": (412160, 96),
    "UOV-Ip": (278432, 128),
    "UOV-Ip-pkc": (43576, 128),
    "CROSS-RSDPG-128-fast": (54, 11980),
    "CROSS-RSDPG-128-small": (54, 8960),
}
# Composite ML-DSA (draft-ietf-lamps-pq-composite-sigs): its key and signature are its
# components' concatenated, and it signs and verifies with both. The pre-hash of M' (SHA-256
# or SHA-512 of a CertificateVerify's or a TBSCertificate's bytes) is priced once this
# machine's primitives are measured (the cost model's `prehash` operation).


def _both(table: dict, name: str) -> tuple:
    """A composite's entry: its two components' entries summed, field by field."""
    mldsa, trad, _ = COMPOSITE_COMPONENTS[name]
    return (table[mldsa][0] + table[trad][0], table[mldsa][1] + table[trad][1])


SIGN_VERIFY_MS.update({name: _both(SIGN_VERIFY_MS, name) for name in COMPOSITE_COMPONENTS})
KEY_SIG_BYTES.update({name: _both(KEY_SIG_BYTES, name) for name in COMPOSITE_COMPONENTS})

# A chainlab-engine certificate's DER bytes beyond the subject's public key and the issuer's
# signature (names, validity, extensions, algorithm identifiers, DER framing), by role.
# From `chainlab-engine pki` manifests: root 301-315, intermediate 344, leaf 397-412 and
# self-signed 364-378 bytes for ML-DSA, SLH-DSA, ECDSA and RSA keys (Ed25519's shorter
# identifiers: about 35 fewer).
CERT_OVERHEAD_BYTES = {"root": 310, "int": 345, "leaf": 405, "self": 370}


def certificate_bytes(hierarchy) -> list[int]:
    """Estimated DER bytes of a hierarchy's certificates, root first: the subject's public
    key, its issuer's signature and the role's overhead."""
    h = list(hierarchy)
    roles = ("self",) if len(h) == 1 else ("root", *["int"] * (len(h) - 2), "leaf")
    out = []
    for i, (alg, role) in enumerate(zip(h, roles, strict=True)):
        issuer = h[i - 1] if i > 0 else alg
        pk, _ = KEY_SIG_BYTES.get(alg, (1000, 1000))
        _, sig = KEY_SIG_BYTES.get(issuer, (1000, 1000))
        out.append(CERT_OVERHEAD_BYTES[role] + pk + sig)
    return out
