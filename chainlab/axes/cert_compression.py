"""The `cert_compression` axis: the certificate compression (RFC 8879) the client offers."""

from __future__ import annotations

from dataclasses import replace

from chainlab.axes.algorithms import (
    CERT_COMPRESSIONS,
)
from chainlab.axes.axis import (
    NOT_MINE,
    Axis,
)
from chainlab.axes.handshake import Handshake

DEFAULT_CERT_COMPRESSION = "none"
# What offering compression adds to the ClientHello: its compress_certificate extension (the
# engine's records, bytes_written, OpenSSL 3.5.5: chainlab.model.flights).
CLIENT_COMPRESSION_EXTRA = 7


def shape(value: str, h: Handshake) -> Handshake:
    """The handshake offering `value`: its compression and the extension's bytes."""
    extra = 0 if value == DEFAULT_CERT_COMPRESSION else CLIENT_COMPRESSION_EXTRA
    return replace(h, compression=value, client_hello_extra=h.client_hello_extra + extra)


CERT_COMPRESSION = Axis(
    params_always=True,
    key="cert_compression",
    label="certificate compression",
    default=DEFAULT_CERT_COMPRESSION,
    read=CERT_COMPRESSIONS,
    order={"none": 0},
    id_part=lambda v, _: v,
    id_read=lambda p, _: p if p in CERT_COMPRESSIONS and p != "none" else NOT_MINE,
    id_help=", ".join(c for c in CERT_COMPRESSIONS if c != "none"),
    id_words=CERT_COMPRESSIONS,
    flags=lambda v: ["--cert-compression", v],
    describe=lambda v: f"comp {v}",
    shape=shape,
)
