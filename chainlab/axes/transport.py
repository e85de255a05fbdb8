"""The `transport` axis: TCP, or QUIC carrying the handshake."""

from __future__ import annotations

from dataclasses import replace

from chainlab.axes import stack as stacks
from chainlab.axes.algorithms import (
    DEFAULT_TRANSPORT,
    TRANSPORTS,
)
from chainlab.axes.axis import (
    NOT_MINE,
    Axis,
    AxisReader,
)
from chainlab.axes.handshake import Handshake


def _check_transport(v: AxisReader, sid: str, h: Handshake, with_load: bool) -> None:
    """QUIC scenarios: what the engine's QUIC transport does not do yet is refused here,
    never found failing at run time (docs/engine-records.md, "QUIC")."""
    if not h.quic or h.target is None:
        return
    v.bad(
        "matrix",
        f"scenario {sid}: transport 'quic' with target {h.target!r}: targets are "
        "probed over TCP; allowed: transport 'tcp' for targets (exclude = [{ transport "
        f'= "quic", target = "{h.target}" }}])',
    )


TRANSPORT = Axis(
    key="transport",
    label="transport",
    default=DEFAULT_TRANSPORT,
    read=TRANSPORTS,
    id_part=lambda v, _: v,
    id_read=lambda p, _: p if p in TRANSPORTS and p != DEFAULT_TRANSPORT else NOT_MINE,
    id_help=", ".join(t for t in TRANSPORTS if t != DEFAULT_TRANSPORT),
    id_words=TRANSPORTS,
    flags=lambda v: ["--transport", v],
    describe=str,
    shape=lambda v, h: replace(h, quic=v == "quic"),
    check=_check_transport,
    needs=lambda v, _: [stacks.need("both", "quic")] if v != DEFAULT_TRANSPORT else [],
)
