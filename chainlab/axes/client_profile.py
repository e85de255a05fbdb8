"""The `client_profile` axis, declared here whole (the registry is chainlab.axes):
whose ClientHello the client sends. `none` is the engine's own, exactly what the scenario's
other axes say; `chrome` is desktop Chrome's (150 and later) on the BoringSSL engine: its
groups (X25519MLKEM768 first, with an X25519 key share too), its signature schemes (ML-DSA
first), TLS 1.2 still offered with its cipher suites, ALPN, OCSP and SCT requests, brotli
certificate compression, GREASE, a GREASE ECH extension and a permuted extension order
(docs/stacks.md, "Client profiles", cites the sources). The trust_anchors extension is the
`trust_anchors` axis's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chainlab.axes.handshake import Handshake

from chainlab.axes.axis import NOT_MINE, Axis, AxisReader
from chainlab.axes.stack import need

NONE, CHROME = "none", "chrome"
PROFILES = (NONE, CHROME)
# The key exchange a Chrome ClientHello negotiates with a server that has it (its first
# group), and the certificate compression it offers.
CHROME_KEX = "X25519MLKEM768"
# The second key share a Chrome ClientHello carries (BoringSSL's default selection: up to two,
# at most one post-quantum): a key pair the client generates on every handshake, full or
# resumed, and the server never uses. Unpriced, browser.toml's profile scenarios' client CPU
# was predicted 14-19 % under (2026-11-27); the rest of that gap is the larger ClientHello.
CHROME_EXTRA_SHARE = "X25519"
CHROME_COMPRESSIONS = ("none", "brotli")
# The algorithms whose TLS signature schemes Chrome offers (chainlab-boring's profile.rs
# CHROME_SCHEMES): a leaf of any other cannot sign a CertificateVerify Chrome accepts.
CHROME_SIGNERS = (
    "ML-DSA-44", "ML-DSA-65", "ML-DSA-87", "ECDSA-P256", "ECDSA-P384", "RSA-2048", "RSA-3072",
)  # fmt: skip


def check(v: AxisReader, sid: str, h: Handshake, with_load: bool) -> None:
    """A profile's ClientHello is its own: the scenario's key exchange must be its first
    group, its compression one it offers, and its leaf one it accepts a signature of."""
    profile = h.parts["client_profile"]
    if profile != CHROME:
        return
    if h.kex != CHROME_KEX:
        v.bad(
            "matrix",
            f"scenario {sid}: client_profile 'chrome' with kex {h.kex!r}: the profile offers "
            f"Chrome's groups; allowed: kex {CHROME_KEX!r} (its first)",
        )
    if h.compression not in CHROME_COMPRESSIONS:
        v.bad(
            "matrix",
            f"scenario {sid}: client_profile 'chrome' with cert_compression "
            f"{h.compression!r}: Chrome offers brotli; allowed: {', '.join(CHROME_COMPRESSIONS)}",
        )
    leaf = h.leaf_alg
    if leaf is not None and leaf not in CHROME_SIGNERS:
        v.bad(
            "matrix",
            f"scenario {sid}: client_profile 'chrome' with a {leaf} leaf: Chrome offers no "
            f"signature scheme for it; allowed leaves: {', '.join(CHROME_SIGNERS)}",
        )


CLIENT_PROFILE = Axis(
    key="client_profile",
    label="client profile",
    default=NONE,
    read=PROFILES,
    order={NONE: 0},
    id_part=lambda v, _: None if v == NONE else f"profile_{v}",
    id_read=lambda p, _: (
        p.removeprefix("profile_") if p.removeprefix("profile_") in PROFILES[1:] else NOT_MINE
    ),
    id_help="profile_chrome",
    id_words=("profile",),
    not_with_target=False,
    check=check,
    client_flags=lambda v, s, files, seed: [] if v == NONE else ["--client-profile", v],
    needs=lambda v, h: [] if v == NONE else [need("client", "client_profile")],
    operations=lambda v, h: (
        [("client", "key exchange", CHROME_EXTRA_SHARE, "keygen", None, 1.0)] if v == CHROME else []
    ),
    describe=lambda v: f"{v} ClientHello",
)
