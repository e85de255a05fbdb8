"""The `handshake_mode` axis: full handshakes, resumed ones, or a mix resuming a share
(`resumption_ratio` in a matrix is the same axis)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from chainlab.axes import stack as stacks
from chainlab.axes.algorithms import (
    MIX_ALLOWED,
    MIX_RE,
    is_handshake_mode,
    mode_of_ratio,
)
from chainlab.axes.axis import (
    NOT_MINE,
    Axis,
    AxisReader,
)
from chainlab.axes.handshake import ScenarioLike
from chainlab.schema import fmt

DEFAULT_HANDSHAKE_MODE = "full"

# A matrix may give its handshake modes as resumption ratios instead (0 full, 1 resumed).
RATIO_KEY = "resumption_ratio"


def read_ratios(v: AxisReader, raw: Any, at: str) -> list[str]:
    """`resumption_ratio = [0, 0.5, 0.9]`: the handshake modes these ratios are."""
    items = v.listish(raw)
    if not items:
        v.bad(at, "empty array; allowed: at least one value")
    modes = []
    for i, item in enumerate(items):
        iat = f"{at}[{i}]" if isinstance(raw, list) else at
        mode = None
        if isinstance(item, int | float) and not isinstance(item, bool):
            mode = mode_of_ratio(float(item))
        if mode is None:
            v.bad(
                iat,
                f"bad value {fmt(item)}; allowed: a share from 0 to 1 in whole per cent "
                "(0, 0.5, 0.9, 0.99, 1)",
            )
        elif mode not in modes:
            modes.append(mode)
    return modes


def read_modes(v: AxisReader, m: Mapping[str, Any], at: str) -> list[str] | None:
    """A matrix's handshake modes: `handshake_mode`, or `resumption_ratio` (not both)."""
    if RATIO_KEY not in m:
        return v.axis_values(HANDSHAKE_MODE, m, at)
    modes = read_ratios(v, m[RATIO_KEY], f"{at}.{RATIO_KEY}")
    if HANDSHAKE_MODE.key in m:
        v.bad(
            f"{at}.{RATIO_KEY}",
            "given with handshake_mode; allowed: one of the two (a ratio of 0 is "
            "handshake_mode 'full', 1 'resumed')",
        )
        return None
    return modes or None


def read_handshake_mode(v: AxisReader, item: Any, at: str) -> str | None:
    """A handshake mode: full, resumed, or a resumption mix resumeNN."""
    got = v.string(item, at, what="a handshake mode")
    if got is not None and not is_handshake_mode(got):
        v.bad(at, f"bad value {fmt(got)}; allowed: {MIX_ALLOWED}")
        return None
    return None if got is None else str(got)


def _resumption_client(mode: str, s: ScenarioLike, files: Any, seed: int) -> list[str]:
    if mode == "resumed":
        return ["--resume"]
    if mode == DEFAULT_HANDSHAKE_MODE:
        return []
    # A resumption mix: each handshake offers the ticket with the scenario's ratio, seeded
    # per batch so a rerun with the run's seed repeats the mix.
    return ["--resume-ratio", f"{s.handshake.resumed_share:g}", "--resume-seed", str(seed)]


HANDSHAKE_MODE = Axis(
    params_always=True,
    key="handshake_mode",
    label="handshake mode",
    default=DEFAULT_HANDSHAKE_MODE,
    read=read_handshake_mode,
    order={"full": 0, "resumed": 1},
    id_part=lambda v, _: v,
    id_read=lambda p, _: p if p == "resumed" or MIX_RE.match(p) else NOT_MINE,
    id_help="resumed, resume<NN>",
    id_words=("resumed", "full"),
    matrix_read=lambda v, m, at: read_modes(v, m, at),
    matrix_keys=(RATIO_KEY,),
    describe=str,
    shape=lambda mode, h: replace(h, mode=mode),
    server_flags=lambda mode, s, files: ["--tickets", "0" if mode == "full" else "1"],
    client_flags=_resumption_client,
    needs=lambda v, _: [stacks.need("client", "resumption_mix")] if MIX_RE.match(v) else [],
)
