"""The cost model from stored rows (chainlab.model.cost): the primitives' timings by
implementation, each stack's overhead lines fitted on its reference handshakes (over TCP and
over QUIC), what each stack's path references measured beyond loopback and what its wait
reference's client paid beyond its overhead line
(docs/methods/cost-model.md#cost-model).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from chainlab.axes.stack import DEFAULT_STACK
from chainlab.model import host_speed, implementations
from chainlab.model.cost import (
    SIDES,
    CostModel,
    Line,
    MissingPrimitive,
    Overhead,
    Pricing,
    Timing,
    TimingKey,
    by_implementation,
    operations,
    predict,
)
from chainlab.model.reference_specs import (
    PATH_BASE_PREFIX,
    PATH_PREFIX,
    PATH_REFERENCES,
    PEER_REFERENCE,
    REFERENCE_PREFIX,
    REFERENCES,
    TRANSPORT_PREFIX,
    WAIT_REFERENCE,
    overhead_key,
    path_profile,
    peer_of,
    reference_spec,
    transport_of,
)
from chainlab.stats import se_mean

# A stack's reference handshakes as measured: (name, mode) -> {latency, client, server,
# their standard errors, kib, n}.
References = dict[tuple[str, str], dict[str, float]]
# A reference's residual beyond its primitives: {metric: (ms, se), "kib": float}.
Residual = dict[str, Any]


def model_from_summary(rows: Iterable[Mapping[str, Any]], source: str) -> CostModel:
    """A CostModel from the per-primitive summary a store gives (`Store.primitive_summary`:
    one row per implementation, subject, op and message with n, cpu_mean, cpu_var,
    wall_mean, wall_var, server_mean, server_var, kib). CPU time is the primitives' cost (on
    an idle core wall and CPU agree; a shared core shows in wall only). A row without an
    implementation (a store before schema 13) was measured by the OpenSSL 3.5 engine
    (implementations.unrecorded: liboqs' for its families, OpenSSL 3.5's otherwise), and a
    reference handshake without one on OpenSSL 3.5; a reference handshake's implementation is
    the stack that ran it. Every figure is brought to one host speed first (`host_mean`, the
    host reference workload's reading around each: chainlab.model.host_speed)."""
    rows, host_ns = host_speed.normalised(rows)
    timings: dict[TimingKey, Timing] = {}
    # By stack, or (stack, transport) until each is filed under its overhead key below.
    refs: dict[str | tuple[str, str], References] = {}
    paths: dict[tuple[str, str], References] = {}
    twins: dict[tuple[str, str], References] = {}
    peers: dict[tuple[str, str], References] = {}
    for r in rows:
        n = int(r["n"])
        got = r.get("implementation")
        recorded = got if isinstance(got, str) and got else None
        message = r["message"] if isinstance(r["message"], str) else None
        subject, op = str(r["subject"]), str(r["op"])
        if subject.startswith(REFERENCE_PREFIX):
            impl = recorded or DEFAULT_STACK
            name = str(r["subject"])[len(REFERENCE_PREFIX) :]
            if message is not None and message.startswith(PATH_PREFIX):
                into = paths.setdefault((impl, path_profile(message)), {})
            elif message is not None and message.startswith(PATH_BASE_PREFIX):
                into = twins.setdefault((impl, path_profile(message)), {})
            elif (peer := peer_of(message)) is not None:
                into = peers.setdefault((peer, impl), {})
            elif message is not None and message.startswith(TRANSPORT_PREFIX):
                into = refs.setdefault((impl, transport_of(message)), {})
            else:
                into = refs.setdefault(impl, {})
            into[(name, op)] = {
                "n": n,
                "latency": r["wall_mean"] / 1e6,
                "latency_se": _se(r["wall_var"], n) / 1e6,
                "client": r["cpu_mean"] / 1e6,
                "client_se": _se(r["cpu_var"], n) / 1e6,
                "server": r["server_mean"] / 1e6,
                "server_se": _se(r["server_var"], n) / 1e6,
                "kib": float(r["kib"]),
            }
            continue
        impl = recorded or implementations.unrecorded(subject, op)
        timings[(impl, subject, op, message)] = Timing(
            r["cpu_mean"] / 1e6, _se(r["cpu_var"], n) / 1e6, n
        )
    overheads = {k: fit_overhead(m, timings, k) for k, m in refs.items() if isinstance(k, str)}
    for (stack, transport), m in [(k, m) for k, m in refs.items() if isinstance(k, tuple)]:
        # A resumed handshake over another transport is priced with the TCP line.
        over = fit_overhead(m, timings, stack)
        resumed = overheads[stack].resumed if stack in overheads else over.resumed
        overheads[overhead_key(stack, transport)] = Overhead(over.full, resumed)
        refs[overhead_key(stack, transport)] = refs.pop((stack, transport))
    stack_refs = {k: m for k, m in refs.items() if isinstance(k, str)}
    waits = wait_extras(stack_refs, timings, overheads)
    return CostModel(
        timings,
        overheads,
        source,
        stack_refs,
        path_extras(paths, stack_refs, twins),
        peer_extras(peers, stack_refs),
        waits,
        host_ns,
    )


def wait_extras(
    refs: Mapping[str, References],
    timings: Mapping[TimingKey, Timing],
    overheads: Mapping[str, Overhead],
) -> dict[str, dict[str, float]]:
    """Per stack: its wait reference's client CPU beyond its primitives (as the stack runs
    them) and the stack's full overhead line at the bytes it carried, with its standard
    error (WAIT_REFERENCE)."""
    out = {}
    for stack, m in refs.items():
        if stack not in overheads:
            continue
        res = reference_residuals(
            {k: v for k, v in m.items() if k[0] == WAIT_REFERENCE}, timings, stack
        ).get((WAIT_REFERENCE, "full"))
        if res is None:
            continue
        line = overheads[stack].full["client"]
        client, se = res["client"]
        out[stack] = {
            "client": client - line.at(res["kib"]),
            "client_se": math.hypot(se, line.se_ms),
        }
    return out


def path_extras(
    paths: Mapping[tuple[str, str], References],
    refs: Mapping[str, References],
    twins: Mapping[tuple[str, str], References] | None = None,
) -> dict[tuple[str, str], dict[str, Line]]:
    """Per (stack, profile): per side, a line in KiB carried through what each of its path
    references (PATH_REFERENCES) cost beyond its loopback twin taken around it (PATH_BASE_PREFIX;
    a store before 2026-11-29 has none: beyond the stack's loopback reference), at the
    loopback one's bytes, with standard errors; flat through one."""
    out = {}
    for (stack, profile), got in paths.items():
        points: list[Residual] = []
        for key in PATH_REFERENCES:
            twin = (twins or {}).get((stack, profile), {}).get(key)
            loop, there = twin or refs.get(stack, {}).get(key), got.get(key)
            if loop is None or there is None:
                continue
            points.append(
                {"kib": loop["kib"]}
                | {
                    side: (
                        there[side] - loop[side],
                        math.hypot(there[f"{side}_se"], loop[f"{side}_se"]),
                    )
                    for side in SIDES
                }
            )
        if points:
            points.sort(key=lambda p: p["kib"])
            out[(stack, profile)] = {side: kib_line(points, side) for side in SIDES}
    return out


def peer_extras(
    peers: Mapping[tuple[str, str], References], refs: Mapping[str, References]
) -> dict[tuple[str, str], dict[str, float]]:
    """Per (client stack, server stack): what the pair's reference (PEER_REFERENCE) cost each
    side beyond the same reference between each side's own stack, with standard errors."""
    out = {}
    for (client, server), got in peers.items():
        pair = got.get(PEER_REFERENCE)
        mine = refs.get(client, {}).get(PEER_REFERENCE)
        theirs = refs.get(server, {}).get(PEER_REFERENCE)
        if pair is None or mine is None or theirs is None:
            continue
        own = {"client": mine, "server": theirs}
        out[(client, server)] = {side: pair[side] - own[side][side] for side in SIDES} | {
            f"{side}_se": math.hypot(pair[f"{side}_se"], own[side][f"{side}_se"]) for side in SIDES
        }
    return out


def kib_line(points: list[Residual], k: str) -> Line:
    """A line in KiB carried through the first two `points` (sorted by "kib"; each "kib" and
    k: (ms, se)): flat at their mean where it would fall, flat through a lone one, zero
    through none."""
    if len(points) >= 2:
        (x0, (y0, s0)), (x1, (y1, s1)) = [(p["kib"], p[k]) for p in points[:2]]
        slope = (y1 - y0) / (x1 - x0) if x1 != x0 else 0.0
        if slope < 0:
            # Carrying more bytes never costs less: a falling line is the two points' noise,
            # so the cost is taken as flat at their mean.
            return Line((y0 + y1) / 2, 0.0, max(s0, s1))
        return Line(y0 - slope * x0, slope, max(s0, s1))
    if points:
        y, s = points[0][k]
        return Line(y, 0.0, s)
    return Line(0.0, 0.0)


def _se(var: float | None, n: int) -> float:
    """A mean's standard error (stats.se_mean); 0 where unknown, so it adds nothing."""
    se = se_mean(float(var), n) if var is not None else math.nan
    return se if math.isfinite(se) else 0.0


def reference_residuals(
    refs: References, timings: Mapping[TimingKey, Timing], stack: str = DEFAULT_STACK
) -> dict[tuple[str, str], Residual]:
    """(name, mode) -> {metric: (residual ms, se ms), 'kib': ...}: what each reference
    handshake of a stack cost beyond its primitives (priced as the stack runs them)."""
    out: dict[tuple[str, str], Residual] = {}
    pricing = Pricing(by_implementation(timings), {}, (stack, stack))
    for (name, mode), m in refs.items():
        hierarchy, kex, _served, _modes = reference_spec(name)
        try:
            p = predict(operations(hierarchy, kex, mode), pricing)
        except MissingPrimitive:
            continue
        prims = {"server": p.server_ms, "client": p.client_ms, "latency": p.latency_ms}
        out[(name, mode)] = {
            k: (m[k] - prims[k], m[f"{k}_se"]) for k in ("server", "client", "latency")
        } | {"kib": m["kib"]}
    return out


def fit_overhead(
    refs: References, timings: Mapping[TimingKey, Timing], stack: str = DEFAULT_STACK
) -> Overhead:
    """A stack's overhead lines: through its two full reference handshakes (ecdsa, mldsa)
    in KiB carried (flat at their mean where the line would fall); a constant from the
    resumed one. A missing reference gives a flat line through the other, none at all zero."""
    res = reference_residuals(refs, timings, stack)

    def line(points: list[Residual]) -> dict[str, Line]:
        return {k: kib_line(points, k) for k in ("server", "client", "latency")}

    # The overhead references alone (a wait reference's wake-up is no part of the line).
    res = {k: p for k, p in res.items() if k[0] in REFERENCES}
    full = sorted((p for (n, mode), p in res.items() if mode == "full"), key=lambda p: p["kib"])
    resumed = [p for (n, mode), p in res.items() if mode == "resumed"]
    return Overhead(line(full), line(resumed))
