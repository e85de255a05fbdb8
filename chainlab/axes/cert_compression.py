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

DEFAULT_CERT_COMPRESSION = "none"

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
    shape=lambda v, h: replace(h, compression=v),
)
