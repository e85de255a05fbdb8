"""The `trust_anchors` axis, declared here whole (the registry is chainlab.axes):
the trust_anchors extension (draft-ietf-tls-trust-anchor-ids-06) a client sends, BoringSSL's
own or the OpenSSL engine's through libssl's custom extension callbacks (docs/stacks.md);
rustls has none.

A value is `"sni"` (the default: no extension; a Merkle Tree Certificate's negotiation is the
campaign's stand-in, chainlab.axes.certificate) or how many trust anchor IDs the
ClientHello requests: 0 sends the extension with an empty list (as Chrome 141 does), 28 as
many IDs as Chrome 152. The client requests its own IDs first (its landmark's when it holds
the landmark, the CA's when it takes the standalone MTC; none when it will retry), then IDs of
other CAs (`32473.99.<i>`) up to the number. With an MTC the server offers the
landmark-relative certificate under its landmark's ID and the standalone one under the CA's,
and sends the certificate the stand-in would (the `certificate` value's) to a client that
requests neither; a client that retries asks again for the one of the server's available IDs
it trusts. With X.509 only the ClientHello changes: the server's chain carries no ID.

With a population whose kinds hold landmarks (chainlab.axes.landmark_lag) the number is the
IDs of other CAs each kind requests besides its own, which the engine derives per kind.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from chainlab.axes import landmark_lag, rollout
from chainlab.axes.axis import NOT_MINE, Axis, AxisReader, Recorded
from chainlab.axes.stack import need
from chainlab.schema import fmt

if TYPE_CHECKING:
    from chainlab.axes.handshake import Handshake, ScenarioLike

STAND_IN = "sni"
# The most IDs a campaign may request: 1,000 filler IDs of 6 or 7 bytes each stay well
# within the extension's 65,535 bytes (the engine refuses more).
MAX_IDS = 1000
_TOKEN = re.compile(r"tai(\d+)")


def read(v: AxisReader, item: Any, at: str) -> str | None:
    """'sni', or a number of IDs 0 to MAX_IDS (kept as its decimal string)."""
    if item == STAND_IN:
        return STAND_IN
    if isinstance(item, bool) or not isinstance(item, int) or not 0 <= item <= MAX_IDS:
        v.bad(
            at,
            f"bad value {fmt(item)}; allowed: 'sni' (no extension: the stand-in) or the number "
            f"of trust anchor IDs the client requests, 0 to {MAX_IDS} (0: an empty list)",
        )
        return None
    return str(item)


def requested(value: str) -> int | None:
    """The number of IDs a value requests; None for the stand-in."""
    return None if value == STAND_IN else int(value)


def _client_flags(value: str, s: ScenarioLike, files: Any, seed: int) -> list[str]:
    """The client's request: its own IDs first, then filler IDs up to the number; and the
    retry where the certificate says the client retries."""
    n = requested(value)
    if n is None:
        return []
    cert = s.handshake.credential
    if landmark_lag.lagging(rollout.population_of(s.handshake)):
        return landmark_lag.client_flags(n, cert.retry)
    own = list(cert.own_ids[:n])
    flags = ["--trust-anchors", ",".join(own), "--trust-anchors-filler", str(n - len(own))]
    return flags + (["--trust-anchor-retry"] if cert.retry else [])


def _needs(value: str, h: Handshake) -> list[tuple[str, str, str]]:
    if requested(value) is None:
        return []
    # The server's side only where it has IDs to offer (an MTC's).
    return [need("both" if h.credential.is_mtc else "client", "trust_anchors")]


def check(v: AxisReader, sid: str, h: Handshake, with_load: bool) -> None:
    """What neither engine carries the extension over: QUIC (BoringSSL's engine has no QUIC;
    the OpenSSL engine's QUIC connections do not carry its custom extension), and a server
    choosing by ID with a pre-compressed Certificate message (which cannot carry the
    per-connection match). And a population whose kinds hold landmarks (its rules are
    chainlab.axes.landmark_lag's)."""
    landmark_lag.check(v, sid, h, with_load)
    if requested(h.parts["trust_anchors"]) is None:
        return
    if h.quic:
        v.bad(
            "matrix",
            f"scenario {sid}: trust_anchors with transport 'quic': the engines carry the "
            "extension over TCP only; allowed: transport 'tcp' or trust_anchors 'sni'",
        )
    if h.credential.is_mtc and h.compression != "none":
        v.bad(
            "matrix",
            f"scenario {sid}: trust_anchors with an MTC and cert_compression "
            f"{h.compression!r}: a server choosing by trust anchor ID sends its Certificate "
            "uncompressed; allowed: cert_compression 'none' or trust_anchors 'sni'",
        )


def describe(value: str) -> str:
    n = requested(value)
    return "no trust_anchors" if n is None else f"trust_anchors {n} ID{'s' if n != 1 else ''}"


# What the client records of the extension (of the retry's connection, after a retry): the
# IDs its ClientHello requested, whether the server said its certificate matched one, the
# IDs of the server's available list. NULL without the extension (and before version 11).
RECORDED = (
    Recorded("trust_anchors_requested", "INTEGER", "client", "trust_anchors_requested"),
    Recorded("trust_anchor_matched", "BOOLEAN", "client", "trust_anchor_matched"),
    Recorded("trust_anchors_available", "INTEGER", "client", "trust_anchors_available"),
)
# Per scenario that sent the extension or retried (an MTC's retry): the IDs requested and
# available, the share the server matched and the share that connected twice, over every
# measured attempt (failed ones too: a refusal is what the negotiation can end in); the
# client's bytes written, of the attempts that completed.
ANCHORS_FRAME = """
SELECT scenario_id,
    count(*) AS n_attempts,
    avg(trust_anchors_requested) AS trust_anchors_requested,
    avg(CASE WHEN trust_anchor_matched THEN 1.0 ELSE 0.0 END) AS matched_share,
    avg(trust_anchors_available) AS trust_anchors_available,
    avg(CASE WHEN retried THEN 1.0 ELSE 0.0 END) AS retried_share,
    avg(CASE WHEN outcome = 'ok' THEN bytes_written END) AS ok_bytes_written
FROM measured
WHERE trust_anchors_requested IS NOT NULL OR retried
GROUP BY scenario_id
"""

TRUST_ANCHORS = Axis(
    key="trust_anchors",
    label="trust anchor IDs requested",
    default=STAND_IN,
    read=read,
    order={STAND_IN: -1},
    id_part=lambda v, _: None if v == STAND_IN else f"tai{v}",
    id_read=lambda p, _: m.group(1) if (m := _TOKEN.fullmatch(p)) else NOT_MINE,
    id_help="tai<number of IDs>",
    not_with_target=True,
    shape=lambda v, h: replace(h, anchors_requested=requested(v)),
    needs=_needs,
    check=check,
    server_flags=lambda v, s, files: (
        ["--trust-anchor-ids"] if requested(v) is not None and s.handshake.credential.is_mtc else []
    ),
    client_flags=_client_flags,
    describe=describe,
    recorded=RECORDED,
    frames={"anchors": ANCHORS_FRAME},
)
