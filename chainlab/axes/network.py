"""The `network` axis: loopback, or a [network.<name>] profile the run emulates on a link
between namespaces (chainlab.network)."""

from __future__ import annotations

from chainlab.axes.axis import (
    NOT_MINE,
    Axis,
)
from chainlab.network.profile import LOOPBACK

NETWORK = Axis(
    key="network",
    label="network",
    default=LOOPBACK,
    read=lambda v, item, at: v.string(item, at, choices=[LOOPBACK, *v.declared_networks]),
    order={LOOPBACK: 0},
    id_part=lambda n, _: f"net_{n}",
    id_read=lambda p, _: p[4:] if p.startswith("net_") else NOT_MINE,
    id_help="net_<profile>",
    id_words=("net",),
    describe=str,
    structural=True,
)
