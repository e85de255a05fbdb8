"""Composite ML-DSA by position (docs/methods/families.md#composite): where in a hierarchy
a composite signature (an ML-DSA and a traditional component, both of which must verify)
buys its conservatism, and what each placement costs against the pure ML-DSA hierarchy.

Per context (key exchange, network, stack, levers, depth; full handshakes only: a resumed
one carries no certificate) the base is the hierarchy of one pure ML-DSA algorithm at every
position; every other hierarchy of the context is a placement, described by what it puts
where it differs from the base (a composite at the root, the intermediate, the leaf or all
of them; an SLH-DSA root; ECDSA throughout). Each placement's latency, server CPU, client
CPU and bytes to the client are read against the base as ratios of means with their
intervals (`twins.ratio`: independent means on the log scale).

Which placement gives the conservatism for the least cost: among the placements that hold a
composite (a traditional component that must also verify), the least latency ratio; `clear`
says whether its interval lies wholly below the runner-up's.
"""

from __future__ import annotations

import pandas as pd

from chainlab.analysis import twins
from chainlab.analysis.by_position import ALG_COLUMNS, METRICS, contexts
from chainlab.analysis.by_position import POSITION_NAMES as _NAMES
from chainlab.analysis.families import POSITIONS, family
from chainlab.analysis.registry import produces


def _chain(r: dict) -> tuple[tuple[str, str], ...]:
    """(position, algorithm) of every position present, top-down."""
    present = [p for p in POSITIONS if isinstance(r.get(ALG_COLUMNS[p]), str)]
    return tuple((p, r[ALG_COLUMNS[p]]) for p in present)


def describe(chain, base: str) -> str:
    """A placement in words: what it puts where the pure base hierarchy has `base`."""
    changed = [(p, a) for p, a in chain if a != base]
    algs = {a for _, a in changed}
    if len(changed) == len(chain) and len(algs) == 1:
        (alg,) = algs
        return f"{alg} at every position"
    return ", ".join(f"{a} {_NAMES[p]}" for p, a in changed)


def placements(summary: pd.DataFrame, level: float) -> pd.DataFrame:
    """One row per placement read against its context's pure ML-DSA hierarchy, in a store
    that measured a composite placement against its base in some context (the other
    contexts' placements, such as an SLH-DSA root on a stack without composites, beside
    them); empty otherwise."""
    if summary.empty or "root_alg" not in summary:
        return pd.DataFrame()
    rows = []
    for records in contexts(summary):
        bases = [
            r
            for r in records
            if len({a for _, a in _chain(r)}) == 1 and family(_chain(r)[0][1]) == "ml-dsa"
        ]
        if not bases:
            continue
        base = bases[0]
        base_alg = _chain(base)[0][1]
        for r in records:
            if r is base or r in bases:
                continue
            chain = _chain(r)
            composite = [_NAMES[p] for p, a in chain if family(a) == "composite"]
            row = {
                "scenario_id": r["scenario_id"],
                "base_id": base["scenario_id"],
                "network": r["network"],
                "stack": r["stack"],
                "kex": r["kex"],
                "depth": int(r["depth"]),
                "base": base_alg,
                "placement": describe(chain, base_alg),
                "composite_positions": ", ".join(composite),
                "conservative": bool(composite),
            }
            for col, _ in METRICS:
                row[col] = r[col]
                row[f"{col}_base"] = base[col]
                (
                    row[f"{col}_ratio"],
                    row[f"{col}_ratio_lo"],
                    row[f"{col}_ratio_hi"],
                ) = twins.ratio(r, base, col, level)
            rows.append(row)
    if not any(r["conservative"] for r in rows):
        return pd.DataFrame()
    out = pd.DataFrame(rows)
    return out.sort_values(
        ["network", "stack", "depth", "conservative", "mean_ms_ratio"],
        ascending=[True, True, True, False, True],
    ).reset_index(drop=True)


def cheapest(table: pd.DataFrame) -> pd.DataFrame:
    """Per (network, stack, depth): the composite placement with the least latency ratio,
    whether its interval lies wholly below the runner-up's, and that runner-up."""
    if table.empty:
        return pd.DataFrame()
    rows = []
    comp = table[table["conservative"]]
    for (net, stack, depth), g in comp.groupby(["network", "stack", "depth"], sort=True):
        g = g.sort_values("mean_ms_ratio")
        first = g.iloc[0]
        second = g.iloc[1] if len(g) > 1 else None
        rows.append(
            {
                "network": net,
                "stack": stack,
                "depth": depth,
                "placement": first["placement"],
                "scenario_id": first["scenario_id"],
                **{
                    f"{col}_ratio{s}": first[f"{col}_ratio{s}"]
                    for col, _ in METRICS
                    for s in ("", "_lo", "_hi")
                },
                "runner_up": None if second is None else second["placement"],
                "clear": second is not None
                and first["mean_ms_ratio_hi"] < second["mean_ms_ratio_lo"],
            }
        )
    return pd.DataFrame(rows)


@produces("composite_placements")
def _analysis_placements(a) -> pd.DataFrame:
    return placements(a.summary, a.config.confidence_level)


@produces("composite_cheapest")
def _analysis_cheapest(a) -> pd.DataFrame:
    return cheapest(a.composite_placements)
