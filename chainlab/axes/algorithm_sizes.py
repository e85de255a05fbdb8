"""What a signature algorithm's key and signature weigh in a certificate and a
CertificateVerify, and a certificate's size from them: facts of the algorithms, read by the
stacks' capability check (a Certificate message too long for a client) and by the cost
model's flights (chainlab.model.flights); `tests/campaign/test_algorithms.py` checks every
algorithm has them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chainlab.axes.algorithms import COMPOSITE_COMPONENTS

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
# components' concatenated.


def composite_sum(table: dict[str, Any], name: str) -> tuple[Any, ...]:
    """A composite's entry: its two components' entries summed, field by field."""
    mldsa, trad, _ = COMPOSITE_COMPONENTS[name]
    return (table[mldsa][0] + table[trad][0], table[mldsa][1] + table[trad][1])


KEY_SIG_BYTES.update({name: composite_sum(KEY_SIG_BYTES, name) for name in COMPOSITE_COMPONENTS})

# A chainlab-engine certificate's DER bytes beyond the subject's public key and the issuer's
# signature (names, validity, extensions, algorithm identifiers, DER framing), by role.
# From `chainlab-engine pki` manifests: root 301-315, intermediate 344, leaf 397-412 and
# self-signed 364-378 bytes for ML-DSA, SLH-DSA, ECDSA and RSA keys (Ed25519's shorter
# identifiers: about 35 fewer).
CERT_OVERHEAD_BYTES = {"root": 310, "int": 345, "leaf": 405, "self": 370}


def certificate_bytes(hierarchy: Sequence[str]) -> list[int]:
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
