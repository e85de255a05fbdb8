"""TLS stacks: which implementation runs each side of a scenario, and what each can do.

Five stacks (docs/stacks.md): `openssl-3.5` (the engine as always, the default),
`openssl-4.0` (the same engine code linked against OpenSSL 4.0), `rustls` (the rustls
engine, aws-lc-rs provider), `boringssl` (the BoringSSL engine: the stack in Chrome) and
`go` (the Go engine, crypto/tls of Go 1.27: the stack of most cloud-native servers). A
scenario names a client stack and a server stack; a campaign's
`stack` axis sets both, `client_stack` / `server_stack` set them apart.

What a stack cannot do is refused by `validate` (chainlab.axes.stack_check), naming the
scenario, the stack and the missing capability, so such a combination is never discovered
failing at run time.
The rustls, BoringSSL and Go stacks' tables are their engines' `info` (capabilities.rs
of chainlab-rustls and chainlab-boring; engine/go's args.go and info.go), and every engine's
features are listed there too (chainlab_record::features for the Rust engines); validation
must work without a built engine, so a copy is kept here and `tests/campaign/test_stacks.py`
fails when the two differ. An engine feature is declared once, with the stacks that have it
(`feature`): a new one, in the axis module that needs it, changes no other stack's table.
Both OpenSSL builds carry the same patches and accept every
group of `algorithms.py`, and every algorithm but liboqs' (Falcon, MAYO,
UOV, CROSS: `pki` issues them with liboqs; no OpenSSL of ours verifies them). Which
implementation signs ML-DSA (`signature_impl`: the stack's own or liboqs) is a stack
capability too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from chainlab.axes import algorithms
from chainlab.axes.axis import NOT_MINE, Axis, AxisReader

DEFAULT_STACK = "openssl-3.5"
STACKS = ("openssl-3.5", "openssl-4.0", "rustls", "boringssl", "go")
# A stack's token in scenario ids (`__stack_rustls`, `__stack_ossl35_rustls`).
TOKENS = {
    "openssl-3.5": "ossl35",
    "openssl-4.0": "ossl40",
    "rustls": "rustls",
    "boringssl": "boring",
    "go": "go",
}
STACK_BY_TOKEN = {t: s for s, t in TOKENS.items()}
# The two OpenSSL stacks: the same engine code, linked against another OpenSSL.
OPENSSL_STACKS = ("openssl-3.5", "openssl-4.0")


@dataclass(frozen=True)
class Capabilities:
    """What a stack can do; None where it does all that the OpenSSL engine does."""

    # Signature algorithms (`pki --chain` names) it signs (server leaf) and verifies (client).
    signature_algorithms: tuple[str, ...] | None = None
    # Key-exchange groups (OpenSSL `--groups` names).
    groups: tuple[str, ...] | None = None
    # RFC 8879 certificate compression algorithms.
    cert_compressions: tuple[str, ...] | None = None
    # The longest handshake message its client receives (None: no limit a PKI reaches); a
    # Certificate message estimated beyond it is refused (chainlab-rustls info:
    # max_handshake_message).
    max_handshake_message: int | None = None
    # Algorithms it takes only at the root of a hierarchy of depth 3 or more (chainlab-rustls
    # info: root_only_signature_algorithms): keys no Certificate message it receives holds.
    root_only: tuple[str, ...] = ()
    # Its TCP server answers a sync (SIGUSR1, the Rust engines' serve scaffold), so a run
    # keeps it to serve later visits (chainlab.runner.servers).
    serves_visits: bool = True


# The trust_anchors extension through libssl's custom extension callbacks (TCP only,
# without certificate compression: chainlab.axes.trust_anchors checks those).
_OPENSSL = Capabilities(
    signature_algorithms=algorithms.OPENSSL_ALGORITHMS,
)

# A stack's own ML-DSA and the classical algorithms: all that BoringSSL and Go sign and
# verify; rustls adds liboqs' families.
OWN_MLDSA_AND_CLASSICAL = (
    "ML-DSA-44",
    "ML-DSA-65",
    "ML-DSA-87",
    "ECDSA-P256",
    "ECDSA-P384",
    "Ed25519",
    "RSA-2048",
    "RSA-3072",
)

CAPABILITIES: dict[str, Capabilities] = {
    "openssl-3.5": _OPENSSL,
    "openssl-4.0": _OPENSSL,
    "rustls": Capabilities(
        signature_algorithms=(
            *OWN_MLDSA_AND_CLASSICAL,
            # liboqs' families (through liboqs: docs/stacks.md)
            "Falcon-512",
            "Falcon-1024",
            "MAYO-1",
            "MAYO-2",
            "UOV-Is",
            "UOV-Ip",
            "UOV-Ip-pkc",
            "CROSS-RSDPG-128-fast",
            "CROSS-RSDPG-128-small",
            # Composite ML-DSA over aws-lc's components (docs/stacks.md)
            *algorithms.COMPOSITES,
        ),
        groups=(
            "X25519MLKEM768",
            "SecP256r1MLKEM768",
            "MLKEM768",
            "MLKEM1024",
            "X25519",
            "P-256",
            "P-384",
        ),
        cert_compressions=("zlib", "brotli"),
        max_handshake_message=65535,
        root_only=("UOV-Is", "UOV-Ip"),
    ),
    # chainlab-boring info (engine/crates/chainlab-boring/src/capabilities.rs): BoringSSL's
    # own ML-DSA, no SLH-DSA and none of liboqs' families; MTCs served, and verified by
    # BoringSSL's own X.509 verifier (standalone, -07 encoding, the CA cosigner only; a
    # landmark-relative one by chainlab's relying party); the trust_anchors extension.
    "boringssl": Capabilities(
        signature_algorithms=OWN_MLDSA_AND_CLASSICAL,
        groups=("X25519MLKEM768", "MLKEM1024", "X25519", "P-256", "P-384"),
        cert_compressions=("zlib", "brotli"),
    ),
    # chainlab-go info (engine/go/info.go, args.go): Go 1.27's crypto/tls and crypto/x509 with
    # their own ML-DSA, QUIC through quic-go; no SLH-DSA, no liboqs families, no MTCs, no
    # certificate compression; the client's signature schemes cannot be narrowed (crypto/tls
    # offers its own list), so no client populations.
    "go": Capabilities(
        signature_algorithms=OWN_MLDSA_AND_CLASSICAL,
        groups=(
            "X25519MLKEM768",
            "SecP256r1MLKEM768",
            "SecP384r1MLKEM1024",
            "MLKEM1024",
            "X25519",
            "P-256",
            "P-384",
            "P-521",
        ),
        cert_compressions=(),
        serves_visits=False,
    ),
}


@dataclass(frozen=True)
class Feature:
    """An engine feature a campaign may ask of a stack: what validate's messages call it, and
    the stacks whose engine has it. Each engine's `info` lists the features it has
    (chainlab_record::features for the Rust engines, engine/go/args.go), which
    `tests/campaign/test_stacks.py` holds this table to."""

    name: str
    text: str
    stacks: tuple[str, ...]


FEATURES: dict[str, Feature] = {}


def feature(name: str, text: str, stacks: tuple[str, ...]) -> str:
    """Declares engine feature `name` (once: a new one in the axis module that needs it) with
    what validate's messages call it and the stacks that have it; returns its name."""
    if name in FEATURES:
        raise ValueError(f"engine feature {name!r} is declared twice")
    unknown = sorted(set(stacks) - set(STACKS))
    if unknown:
        raise ValueError(f"engine feature {name!r}: unknown stacks {unknown}; allowed: {STACKS}")
    FEATURES[name] = Feature(name, text, tuple(stacks))
    return name


def has(stack: str, name: str) -> bool:
    """Whether `stack`'s engine has engine feature `name`."""
    return stack in FEATURES[name].stacks


_RUST_MTC = (*OPENSSL_STACKS, "rustls")
_NOT_GO = (*OPENSSL_STACKS, "rustls", "boringssl")
_OPENSSL_BORING = (*OPENSSL_STACKS, "boringssl")
feature("quic", "QUIC (transport 'quic')", (*OPENSSL_STACKS, "go"))
feature("client_auth", "client certificates (client_auth)", (*_OPENSSL_BORING, "go"))
feature(
    "partial_chain",
    "an intermediate as trust anchor (served_chain 'intermediate-anchor')",
    _OPENSSL_BORING,
)
feature(
    "untrusted_intermediates",
    "intermediates the server does not send (served_chain 'leaf' at depth 3-4)",
    _OPENSSL_BORING,
)
feature("resumption_mix", "a resumption mix (handshake_mode resumeNN)", (*_OPENSSL_BORING, "go"))
feature("load", "[load] steps", STACKS)
feature("workers", "more than one server worker", STACKS)
feature("targets", "targets ([targets.<name>])", OPENSSL_STACKS)
feature(
    "server_group_preference",
    "the server's own group preference (server_groups)",
    OPENSSL_STACKS,
)
feature(
    "seeded_random",
    "seeded random bytes for counted handshakes ([measure] random 'seeded')",
    OPENSSL_STACKS,
)
feature(
    "signature_impl_liboqs",
    "liboqs signing and verifying ML-DSA (signature_impl 'liboqs')",
    ("rustls",),
)
feature("mtc", "Merkle Tree Certificates (certificate 'mtc-standalone' or 'mtc-landmark')", _NOT_GO)
feature(
    "mtc_cosigners",
    "MTC cosigners besides the CA (certificate cosigners): BoringSSL's verifier checks the CA "
    "cosigner's signature only",
    _RUST_MTC,
)
feature(
    "mtc_experimental",
    "the early experiments' MTC encoding (certificate encoding 'experimental'): BoringSSL's "
    "verifier knows -07's OIDs only",
    _RUST_MTC,
)
feature(
    "mtc_retry",
    "the MTC retry's SNI stand-in (certificate retry = true without trust_anchors)",
    _RUST_MTC,
)
feature("trust_anchors", "the trust_anchors extension (trust_anchors)", _OPENSSL_BORING)
feature("client_profile", "a browser's ClientHello (client_profile)", ("boringssl",))
feature(
    "client_sigalgs",
    "a client offering chosen signature schemes (a client population's kinds): its TLS "
    "library offers its own list",
    _NOT_GO,
)


def token(client: str, server: str) -> str | None:
    """The id part of a stack pair; None for the default (both openssl-3.5)."""
    if client == server == DEFAULT_STACK:
        return None
    if client == server:
        return f"stack_{TOKENS[client]}"
    return f"stack_{TOKENS[client]}_{TOKENS[server]}"


def decode(part: str) -> tuple[str, str] | None:
    """(client, server) of an id part `stack_<tok>[_<tok>]`, or None if it is not one."""
    if not part.startswith("stack_"):
        return None
    toks = part[len("stack_") :].split("_")
    if not 1 <= len(toks) <= 2 or any(t not in STACK_BY_TOKEN for t in toks):
        return None
    # `stack_<tok>_<tok>` of one stack reads back too; ids.decode then asks for the
    # canonical `stack_<tok>`.
    return STACK_BY_TOKEN[toks[0]], STACK_BY_TOKEN[toks[-1]]


def label(client: str, server: str) -> str:
    """How reports name a pair: the stack, or `client → server` when they differ."""
    return client if client == server else f"{client} → {server}"


def need(side: str, feature: str) -> tuple[str, str, str]:
    """A capability an axis value needs of `side`'s stack ("client", "server" or "both"),
    with its text (`FEATURES`): what an `Axis.needs` returns."""
    return (side, feature, FEATURES[feature].text)


# -- the axis: each side's stack ------------------------------------------------------


def read_stack_pairs(v: AxisReader, m: Mapping[str, Any], at: str) -> list[tuple[str, str]] | None:
    """The (client, server) stack pairs of a matrix: `stack` (both sides alike), or
    `client_stack` x `server_stack` (a side left out is on the default stack)."""
    if "stack" in m and ("client_stack" in m or "server_stack" in m):
        v.bad(
            f"{at}.stack",
            "given with client_stack/server_stack; allowed: `stack` (both sides on one "
            "stack) or client_stack and server_stack (each side its own)",
        )
        return None
    chosen = {}
    for key in ("stack", "client_stack", "server_stack"):
        if key not in m:
            continue
        raw = m[key]
        items = v.listish(raw)
        if not items:
            v.bad(f"{at}.{key}", "empty array; allowed: at least one value")
        vals = []
        for i, item in enumerate(items):
            iat = f"{at}.{key}[{i}]" if isinstance(raw, list) else f"{at}.{key}"
            got = v.string(item, iat, choices=STACKS)
            if got is not None and got not in vals:
                vals.append(got)
        chosen[key] = vals
    if "stack" in chosen:
        return [(s, s) for s in chosen["stack"]] or None
    if not chosen:
        return None
    clients = chosen.get("client_stack", [DEFAULT_STACK])
    servers = chosen.get("server_stack", [DEFAULT_STACK])
    return [(c, s) for c in clients for s in servers] or None


STACK = Axis(
    key="stack",
    label="TLS stack",
    # (client stack, server stack): a matrix's `stack`, or `client_stack` x `server_stack`.
    default=(DEFAULT_STACK, DEFAULT_STACK),
    read=STACKS,  # a `where` table's value: either side's stack
    matrix_read=read_stack_pairs,
    matrix_keys=("client_stack", "server_stack"),
    columns=("client_stack", "server_stack"),
    store=lambda pair: pair,
    id_part=lambda pair, _: token(*pair),
    id_read=lambda p, _: decode(p) or NOT_MINE,
    id_help=f"stack_<tok>[_<tok>] ({', '.join(STACK_BY_TOKEN)})",
    id_words=("stack",),
    where={
        # Either side's stack; client_stack / server_stack test one side.
        "stack": lambda pair: set(pair),
        "client_stack": lambda pair: {pair[0]},
        "server_stack": lambda pair: {pair[1]},
    },
    where_read={k: STACKS for k in ("stack", "client_stack", "server_stack")},
    describe=label,
    shape=lambda pair, h: replace(h, stacks=tuple(pair)),
    params=lambda pair: dict(zip(("client_stack", "server_stack"), pair, strict=True)),
)
