"""TLS stacks: each scenario on another stack set against the same scenario on OpenSSL 3.5,
and whether the paper's structural findings hold on each stack (docs/methods/stacks.md#tls-stacks).

Pairs (`per_pair`): the twin is the same scenario in every other axis (chainlab.analysis.
twins) with both sides on the reference stack. Per pair: latency, server and client CPU as
ratios of means with their intervals, and the bytes each side read and wrote.

Findings (`orderings`, `cost_split`), on scenarios whose two sides run one stack:
- ordering of placements: within each context (every axis but the hierarchy fixed), every
  pair of hierarchies the reference stack orders with confidence (the interval of the ratio
  of their means excludes 1) is checked on the other stack: the same order with confidence
  (agrees), the opposite with confidence (contradicts), or neither (undecided); Kendall's
  tau over all common hierarchies summarises the ranking;
- the client/server cost split: server CPU over client CPU per hierarchy (the summary's
  paired ratio over the same handshakes, `srv_cli_ratio`, with its interval), and whether
  the side that costs more is the same as on the reference stack.
"""

from __future__ import annotations

import itertools
import math

import pandas as pd

from chainlab import axes
from chainlab.analysis import twins
from chainlab.analysis.registry import produces
from chainlab.axes.stack import DEFAULT_STACK
from chainlab.stats import kendall_tau

# The stack every other one is read against.
REFERENCE_STACK = DEFAULT_STACK
# The measures a placement ordering is checked on: (summary column, name in the report).
ORDER_METRICS = (("mean_ms", "latency"), ("server_cpu_ms", "server CPU"))


def per_pair(summary: pd.DataFrame, level: float) -> pd.DataFrame:
    """One row per successful scenario off the reference stack with a successful twin on it."""
    rows = []
    for r, twin in twins.pairs(summary, "stack", REFERENCE_STACK):
        lat = twins.ratio(r, twin, "mean_ms", level)
        srv = twins.ratio(r, twin, "server_cpu_ms", level)
        cli = twins.ratio(r, twin, "client_cpu_ms", level)
        rows.append(
            {
                "scenario_id": r["scenario_id"],
                "twin_id": twin["scenario_id"],
                "stack": r["stack"],
                "client_stack": r["client_stack"],
                "server_stack": r["server_stack"],
                "hierarchy": r["hierarchy"],
                "kex": r["kex"],
                "network": r["network"],
                "mean_ms": r["mean_ms"],
                "twin_mean_ms": twin["mean_ms"],
                "server_cpu_ms": r["server_cpu_ms"],
                "twin_server_cpu_ms": twin["server_cpu_ms"],
                "client_cpu_ms": r["client_cpu_ms"],
                "twin_client_cpu_ms": twin["client_cpu_ms"],
                **_named("latency_ratio", lat),
                **_named("server_cpu_ratio", srv),
                **_named("client_cpu_ratio", cli),
                # The same ratios in instructions, where counted
                # (docs/methods/instructions.md#instructions-per-handshake).
                **twins.instruction_ratios(
                    r,
                    twin,
                    level,
                    {**_named("server_cpu_ratio", srv), **_named("client_cpu_ratio", cli)},
                ),
                "bytes_read": r["bytes_read"],
                "twin_bytes_read": twin["bytes_read"],
                "bytes_written": r["bytes_written"],
                "twin_bytes_written": twin["bytes_written"],
            }
        )
    if not rows:
        return pd.DataFrame()
    return pd.DataFrame(rows).sort_values(["stack", "hierarchy", "kex"]).reset_index(drop=True)


def orderings(summary: pd.DataFrame, level: float) -> pd.DataFrame:
    """Per stack and measure: whether the reference stack's ordering of placements holds."""
    by_stack = _single_stack_contexts(summary)
    ref = by_stack.pop(REFERENCE_STACK, {})
    rows = []
    for stack, contexts in sorted(by_stack.items()):
        for metric, name in ORDER_METRICS:
            agree = contradict = undecided = 0
            ref_means, stack_means = [], []
            for ctx, hier in contexts.items():
                base = ref.get(ctx, {})
                common = sorted(set(hier) & set(base))
                ref_means += [base[h][metric] for h in common]
                stack_means += [hier[h][metric] for h in common]
                for a, b in itertools.combinations(common, 2):
                    ref_sign = _sign(twins.ratio(base[a], base[b], metric, level))
                    if ref_sign == 0:
                        continue
                    got = _sign(twins.ratio(hier[a], hier[b], metric, level))
                    if got == ref_sign:
                        agree += 1
                    elif got == -ref_sign:
                        contradict += 1
                    else:
                        undecided += 1
            if not ref_means:
                continue
            rows.append(
                {
                    "stack": stack,
                    "measure": name,
                    "hierarchies": len(ref_means),
                    "ordered_pairs": agree + contradict + undecided,
                    "agree": agree,
                    "contradict": contradict,
                    "undecided": undecided,
                    "kendall_tau": kendall_tau(ref_means, stack_means),
                    "holds": agree > 0 and contradict == 0,
                }
            )
    return pd.DataFrame(rows)


def cost_split(summary: pd.DataFrame) -> pd.DataFrame:
    """Server over client CPU per hierarchy (the summary's paired `srv_cli_ratio`), on each
    stack and on the reference."""
    by_stack = _single_stack_contexts(summary)
    ref = by_stack.get(REFERENCE_STACK, {})
    split = ("srv_cli_ratio", "srv_cli_ratio_lo", "srv_cli_ratio_hi")
    rows = []
    for stack, contexts in sorted(by_stack.items()):
        for ctx, hier in contexts.items():
            for h, r in sorted(hier.items()):
                base = ref.get(ctx, {}).get(h)
                own = tuple(r[k] for k in split)
                theirs = tuple(base[k] for k in split) if base is not None else (math.nan,) * 3
                a, b = _sign(own), _sign(theirs)
                rows.append(
                    {
                        "stack": stack,
                        "scenario_id": r["scenario_id"],
                        "hierarchy": r["hierarchy"],
                        "kex": r["kex"],
                        "server_cpu_ms": r["server_cpu_ms"],
                        "client_cpu_ms": r["client_cpu_ms"],
                        **_named("split", own),
                        **_named("reference_split", theirs),
                        # Which side costs more agrees with the reference (None: either is
                        # undecided, or no reference twin).
                        "same_side": None if a == 0 or b == 0 else a == b,
                    }
                )
    return pd.DataFrame(rows)


def _single_stack_contexts(summary: pd.DataFrame) -> dict[str, dict[tuple, dict[str, dict]]]:
    """stack -> context -> hierarchy key -> summary row, for successful scenarios whose two
    sides run one stack. A context is every identity column but the hierarchy's and the
    stacks'; a hierarchy key is its algorithm at each position."""
    if summary.empty or "stack" not in summary:
        return {}
    ok = summary[(summary["status"] == "ok") & (summary["client_stack"] == summary["server_stack"])]
    positions = axes.HIERARCHY.column_names
    skip = {*positions, *axes.STACK.column_names}
    context_cols = [k for k in twins.identity() if k not in skip and k in ok]
    out: dict[str, dict[tuple, dict[str, dict]]] = {}
    for r in ok.to_dict("records"):
        ctx = tuple(None if pd.isna(r[k]) else r[k] for k in context_cols)
        h = " › ".join(str(r[p]) for p in positions[1:] if not pd.isna(r[p]))
        out.setdefault(r["client_stack"], {}).setdefault(ctx, {})[h] = r
    return out


def _sign(interval: tuple[float, float, float]) -> int:
    """+1 / -1 when a ratio's interval lies wholly above / below 1, else 0."""
    _, lo, hi = interval
    if lo > 1:
        return 1
    if hi < 1:
        return -1
    return 0


def _named(name: str, interval: tuple[float, float, float]) -> dict:
    est, lo, hi = interval
    return {name: est, f"{name}_lo": lo, f"{name}_hi": hi}


@produces("stacks")
def _analysis_stacks(a) -> pd.DataFrame:
    return per_pair(a.summary, a.config.confidence_level)


@produces("stack_orderings")
def _analysis_stack_orderings(a) -> pd.DataFrame:
    return orderings(a.summary, a.config.confidence_level)


@produces("stack_cost_split")
def _analysis_stack_cost_split(a) -> pd.DataFrame:
    return cost_split(a.summary)
