"""A server's credential as the `certificate` axis's values describe it (the axis is
chainlab.axes.certificate): an X.509 chain of the scenario's hierarchy or a Merkle Tree
Certificate (draft-ietf-plants-merkle-tree-certs-07) for the same leaf key, its canonical
string, its id token, its store columns and its size on the wire (docs/pki.md, "Merkle Tree
Certificates").

A value is kept as one canonical string, so it is hashable, JSON and readable in stores:

    x509
    mtc-landmark batch=4096                      the client holds the landmark
    mtc-landmark batch=4096 held=no              it does not: it gets the standalone one
    mtc-landmark batch=4096 held=no retry=yes    it does not, and pays the draft's retry
    mtc-landmark batch=4096 renewals=3           the server holds its last 3 landmarks' MTCs
    mtc-landmark batch=4096 renewals=3 retry=yes and a lagging kind of a population retries
    mtc-standalone batch=4096 ca=ML-DSA-44 cosigners=ML-DSA-44,ECDSA-P256
    mtc-standalone batch=4096 ca=ML-DSA-44 encoding=experimental
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass

X509 = "x509"
STANDALONE = "mtc-standalone"
LANDMARK = "mtc-landmark"
KINDS = (X509, STANDALONE, LANDMARK)
# Entries per log batch: the engine's bounds (chainlab_mtc::issue::MAX_BATCH, printed by
# `chainlab-engine info` as mtc.max_batch; tests/campaign/test_certificates.py compares).
MIN_BATCH, MAX_BATCH = 2, 1 << 26
# The CA cosigner's algorithm when a campaign names none (the draft's example cosigner).
DEFAULT_CA = "ML-DSA-44"
# The trust anchor IDs `pki` gives the CA and the batch's landmark (chainlab-engine's
# pki::mtc CA_ID and chainlab_mtc::proof::landmark_id of log 1's landmark 2, written into
# trust.json; tests/runner/test_trust_anchors_run.py compares).
CA_ID = "32473.1"
LANDMARK_ID = "32473.1.0.1.2"
# The keys of a certificate's inline table in a campaign file.
TABLE_KEYS = (
    "kind", "batch", "ca", "cosigners", "landmark_held", "retry", "encoding", "renewals",
)  # fmt: skip
# Landmark intervals a subscriber renews over at most (chainlab_mtc::issue::MAX_LANDMARKS,
# printed by `chainlab-engine info` as mtc.max_renewals; tests/campaign/test_certificates.py
# compares).
MAX_RENEWALS = 16
# How an MTC is encoded (`pki --mtc-encoding`): -07's IANA OIDs, or the early experiments'.
PLANTS_07, EXPERIMENTAL = "plants-07", "experimental"
ENCODINGS = (PLANTS_07, EXPERIMENTAL)
# What stores made before the encoding was a column hold for an MTC (chainlab wrote only the
# early experiments' encoding then).
ENCODING_BEFORE_COLUMN = EXPERIMENTAL
_TOKEN = {STANDALONE: "mtcs", LANDMARK: "mtcl"}
# The proof a `primitives --op mtc-verify` is timed with: the draft's hourly landmark (23
# hashes). Evaluating a hash costs ~0.2 us beside the ~5 us of parsing and entry hashing, so
# one size stands for every batch (as one TBSCertificate size does for X.509 verification).
MTC_VERIFY_HASHES = 23
HASH_BYTES = 32  # SHA-256, the log's hash
# An MTC's DER bytes besides its key and MTCProof, and the bytes of the MTCProof's
# signatures length, per encoding: measured on `pki`'s certificates (an ML-DSA-65 leaf's
# landmark-relative MTC is 2,641 bytes in -07, 1,952 of key and 371 of proof; 2,649 in the
# experimental encoding, whose OIDs and UTF8String CA ID are longer, 370 of proof).
MTC_OVERHEAD_BYTES = {PLANTS_07: 318, EXPERIMENTAL: 327}
SIGNATURES_LENGTH_BYTES = {PLANTS_07: 3, EXPERIMENTAL: 2}
# A cosigner ID's binary form: the CA's (32473.1) 4 bytes, a further cosigner's 5.
CA_ID_BYTES, COSIGNER_ID_BYTES = 4, 5


@dataclass(frozen=True)
class Certificate:
    kind: str
    batch: int = 0
    ca: str | None = None
    cosigners: tuple[str, ...] = ()
    held: bool = True  # landmark only: the client holds the landmark subtrees
    retry: bool = False  # landmark not held: the client pays the trust-anchor retry
    encoding: str = PLANTS_07
    # landmark only: the landmark intervals whose MTCs the server holds (`pki --mtc-renewals`)
    renewals: int = 1

    @property
    def is_mtc(self) -> bool:
        return self.kind != X509

    @property
    def spec(self) -> str:
        """The canonical string."""
        if not self.is_mtc:
            return X509
        words = [self.kind, f"batch={self.batch}"]
        if self.kind == STANDALONE:
            words.append(f"ca={self.ca}")
            if self.cosigners:
                words.append(f"cosigners={','.join(self.cosigners)}")
        else:
            if not self.held:
                words.append("held=no")
            if self.renewals > 1:
                words.append(f"renewals={self.renewals}")
            if self.retry:
                words.append("retry=yes")
        if self.encoding != PLANTS_07:
            words.append(f"encoding={self.encoding}")
        return " ".join(words)

    @property
    def sent(self) -> str | None:
        """Which MTC the server sends: 'landmark', 'standalone', or None (X.509)."""
        if not self.is_mtc:
            return None
        return "landmark" if self.kind == LANDMARK and (self.held or self.retry) else "standalone"

    @property
    def engine_chain(self) -> str | None:
        """`serve --chain` for this certificate (None: the served-chain axis decides)."""
        return None if self.sent is None else f"mtc-{self.sent}"

    @property
    def signers(self) -> tuple[str, ...]:
        """Algorithms whose subtree signatures the client verifies (CA first): those of the
        standalone certificate it accepts (after a retry, the CA's)."""
        if self.retry:
            return (DEFAULT_CA,)
        if self.sent != "standalone":
            return ()
        return (self.ca or DEFAULT_CA, *self.cosigners)

    def pki_flags(self) -> list[str]:
        """`pki` flags issuing this MTC beside the hierarchy (none for X.509)."""
        if not self.is_mtc:
            return []
        flags = ["--mtc-batch", str(self.batch), "--mtc-ca", self.ca or DEFAULT_CA]
        flags += ["--mtc-encoding", self.encoding]
        if self.cosigners:
            flags += ["--mtc-cosigners", ",".join(self.cosigners)]
        if self.renewals > 1:
            flags += ["--mtc-renewals", str(self.renewals)]
        return flags

    def server_flags(self) -> list[str]:
        """`serve` flags beyond `--chain` for the stand-in: the standalone certificate for a
        retry."""
        return ["--mtc-retry-standalone"] if self.retry else []

    def client_flags(self, pki_dir: Path) -> list[str]:
        """A client's verification flags for this MTC (in place of `--ca`)."""
        flags = ["--mtc-trust", str(pki_dir / "mtc" / "trust.json")]
        if self.sent == "landmark" and not self.retry:
            flags.append("--mtc-landmarks")
        return [*flags, "--mtc-cosigners-required", str(len(self.cosigners))]

    @property
    def own_ids(self) -> tuple[str, ...]:
        """The trust anchor IDs a client requests first for this certificate: its landmark's
        when it holds the landmark, the CA's when it takes the standalone one; none when it
        retries (its first request names neither, as a client whose list lacks the CA)."""
        if not self.is_mtc or self.retry:
            return ()
        return (LANDMARK_ID,) if self.sent == "landmark" else (CA_ID,)


def subtree_entries(batch: int) -> int:
    """The entries of the larger subtree covering a batch placed as `pki` places it (docs/
    pki.md): the batch starts at BIT_CEIL(batch), so its left subtree has the largest power
    of two below the batch's size."""
    return 1 << max(batch - 1, 1).bit_length() - 1


def draft_hashes(entries: int) -> int:
    """Hashes in an inclusion proof of a subtree of `entries` entries: ceil(log2 n) (the
    draft's size rule)."""
    return max(entries - 1, 0).bit_length()


def der_bytes(c: Certificate, key_bytes: int, signature_bytes: Callable[[str], int]) -> int:
    """Estimated DER bytes of an MTC whose leaf key is `key_bytes` long: the key, the fixed
    fields and the MTCProof (extensions, start, end, the proof, each signature with its
    cosigner ID). A retry's client receives two: the landmark-relative one, then the
    standalone one."""
    bare = MTC_OVERHEAD_BYTES[c.encoding] + key_bytes + 2 + 12 + 2
    bare += SIGNATURES_LENGTH_BYTES[c.encoding]
    bare += draft_hashes(subtree_entries(c.batch)) * HASH_BYTES
    ids = [CA_ID_BYTES, *[COSIGNER_ID_BYTES] * (len(c.signers) - 1)]
    signed = sum(1 + i + 2 + signature_bytes(a) for i, a in zip(ids, c.signers, strict=False))
    return bare + signed + (bare if c.retry else 0)


_WORDS = ("batch", "ca", "cosigners", "held", "retry", "encoding", "renewals")


def parse(spec: str) -> Certificate:
    """The certificate a canonical string stands for; ValueError naming what is wrong."""
    words = spec.split()
    if not words or words[0] not in KINDS:
        raise ValueError(f"unknown certificate kind in {spec!r}; allowed: {', '.join(KINDS)}")
    kind, fields = words[0], {}
    for w in words[1:]:
        key, sep, value = w.partition("=")
        if not sep or key not in _WORDS:
            raise ValueError(
                f"bad word {w!r} in {spec!r}; allowed: " + ", ".join(f"{k}=" for k in _WORDS)
            )
        fields[key] = value
    if kind == X509:
        if fields:
            raise ValueError(f"{spec!r}: an X.509 chain takes no MTC parameters")
        return Certificate(X509)
    if "batch" not in fields or not fields["batch"].isdigit():
        raise ValueError(f"{spec!r}: batch=<entries> is required")
    encoding = fields.get("encoding", PLANTS_07)
    if encoding not in ENCODINGS:
        raise ValueError(f"{spec!r}: encoding {encoding!r}; allowed: {', '.join(ENCODINGS)}")
    renewals = fields.get("renewals", "1")
    if not renewals.isdigit() or not 1 <= int(renewals) <= MAX_RENEWALS:
        raise ValueError(f"{spec!r}: renewals {renewals!r}; allowed: 1 to {MAX_RENEWALS}")
    return Certificate(
        kind,
        int(fields["batch"]),
        fields.get("ca", DEFAULT_CA if kind == STANDALONE else None),
        tuple(a for a in fields.get("cosigners", "").split(",") if a),
        fields.get("held", "yes") != "no",
        fields.get("retry", "no") == "yes",
        encoding,
        int(renewals),
    )


# The id word of the early experiments' encoding (-07's, the default, has none).
_EXPERIMENTAL_WORD = "exp"


def token(spec: str, alg_token: Callable[[str], str]) -> str:
    """A scenario id's part: `mtcl<batch>[_nolm][_ren<n>][_retry][_exp]`,
    `mtcs<batch>_<ca>[_<cosigner>...][_exp]`."""
    c = parse(spec)
    exp = f"_{_EXPERIMENTAL_WORD}" if c.encoding == EXPERIMENTAL else ""
    if c.kind == LANDMARK:
        ren = f"_ren{c.renewals}" if c.renewals > 1 else ""
        nolm, retry = ("" if c.held else "_nolm"), ("_retry" if c.retry else "")
        return f"mtcl{c.batch}{nolm}{ren}{retry}{exp}"
    algs = (alg_token(a) for a in (c.ca or DEFAULT_CA, *c.cosigners))
    return "_".join([f"mtcs{c.batch}", *algs]) + exp


def untoken(part: str, algorithms: Mapping[str, str]) -> Any:
    """The canonical string an id part stands for, or None if the part is not one."""
    words = part.split("_")
    encoding = PLANTS_07
    if len(words) > 1 and words[-1] == _EXPERIMENTAL_WORD:
        words, encoding = words[:-1], EXPERIMENTAL
    head = words[0]
    kind = next((k for k, t in _TOKEN.items() if head.startswith(t)), None)
    if kind is None or not head[4:].isdigit():
        return None
    batch = int(head[4:])
    if kind == LANDMARK:
        rest = words[1:]
        held = not (rest[:1] == ["nolm"] and rest.pop(0))
        renewals = 1
        if rest[:1] and rest[0].startswith("ren") and rest[0][3:].isdigit():
            renewals = int(rest.pop(0)[3:])
        retry = rest == ["retry"]
        if rest not in ([], ["retry"]) or not 1 <= renewals <= MAX_RENEWALS:
            return None
        return Certificate(
            LANDMARK, batch, held=held, retry=retry, encoding=encoding, renewals=renewals
        ).spec
    if len(words) < 2 or any(w not in algorithms for w in words[1:]):
        return None
    algs = [algorithms[w] for w in words[1:]]
    return Certificate(STANDALONE, batch, algs[0], tuple(algs[1:]), encoding=encoding).spec


def store(spec: str) -> tuple[str, str, str, str, str, str]:
    """The store's columns: certificate (kind), mtc_batch ('0' for X.509), mtc_signers
    (the algorithms whose subtree signatures the certificate sent carries, CA first,
    comma-separated: 'none' for X.509 and a landmark-relative certificate),
    mtc_landmark_held ('yes', 'no'; 'n/a' unless landmark), mtc_encoding ('plants-07',
    'experimental'; 'n/a' for X.509), mtc_renewals (the landmark intervals whose
    landmark-relative MTCs the server holds: '1', or 'n/a' unless landmark)."""
    c = parse(spec)
    signers = c.signers
    held = "n/a"
    if c.kind == LANDMARK:
        held = ("yes" if c.held else "no") + (", retry" if c.retry else "")
    encoding = c.encoding if c.is_mtc else "n/a"
    renewals = str(c.renewals) if c.kind == LANDMARK else "n/a"
    return c.kind, str(c.batch), ",".join(signers) or "none", held, encoding, renewals


def describe(
    kind: str, batch: str, signers: str, held: str, encoding: str = "n/a", renewals: str = "n/a"
) -> str:
    """How a report names the value where the axis varies."""
    if kind == X509:
        return "X.509"
    what = f"{kind} 2^{int(batch).bit_length() - 1}" if _power_of_two(batch) else f"{kind} {batch}"
    if encoding == EXPERIMENTAL:
        what += " (experimental OIDs)"
    if kind == STANDALONE:
        return f"{what} signed {signers}"
    if renewals not in ("1", "n/a"):
        what += f", last {renewals} landmarks"
    if held.startswith("yes"):
        return what + (" (lagging clients retry)" if "retry" in held else "")
    return what + (" (landmark not held, retried)" if "retry" in held else " (landmark not held)")


def _power_of_two(batch: str) -> bool:
    n = int(batch)
    return n > 0 and n & (n - 1) == 0
