"""A handshake's bytes on the wire, estimated before it runs: the key shares, each side's
first flight as chainlab.network.model takes them, the certificates the server (and a
mutual-TLS client) sends. The formulas reproduce the engine's byte counts (its records'
bytes_written) exactly but for ECDSA's varying signature length; `estimate` prices a
scenario's CPU and latency with them, the network model projects them onto a path.
"""

from __future__ import annotations

import math
from dataclasses import replace

from chainlab.axes import algorithm_sizes
from chainlab.axes import credential as certificates
from chainlab.axes.algorithm_sizes import KEY_SIG_BYTES
from chainlab.axes.handshake import Handshake, view
from chainlab.campaign.model import Scenario

# The two handshakes a resumption mix is made of (chainlab.axes.algorithms), and the
# credential of a client certificate's chain (always X.509).
FULL, RESUMED = "full", "resumed"
X509_CREDENTIAL = certificates.parse(certificates.X509)
# TLS 1.3 key shares (client, server) in bytes: X25519 / X448 / SEC1 points; ML-KEM
# encapsulation key / ciphertext (FIPS 203); hybrids the concatenation; FFDHE the prime size.
KEY_SHARE_BYTES: dict[str, tuple[int, int]] = {
    "X25519": (32, 32),
    "X448": (56, 56),
    "P-256": (65, 65),
    "P-384": (97, 97),
    "P-521": (133, 133),
    "ffdhe2048": (256, 256),
    "ffdhe3072": (384, 384),
    "ffdhe4096": (512, 512),
    "ffdhe6144": (768, 768),
    "ffdhe8192": (1024, 1024),
    "X25519MLKEM768": (1216, 1120),
    "SecP256r1MLKEM768": (1249, 1153),
    "SecP384r1MLKEM1024": (1665, 1665),
    "MLKEM512": (800, 768),
    "MLKEM768": (1184, 1088),
    "MLKEM1024": (1568, 1568),
}
# Bytes of the TLS exchange besides the key shares, certificates and signature, from the
# engine's records (bytes_written of both sides, OpenSSL 3.5.5, every group and algorithm of
# the tables above, full and resumed handshakes; the formulas below reproduce the measured
# byte counts exactly, except ECDSA's varying signature length):
#   server full flight  ServerHello, ChangeCipherSpec, EncryptedExtensions and Finished
#                       with their record framing, and the first certificate entry's framing
SERVER_FULL_FIXED = 263
#   server resumed      ServerHello, ChangeCipherSpec, EncryptedExtensions, Finished and
#                       the new session ticket, framed
SERVER_RESUMED_FIXED = 464
#   client first flight ClientHello and its record, without the key share; +8 bytes with an
#                       ECDHE group (its ec_point_formats extension); resumed: + the ticket
CLIENT_FULL_FIXED = 235
CLIENT_RESUMED_FIXED = 506
CLIENT_ECDHE_EXTRA = 8
ECDHE_GROUPS = ("X25519", "X448", "P-256", "P-384", "P-521")
#   client: + the extensions an axis adds (Handshake.client_hello_extra: certificate
#   compression's compress_certificate, chainlab.axes.cert_compression)
# Per certificate entry: a 3-byte length and 2 bytes of (empty) extensions.
CERT_ENTRY_BYTES = 5
# Certificate and CertificateVerify messages: 4-byte handshake header, plus the request
# context and list length (Certificate) or the scheme and length (CertificateVerify).
CERT_MSG_HEADER = 8
CV_MSG_HEADER = 8
# TLS 1.3 records carry at most 2^14 plaintext bytes; OpenSSL writes each handshake message
# in its own records, each further record adding 5 header + 1 type + 16 AEAD tag bytes.
RECORD_PLAINTEXT = 16384
RECORD_OVERHEAD = 22


def certificate_bytes(s: Scenario | Handshake) -> list[int]:
    """Estimated DER bytes of the hierarchy's certificates, root first (none for a target)."""
    h = view(s)
    return algorithm_sizes.certificate_bytes(h.hierarchy) if h.hierarchy else []


def served_certificate_bytes(s: Scenario | Handshake) -> list[int]:
    """DER bytes of the certificates the server sends, leaf first (what the served chain
    sends; a Merkle Tree Certificate alone)."""
    h = view(s)
    if h.credential.is_mtc:
        key = KEY_SIG_BYTES.get(h.hierarchy[-1], (1000, 1000))[0]
        sig = lambda a: KEY_SIG_BYTES.get(a, (1000, 1000))[1]  # noqa: E731
        return [certificates.der_bytes(h.credential, key, sig)]
    certs = list(reversed(certificate_bytes(h)))  # leaf first
    if h.sent == "leaf" or len(certs) == 1:
        return certs[:1]
    if h.sent == "leaf+intermediates":
        return certs[:-1]
    return certs


def client_certificate_bytes(s: Scenario | Handshake) -> int:
    """Estimated bytes of a mutual-TLS client's Certificate and CertificateVerify messages
    (its leaf and intermediates, as the engine's client sends them) per handshake: 0 without
    a client certificate; on the full share of a resumption mix (resumed handshakes ask
    for none)."""
    h = view(s)
    if not h.client_hierarchy:
        return 0
    as_server = replace(
        h, hierarchy=h.client_hierarchy, sent="leaf+intermediates", credential=X509_CREDENTIAL
    )
    served = served_certificate_bytes(as_server)
    _, sig = KEY_SIG_BYTES.get(h.client_hierarchy[-1], (1000, 1000))
    full = CERT_MSG_HEADER + sum(b + CERT_ENTRY_BYTES for b in served) + CV_MSG_HEADER + sig
    return round((1 - h.resumed_share) * full)


def certificate_message_bytes(s: Scenario | Handshake) -> int:
    """Estimated bytes of the uncompressed Certificate message the server sends."""
    return CERT_MSG_HEADER + sum(b + CERT_ENTRY_BYTES for b in served_certificate_bytes(s))


def flight_bytes(s: Scenario | Handshake) -> tuple[int, int]:
    """Estimated TLS bytes of (the client's first flight, the server's flight), as
    chainlab.network.model takes them: client bytes_written less its final flight, server
    bytes_written. Certificate compression is ignored (an upper bound). A resumption mix: the
    full and resumed flights weighted by its ratio."""
    h = view(s)
    r = h.resumed_share
    if 0 < r < 1:
        full = flight_bytes(replace(h, mode=FULL))
        resumed = flight_bytes(replace(h, mode=RESUMED))
        (fc, fs), (rc, rs) = full, resumed
        return round((1 - r) * fc + r * rc), round((1 - r) * fs + r * rs)
    c_share, s_share = KEY_SHARE_BYTES.get(h.kex or "", (1200, 1100))
    extra = CLIENT_ECDHE_EXTRA if h.kex in ECDHE_GROUPS else 0
    extra += h.client_hello_extra
    if r == 1:
        return CLIENT_RESUMED_FIXED + extra + c_share, SERVER_RESUMED_FIXED + s_share
    served = served_certificate_bytes(h)
    _, sig = KEY_SIG_BYTES.get(h.leaf_alg or "", (1000, 1000))
    cert_msg = CERT_MSG_HEADER + sum(b + CERT_ENTRY_BYTES for b in served)
    cv_msg = CV_MSG_HEADER + sig
    extra_records = sum(math.ceil(m / RECORD_PLAINTEXT) - 1 for m in (cert_msg, cv_msg))
    server = (
        SERVER_FULL_FIXED
        + s_share
        + sum(served)
        + CERT_ENTRY_BYTES * (len(served) - 1)
        + sig
        + RECORD_OVERHEAD * extra_records
    )
    return CLIENT_FULL_FIXED + extra + c_share, server
