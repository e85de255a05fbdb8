"""The `certificate` axis, declared here whole (its reader, rules, store columns and engine
flags; the registry is chainlab.axes): what the server authenticates with, an X.509 chain of
the scenario's hierarchy or a Merkle Tree Certificate for the same leaf key. What a value
says (`Certificate`, its canonical string, token, columns and size) is chainlab.axes.credential.

An MTC is written in draft -07's encoding (the IANA OIDs BoringSSL verifies, with an MTC
CA certificate) unless `encoding=experimental` asks for the early experiments' OIDs that
chainlab wrote before; stores made before the encoding was a column hold the latter.

Only BoringSSL implements the `trust_anchors` extension that lets a client say which
landmarks it holds (the `trust_anchors` axis, chainlab.axes.trust_anchors). Without it the
campaign states what the client holds instead, and the runner starts the server with the
certificate the draft's negotiation would pick for that client (the stand-in): the
landmark-relative one for a client holding the landmark, otherwise the standalone one
(CA-signed), which the draft allows sending without a signal. With `retry`, the client
instead gets the landmark-relative certificate first, fails it, and connects again for the
standalone one (the trust-anchor retry of draft-ietf-tls-trust-anchor-ids, asked for in the
SNI by the stand-in, in the extension with the axis); both connections are one attempt in its
record. The certificate the server sends without a signal is the same either way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from chainlab.axes import landmark_lag, rollout
from chainlab.axes.algorithms import DEFAULT_SERVED_CHAIN
from chainlab.axes.axis import NOT_MINE, Axis, AxisReader
from chainlab.axes.credential import (
    DEFAULT_CA,
    ENCODING_BEFORE_COLUMN,
    ENCODINGS,
    EXPERIMENTAL,
    KINDS,
    LANDMARK,
    MAX_BATCH,
    MAX_RENEWALS,
    MIN_BATCH,
    PLANTS_07,
    STANDALONE,
    TABLE_KEYS,
    X509,
    Certificate,
    describe,
    parse,
    store,
    token,
    untoken,
)
from chainlab.axes.stack import need
from chainlab.schema import fmt

if TYPE_CHECKING:
    from chainlab.axes.handshake import Handshake


def from_columns(row: Mapping[str, Any]) -> Certificate:
    """The certificate a stored scenario's columns describe (`store`'s columns): enough for
    what its client verifies and what it needs of the stacks."""
    kind = row.get("certificate", X509)
    if kind == X509 or not isinstance(kind, str):
        return Certificate(X509)
    signers = tuple(a for a in str(row.get("mtc_signers", "none")).split(",") if a != "none")
    held = str(row.get("mtc_landmark_held", "n/a"))
    encoding = str(row.get("mtc_encoding", ENCODING_BEFORE_COLUMN))
    renewals = str(row.get("mtc_renewals", "1"))
    return Certificate(
        kind, int(row.get("mtc_batch", 0)), signers[0] if kind == STANDALONE else None,
        signers[1:] if kind == STANDALONE else (), held.startswith("yes") or held == "n/a",
        "retry" in held, encoding if encoding in ENCODINGS else ENCODING_BEFORE_COLUMN,
        int(renewals) if renewals.isdigit() else 1,
    )  # fmt: skip


def renewals_before_column(row: Mapping[str, Any]) -> str:
    """The mtc_renewals of a scenario stored before the column existed: one landmark's MTC
    for a landmark-relative certificate (all chainlab issued then), 'n/a' otherwise."""
    return "1" if row.get("certificate", X509) == LANDMARK else "n/a"


def encoding_before_column(row: Mapping[str, Any]) -> str:
    """The mtc_encoding of a scenario stored before the column existed: the early
    experiments' for an MTC (the only encoding chainlab wrote then), 'n/a' for X.509."""
    return "n/a" if row.get("certificate", X509) == X509 else ENCODING_BEFORE_COLUMN


def read(v: AxisReader, item: Any, at: str) -> str | None:
    """A certificate: "x509", or a Merkle Tree Certificate's table { kind, batch, ca,
    cosigners, landmark_held, retry } (or its canonical string), read by the loader's
    validator `v` (chainlab.axes.axis.Reader)."""
    if isinstance(item, str):
        try:
            return parse(item).spec
        except ValueError as e:
            v.bad(
                at, f"{e}; allowed: 'x509' or a table such as "
                '{ kind = "mtc-landmark", batch = 4096 }',
            )  # fmt: skip
            return None
    t = v.table(item, at)
    v.keys(t, TABLE_KEYS, at)
    kind = v.string(t.get("kind"), f"{at}.kind", choices=KINDS)
    if kind is None:
        return None
    if kind == X509:
        extra = [k for k in t if k != "kind"]
        if extra:
            v.bad(f"{at}.{extra[0]}", "given with kind 'x509'; allowed: MTC kinds only")
        return X509
    if "batch" not in t:
        v.bad(f"{at}.batch", "missing; allowed: the log batch's entries, 2 to 2^26")
        return None
    batch = v.integer(t["batch"], f"{at}.batch", MIN_BATCH, MAX_BATCH)
    ca = v.resolve_alg(t["ca"], f"{at}.ca") if "ca" in t else DEFAULT_CA
    cosigners: list[str] = []
    for i, a in enumerate(v.listish(t.get("cosigners", []))):
        got = v.resolve_alg(a, f"{at}.cosigners[{i}]")
        if got is not None:
            cosigners.append(got)
    held, retry = t.get("landmark_held", True), t.get("retry", False)
    renewals = v.integer(t.get("renewals", 1), f"{at}.renewals", 1, MAX_RENEWALS)
    if "renewals" in t and kind != LANDMARK:
        v.bad(
            f"{at}.renewals",
            "given with kind 'mtc-standalone'; allowed: with kind 'mtc-landmark' (the "
            "landmark intervals whose landmark-relative MTCs the server holds)",
        )
        return None
    encoding = v.string(t.get("encoding", PLANTS_07), f"{at}.encoding", choices=ENCODINGS)
    for key, value in (("landmark_held", held), ("retry", retry)):
        if not isinstance(value, bool):
            v.bad(f"{at}.{key}", f"expected true or false, got {fmt(value)}")
    if retry is True and kind != LANDMARK:
        v.bad(
            f"{at}.retry",
            "allowed only with kind 'mtc-landmark' and landmark_held = false (the client "
            "that cannot use the landmark-relative certificate retries), or with a "
            "population whose kinds say which landmarks they hold",
        )
        return None
    if kind == LANDMARK and ("cosigners" in t or "ca" in t):
        key = "cosigners" if "cosigners" in t else "ca"
        v.bad(
            f"{at}.{key}",
            "given with kind 'mtc-landmark': a landmark-relative certificate carries no "
            "signatures; allowed: cosigners and ca with kind 'mtc-standalone'",
        )
        return None
    if kind == STANDALONE and "landmark_held" in t:
        v.bad(
            f"{at}.landmark_held",
            "given with kind 'mtc-standalone'; allowed: with kind 'mtc-landmark' (whether "
            "the client holds the landmark)",
        )
        return None
    if batch is None or ca is None or encoding is None or renewals is None:
        return None
    mtc = Certificate(
        kind, batch, ca if kind == STANDALONE else None, tuple(cosigners), held is not False,
        retry is True, encoding, renewals,
    )  # fmt: skip
    return mtc.spec


def check(v: AxisReader, sid: str, h: Handshake, with_load: bool) -> None:
    """A Merkle Tree Certificate is the only certificate sent: no served-chain policy. The
    retry runs over TCP, one attempt at a time (`h`: chainlab.axes.handshake)."""
    cert = h.credential
    if cert.retry and cert.held and not landmark_lag.lagging(rollout.population_of(h)):
        v.bad(
            "matrix",
            f"scenario {sid}: certificate retry with the landmark held and no population "
            "whose kinds say which landmarks they hold: nothing would retry; allowed: "
            "landmark_held = false with retry, or kinds with landmark_lag",
        )
    if cert.retry and (h.quic or with_load):
        v.bad(
            "matrix",
            f"scenario {sid}: certificate retry with "
            + ("[load]" if with_load else "transport 'quic'")
            + ": the retry runs over TCP without load steps; allowed: landmark_held = false "
            "without retry there, or exclude the scenario",
        )
    if cert.is_mtc and (h.sent, h.anchor_depth) != (DEFAULT_SERVED_CHAIN, 0):
        chain = "intermediate-anchor" if h.anchor_depth else h.sent
        v.bad(
            "matrix",
            f"scenario {sid}: served_chain {chain!r} with a Merkle Tree "
            "Certificate, which is sent alone; allowed: certificate 'x509' (exclude = "
            '[{ certificate = ["mtc-standalone", "mtc-landmark"], served_chain = '
            f'"{chain}" }}])',
        )


def needs(cert: Certificate, h: Handshake) -> list[tuple[str, str, str]]:
    """What serving and checking `cert` asks of the stacks: MTCs; a client that checks
    cosigners besides the CA or reads the early experiments' encoding; and, without the
    trust_anchors extension (`h`: the scenario's handshake), the SNI stand-in for the
    retry on both sides."""
    if not cert.is_mtc:
        return []
    out = [need("both", "mtc")]
    if cert.retry and h.anchors_requested is None:
        out.append(need("both", "mtc_retry"))
    if cert.sent == "standalone" and cert.cosigners:
        out.append(need("client", "mtc_cosigners"))
    if cert.encoding == EXPERIMENTAL:
        out.append(need("client", "mtc_experimental"))
    return out


def _shape(spec: str, h: Handshake) -> Any:
    """The credential, and the engine's --chain for a Merkle Tree Certificate (sent in
    place of the served chain's files)."""
    cert = parse(spec)
    return replace(h, credential=cert, engine_chain=cert.engine_chain or h.engine_chain)


def _trust(spec: str, files: Any) -> list[str] | None:
    """A client's trust anchors for a Merkle Tree Certificate (its CA's, in place of the
    hierarchy's root); None for X.509."""
    cert = parse(spec)
    return cert.client_flags(files.pki_dir) if cert.is_mtc else None


CERTIFICATE = Axis(
    key="certificate",
    label="certificate",
    default=X509,
    read=read,
    columns=(
        "certificate",
        "mtc_batch",
        "mtc_signers",
        "mtc_landmark_held",
        "mtc_encoding",
        "mtc_renewals",
    ),  # fmt: skip
    store=store,
    before_column={
        "mtc_encoding": encoding_before_column,
        "mtc_renewals": renewals_before_column,
    },
    order={X509: 0, STANDALONE: 1, LANDMARK: 2},
    id_part=token,
    id_read=lambda p, algs: untoken(p, algs) or NOT_MINE,
    id_help="mtcl<batch>[_nolm], mtcs<batch>_<ca>[_<cosigner>...]",
    not_with_target=True,
    where={"certificate": lambda v: {parse(v).kind}},
    where_read={"certificate": KINDS},
    shape=_shape,
    check=check,
    # A stack serves and checks MTCs only where it has them (chainlab.axes.stack).
    needs=lambda spec, h: needs(parse(spec), h),
    # The stand-in's retry flags; with the trust_anchors extension its axis gives them.
    server_flags=lambda spec, s, files: (
        parse(spec).server_flags() if s.handshake.anchors_requested is None else []
    ),
    client_flags=lambda spec, s, files, seed: (
        ["--mtc-retry"] if parse(spec).retry and s.handshake.anchors_requested is None else []
    ),
    trust=_trust,
    describe=describe,
)
