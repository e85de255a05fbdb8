"""The `served_chain` axis: what the server sends of its chain (the leaf, its
intermediates, the root), or the leaf alone to a client that trusts its issuer."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from chainlab.axes import stack as stacks
from chainlab.axes.algorithms import (
    DEFAULT_SERVED_CHAIN,
    ENGINE_CHAIN,
    INTERMEDIATE_ANCHOR,
    SERVED_CHAINS,
)
from chainlab.axes.axis import (
    NOT_MINE,
    Axis,
    AxisReader,
)
from chainlab.axes.handshake import Handshake, ScenarioLike

SERVED_TOKENS = SERVED_TOKENS = {
    "leaf": "served_leaf",
    "full": "served_full",
    "intermediate-anchor": "served_intanchor",
}


def _check_anchor(v: AxisReader, sid: str, h: Handshake, with_load: bool) -> None:
    """An intermediate can be the trust anchor only where the hierarchy has one."""
    depth = len(h.hierarchy)
    if h.parts["served_chain"] == INTERMEDIATE_ANCHOR and depth < 3:
        v.bad(
            "matrix",
            f"scenario {sid}: served_chain {INTERMEDIATE_ANCHOR!r} at depth {depth}: the "
            "leaf's issuer is no intermediate; allowed: depth 3 or 4 (exclude the others, "
            f'e.g. exclude = [{{ served_chain = "{INTERMEDIATE_ANCHOR}", depth = [1, 2] }}])',
        )


def _served_chain_client(chain: str, s: ScenarioLike, files: Any, _seed: int) -> list[str]:
    """A client of a server that sends less than the leaf's issuers."""
    if chain == "leaf" and s.depth >= 3:
        # The server omits the intermediates: the client gets them as untrusted path
        # material, as a browser with an intermediate cache would.
        return ["--untrusted", str(files.pki_dir / "intermediates.pem")]
    if chain == INTERMEDIATE_ANCHOR:
        # The Trust Anchor IDs model: the client trusts the leaf's issuer itself and
        # verifies the leaf alone (a partial chain, ending at a non-self-signed anchor).
        return ["--partial-chain"]
    return []


def _served(chain: str, h: Handshake) -> Handshake:
    """What the server sends (a trust-anchor intermediate's client gets the leaf alone),
    where the client's anchor sits, and the engine's --chain."""
    anchored = chain == INTERMEDIATE_ANCHOR
    return replace(
        h,
        sent="leaf" if anchored else chain,
        anchor_depth=len(h.hierarchy) - 2 if anchored else 0,
        engine_chain=ENGINE_CHAIN.get(chain, chain),
    )


SERVED_CHAIN = Axis(
    params_always=True,
    key="served_chain",
    label="served chain",
    default=DEFAULT_SERVED_CHAIN,
    read=SERVED_CHAINS,
    order={"intermediate-anchor": -1, "leaf": 0, "leaf+intermediates": 1, "full": 2},
    id_part=lambda v, _: SERVED_TOKENS[v],
    id_read=lambda p, _: {t: v for v, t in SERVED_TOKENS.items()}.get(p, NOT_MINE),
    id_help=", ".join(SERVED_TOKENS.values()),
    id_words=("served",),
    not_with_target=True,
    describe=lambda v: f"sends {v}",
    shape=_served,
    check=_check_anchor,
    client_flags=_served_chain_client,
    needs=lambda v, h: [
        *([stacks.need("client", "partial_chain")] if v == INTERMEDIATE_ANCHOR else []),
        *(
            [stacks.need("client", "untrusted_intermediates")]
            if v == "leaf" and len(h.hierarchy) >= 3
            else []
        ),
    ],
)
