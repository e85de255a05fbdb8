"""The cost model against the measurements (docs/methods/cost-model.md#cost-model).

From the primitives and reference handshakes a store holds (`primitive_samples`), per
successful scenario:
- predicted server CPU, client CPU and latency (loopback, or projected onto the scenario's
  profile) with intervals from the primitives' standard errors, beside the measured means
  and their intervals, and the prediction's relative error;
- the residual of each side: measured CPU minus the CPU of its primitives alone, in ms and
  as a share of the measured CPU: the handshake's cost that no primitive explains (TLS state
  machine, X.509 parsing, allocation, syscalls);
- the primitives' CPU by category and side (the parts of the cost breakdown figure).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import fields, replace

import pandas as pd

from chainlab.analysis.load import parse_json, stored_campaign
from chainlab.analysis.registry import produces
from chainlab.axes import rollout
from chainlab.axes.handshake import view as handshake_view
from chainlab.axes.stack import DEFAULT_STACK
from chainlab.campaign.model import NetworkProfile, SamplingPolicy, Scenario
from chainlab.errors import ChainlabError
from chainlab.model import cost, cost_fit, estimate, host_speed, reference_specs
from chainlab.network.profile import LOOPBACK
from chainlab.runner.host import HOST_DRIFT_LIMIT
from chainlab.stats import se_mean, z_value

SIDES = {"server": "server_cpu_ms", "client": "client_cpu_ms"}
# A scenario's server cost is dominated by signing when the leaf's CertificateVerify is at
# least this share of its predicted server CPU (an SLH-DSA leaf: 97.5-99.9 % here, the
# fastest set, SHA2-128f at 12 ms, the lowest; an ML-DSA leaf at most about 90 %).
SIGNING_DOMINATED = 0.95

# A scenario read back from a store: how it was sampled is not what the cost model prices
# (the stored counts are), so its policy is a placeholder that samples nothing.
STORED_SAMPLING = SamplingPolicy(
    mode="fixed",
    count=0,
    target_rel_halfwidth=0.0,
    confidence=0.95,
    min=0,
    max=0,
    time_cap_s=None,
    warmup=0,
    batch_warmup=0,
    timeout_ms=0,
    max_failed_fraction=0.0,
)


def model_of(primitives: pd.DataFrame) -> cost.CostModel | None:
    """The store's cost model, or None when it holds no primitives."""
    if primitives is None or primitives.empty:
        return None
    return cost_fit.model_from_summary(primitives.to_dict("records"), "the store's primitives")


def stored_scenarios(runs: pd.DataFrame) -> dict[str, Scenario]:
    """The scenarios of the campaign files the store's runs ran (`runs.campaign_toml`), by
    id, a later run's over an earlier one's: what the runner estimated, every axis included
    (a transport, a certificate, client authentication, trust anchors). A file this version
    no longer loads gives none (its scenarios are rebuilt from their columns, `scenario_of`)."""
    out: dict[str, Scenario] = {}
    for r in runs.to_dict("records") if runs is not None else []:
        text, name = r.get("campaign_toml"), r.get("campaign_file_name")
        if not (isinstance(text, str) and text and isinstance(name, str) and name):
            continue
        try:
            out.update(stored_campaign(r).scenarios)
        except (ChainlabError, OSError):
            continue
    return out


def scenario_of(r, stored: dict[str, Scenario] | None = None) -> Scenario:
    """The campaign Scenario of a summary row (what the cost model predicts from): the
    stored campaign's (`stored_scenarios`), else rebuilt from the row's columns (the
    hierarchy, the levers below; any other axis at its default)."""
    if stored and r["scenario_id"] in stored:
        return stored[r["scenario_id"]]
    hierarchy = tuple(
        a
        for a in (r["root_alg"], r["int1_alg"], r["int2_alg"], r["leaf_alg"])
        if isinstance(a, str) and a
    )
    second = r.get("second_chain", rollout.NO_SECOND_CHAIN)
    return Scenario(
        scenario_id=r["scenario_id"],
        kex=r["kex"],
        hierarchy=hierarchy,
        network=r["network"],
        sampling=STORED_SAMPLING,
        levers=(
            ("served_chain", r["served_chain"]),
            ("handshake_mode", r["handshake_mode"]),
            ("cert_compression", r["cert_compression"]),
            # Staged rollout: what the cost model mixes (chainlab.axes.rollout.mixture).
            ("second_chain", () if second == rollout.NO_SECOND_CHAIN else tuple(second.split(","))),
            ("population", r.get("population", rollout.NO_POPULATION)),
            ("server_groups", r.get("server_groups", rollout.CLIENT_ORDER)),
            # The stacks and signature implementation price it (chainlab.campaign.
            # implementations).
            ("stack", (r.get("client_stack", DEFAULT_STACK), r.get("server_stack", DEFAULT_STACK))),
            ("signature_impl", r.get("signature_impl", "stack")),
        ),
    )


def profiles_of(network_profiles: pd.DataFrame) -> dict[str, NetworkProfile]:
    """The stored network profiles (their configured values) as campaign NetworkProfiles."""
    out: dict[str, NetworkProfile] = {}
    if network_profiles is None or network_profiles.empty:
        return out
    keys = {f.name for f in fields(NetworkProfile)}
    for r in network_profiles.to_dict("records"):
        conf = parse_json(r["configured"])
        out[r["profile"]] = NetworkProfile(
            **{k: v for k, v in conf.items() if k in keys and k != "name"}, name=r["profile"]
        )
    return out


def per_scenario(
    summary: pd.DataFrame,
    model: cost.CostModel | None,
    profiles: dict,
    level: float = 0.95,
    stored: dict[str, Scenario] | None = None,
    host: Mapping[str, float] | None = None,
) -> pd.DataFrame:
    """One row per successful scenario the model can predict (empty without a model).
    `profiles` maps a network name to its NetworkProfile (for projected latency); `stored`:
    the campaign's scenarios by id (`stored_scenarios`); `host`: each scenario's host
    reading (CPU ns, `host_readings`), to which its prediction is scaled from the model's
    (chainlab.model.host_speed; `host_factor`, and each side's error unscaled beside)."""
    if model is None or summary.empty:
        return pd.DataFrame()
    z = z_value(level)
    rows = []
    for _, r in summary[summary["status"] == "ok"].iterrows():
        s = scenario_of(r, stored)
        if s.network != LOOPBACK:
            s = replace(s, network_profile=profiles.get(s.network, s.network_profile))
            if s.network_profile is None:
                continue
        f = host_speed.factor(model, (host or {}).get(r["scenario_id"]))
        at_host = model if f is None else host_speed.at_speed(model, f)
        try:
            p = estimate.predict(s, at_host)
            unscaled = p if f is None else estimate.predict(s, model)
        except cost.MissingPrimitive:
            continue
        net = estimate.network_cost(s, at_host)
        out = {
            "scenario_id": r["scenario_id"],
            "label": r["label"],
            "network": r["network"],
            "handshake_mode": r["handshake_mode"],
            "client_stack": handshake_view(s).stacks[0],
            "server_stack": handshake_view(s).stacks[1],
            "n_ok": r["n_ok"],
            # The host's speed during the scenario over its inputs' (NaN: unknown, unscaled).
            "host_factor": math.nan if f is None else f,
        }
        predicted = {"server": (p.server_ms, p.server_se), "client": (p.client_ms, p.client_se)}
        plain = {"server": unscaled.server_ms, "client": unscaled.client_ms}
        for side, col in SIDES.items():
            measured = float(r[col])
            est, se = predicted[side]
            prim = p.primitives_ms(side)
            out[f"{side}_measured"] = measured
            out[f"{side}_measured_lo"] = r[f"{col}_lo"]
            out[f"{side}_measured_hi"] = r[f"{col}_hi"]
            out[f"{side}_predicted"] = est
            out[f"{side}_predicted_lo"] = est - z * se
            out[f"{side}_predicted_hi"] = est + z * se
            out[f"{side}_error"] = est / measured - 1 if measured > 0 else math.nan
            # At the host's speed when the model's inputs were timed (no scaling).
            out[f"{side}_error_unscaled"] = plain[side] / measured - 1 if measured > 0 else math.nan
            out[f"{side}_primitives"] = prim
            # What the scenario's emulated path adds (its path references beyond loopback's).
            out[f"{side}_path"] = p.path.get(side, 0.0)
            # What the wake-up after a long idle wait adds (the stack's wait reference).
            out[f"{side}_wait"] = p.wait.get(side, 0.0)
            # What a peer of another stack adds (the pair's peer reference beyond its own).
            out[f"{side}_peer"] = p.peer.get(side, 0.0)
            out[f"{side}_residual"] = measured - prim
            out[f"{side}_residual_share"] = (
                (measured - prim) / measured if measured > 0 else math.nan
            )
            for category in cost.CATEGORIES:
                out[f"{side}_{category}"] = p.parts[side].get(category, 0.0)
            # How long this side idles for the peer's signature before its own work on the
            # peer's flight: the peer's predicted signing time (reference_specs.LONG_WAIT_MS).
            out[f"{side}_waits_ms"] = p.parts[PEER[side]].get("sign", 0.0)
            # What the model prices with another implementation's figure than the one that
            # runs it (chainlab.model.implementations): what it may miss on this side.
            out[f"{side}_borrowed"] = ", ".join(
                sorted(f"{subject} {op}" for s_, subject, op in p.borrowed if s_ == side)
            )
        lat_se = p.latency_se
        out["latency_measured"] = float(r["mean_ms"])
        out["latency_measured_lo"] = r["mean_ms_lo"]
        out["latency_measured_hi"] = r["mean_ms_hi"]
        out["latency_predicted"] = net.mean_ms
        out["latency_predicted_lo"] = net.mean_ms - z * lat_se
        out["latency_predicted_hi"] = net.mean_ms + z * lat_se
        out["latency_error"] = net.mean_ms / float(r["mean_ms"]) - 1
        out["signing_dominated"] = (
            p.parts["server"].get("sign", 0.0) >= SIGNING_DOMINATED * p.server_ms
        )
        rows.append(out)
    return pd.DataFrame(rows)


# A stack's model error is said to be within bounds up to this median |error| (issue #40's
# target for each stack's server and client CPU).
STACK_ERROR_TARGET = 0.10
PEER = {"server": "client", "client": "server"}


def per_stack(m: pd.DataFrame) -> pd.DataFrame:
    """Per side and that side's stack: scenarios, median error and median |error|, the
    worst scenario with its predicted and measured intervals, and the operations priced
    with another implementation's figures (what the model may miss there)."""
    rows = []
    if m is None or m.empty:
        return pd.DataFrame()
    for side in ("server", "client"):
        d = m.dropna(subset=[f"{side}_error"])
        for stack, g in d.groupby(f"{side}_stack", sort=True):
            err = g[f"{side}_error"]
            worst = g.loc[err.abs().idxmax()]
            borrowed = sorted({op for ops in g[f"{side}_borrowed"] for op in ops.split(", ") if op})
            long = g[f"{side}_waits_ms"] >= reference_specs.LONG_WAIT_MS
            on_path = g["network"] != LOOPBACK
            moved = (
                g["host_moved"].fillna(False).astype(bool)
                if "host_moved" in g
                else pd.Series(False, index=g.index)
            )
            # The scenarios whose measured mean's 95 % interval alone is wider than the
            # target (a path scenario's few hundred ML-DSA signatures, cv ~0.75): no
            # prediction could be shown within the target there.
            half = (g[f"{side}_measured_hi"] - g[f"{side}_measured_lo"]) / 2
            wide = (half / g[f"{side}_measured"] > STACK_ERROR_TARGET) & ~moved
            judged = ~moved & ~wide
            rows.append(
                {
                    **error_medians(side, str(stack), err),
                    "within_target": bool(err.abs().median() <= STACK_ERROR_TARGET),
                    "worst_scenario": worst["scenario_id"],
                    "worst_error": float(worst[f"{side}_error"]),
                    **{
                        f"worst_{k}{end}": float(worst[f"{side}_{k}{end}"])
                        for k in ("predicted", "measured")
                        for end in ("", "_lo", "_hi")
                    },
                    "borrowed": ", ".join(borrowed),
                    # The scenarios in which this side idles for a long signature, apart.
                    "long_wait_n": int(long.sum()),
                    "long_wait_median_error": _median(err[long]),
                    "short_wait_median_error": _median(err[~long]),
                    # The wake-up those scenarios were priced with (0: none in the model).
                    "long_wait_priced_ms": _median(g.loc[long, f"{side}_wait"]),
                    # The scenarios over emulated paths, apart from the loopback ones.
                    "path_n": int(on_path.sum()),
                    "path_median_error": _median(err[on_path]),
                    "loopback_median_error": _median(err[~on_path]),
                    # The scenarios during which the host's speed moved (host_speed), apart:
                    # their measurement mixes two hosts, the comparison holds on the rest.
                    "moved_n": int(moved.sum()),
                    "steady_median_error": _median(err[~moved]),
                    "steady_median_abs_error": _median(err[~moved].abs()),
                    "wide_n": int(wide.sum()),
                    "judged_median_error": _median(err[judged]),
                    "judged_median_abs_error": _median(err[judged].abs()),
                    # The scenarios priced at the host's speed during them (host_factor), and
                    # the median |error| without that scaling.
                    "scaled_n": int(g["host_factor"].notna().sum()) if "host_factor" in g else 0,
                    "unscaled_median_abs_error": _median(g[f"{side}_error_unscaled"].abs())
                    if f"{side}_error_unscaled" in g
                    else math.nan,
                }
            )
    return pd.DataFrame(rows)


def error_medians(side: str, stack: str, err: pd.Series) -> dict:
    """A side and stack's scenarios and the median of their errors, signed and absolute."""
    return {
        "side": side,
        "stack": stack,
        "n": len(err),
        "median_error": float(err.median()),
        "median_abs_error": float(err.abs().median()),
    }


def _median(errors: pd.Series) -> float:
    return float(errors.median()) if len(errors) else math.nan


def _off_alone(n: int, error: float, rest: float) -> bool:
    """Whether `n` scenarios' median error is off the target while the rest's is not (nan:
    no rest, never off)."""
    return n > 0 and abs(error) > STACK_ERROR_TARGET and not abs(rest) > STACK_ERROR_TARGET


def off_target_reason(r: dict) -> str:
    """Why a stack's side is off the target (a per_stack row whose median |error| is past
    STACK_ERROR_TARGET), from the store: the host's speed, where its scenarios on a steady
    host are within it; else its long waits, where they alone are off; its scenarios over
    emulated paths, where they alone are off; the operations priced from another
    implementation; else its overhead beyond primitives. Where the host moved during some
    of its scenarios, the reason says how the others fare."""
    moved, n = r.get("moved_n", 0), r["n"]
    steady = r.get("steady_median_abs_error", math.nan)
    wide = r.get("wide_n", 0)
    if wide:
        return _too_uncertain(r, moved, wide)
    if moved and moved == n:
        return (
            f"the host's speed moved more than {HOST_DRIFT_LIMIT:.0%} during every one of its "
            f"{n} scenarios (the reference workload, end over start, or one CPU against "
            "another): too much for the comparison on this host, which holds none of its "
            "scenarios on a steady host"
        )
    if moved and moved < n and steady <= STACK_ERROR_TARGET:
        return (
            f"the host's speed moved more than {HOST_DRIFT_LIMIT:.0%} during {moved} of its "
            f"{n} scenarios (the reference workload, end over start, or one CPU against "
            "another: too much for the comparison there); on the other "
            f"{n - moved} its median error is {100 * r['steady_median_error']:+.1f} %, within "
            "the target"
        )
    reason = _reason(r)
    if moved:
        reason += (
            f" (the host's speed also moved more than {HOST_DRIFT_LIMIT:.0%} during {moved} "
            f"of its {n} scenarios"
            + (
                f"; on the other {n - moved} the median error is "
                f"{100 * r['steady_median_error']:+.1f} %)"
                if moved < n
                else ")"
            )
        )
    return reason


def _too_uncertain(r: dict, moved: int, wide: int) -> str:
    """off_target_reason where some scenarios' measured interval is wider than the target:
    those and the ones the host moved during cannot be judged; how the others fare."""
    n = r["n"]
    judged = n - moved - wide
    parts = []
    if moved:
        parts.append(
            f"the host's speed moved more than {HOST_DRIFT_LIMIT:.0%} during {moved} of its "
            f"{n} scenarios (the reference workload, end over start, or one CPU against another)"
        )
    parts.append(
        f"the measured mean's 95 % interval is wider than ±{100 * STACK_ERROR_TARGET:g} % in "
        f"{wide}{' other' if moved else ''} of its {n} scenarios (too few handshakes to "
        f"place a prediction within ±{100 * STACK_ERROR_TARGET:g} % of it)"
    )
    head = " and ".join(parts) + ": too much for the comparison there"
    if not judged:
        return head + "; none of its scenarios can be judged on this run"
    err, abs_err = r["judged_median_error"], r["judged_median_abs_error"]
    if abs_err <= STACK_ERROR_TARGET:
        return (
            f"{head}; on the other {judged} its median error is {100 * err:+.1f} %, "
            "within the target"
        )
    return f"{_reason(r)} ({head}; on the other {judged} the median error is {100 * err:+.1f} %)"


def _reason(r: dict) -> str:
    """off_target_reason's causes other than the host's speed."""
    long_err, short_err = r["long_wait_median_error"], r["short_wait_median_error"]
    if _off_alone(r["long_wait_n"], long_err, short_err):
        others = r["n"] - r["long_wait_n"]
        return (
            f"its {r['long_wait_n']} scenarios in which the {r['side']} idles "
            f"{reference_specs.LONG_WAIT_MS:g} ms or more for the peer's signature are off by a "
            "median "
            f"{100 * long_err:+.1f} %"
            + (f", the other {others} by {100 * short_err:+.1f} %" if others else "")
            + ": work after a long idle wait costs more than the same operations timed back "
            "to back (the wake-up from idle, as a server idle between connections paid in "
            "`chainlab bench path`), "
            + (
                f"which the model priced at {r['long_wait_priced_ms']:.2f} ms from the stack's "
                "wait reference"
                if r["long_wait_priced_ms"] > 0
                else "which the model does not price for a server"
                if r["side"] == "server"
                else "which the model prices from the client stack's wait reference, and "
                "this store has none for it"
            )
        )
    path_err, loop_err = r["path_median_error"], r["loopback_median_error"]
    if _off_alone(r["path_n"], path_err, loop_err):
        others = r["n"] - r["path_n"]
        return (
            f"its {r['path_n']} scenarios over emulated paths are off by a median "
            f"{100 * path_err:+.1f} %"
            + (f", the {others} on loopback by {100 * loop_err:+.1f} %" if others else "")
            + ": what a path adds is priced from the stack's reference handshakes over it "
            "(docs/methods/cost-model.md, a path's own CPU), which these scenarios' "
            "flights do not follow"
        )
    if r["borrowed"]:
        return (
            f"it prices {r['borrowed']} with OpenSSL 3.5's figures (that stack's engine "
            "does not time them)"
        )
    return (
        "every operation is priced in the stack's own implementation, so the difference is "
        "the stack's handshake cost beyond its primitives, which the reference handshakes' "
        "line does not follow here"
    )


def primitives_table(primitives: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """The stored primitives: mean CPU per operation with its interval, and n."""
    if primitives is None or primitives.empty:
        return pd.DataFrame()
    z = z_value(level)
    rows = []
    for r in primitives.to_dict("records"):
        n = int(r["n"])
        mean = r["cpu_mean"] / 1e6
        se = se_mean(r["cpu_var"] or 0.0, n) / 1e6
        rows.append(
            {
                "implementation": r.get("implementation"),
                "subject": r["subject"],
                "op": r["op"],
                "message": r["message"] if isinstance(r["message"], str) else "",
                "n": n,
                "mean_ms": mean,
                "mean_ms_lo": mean - z * se,
                "mean_ms_hi": mean + z * se,
                "server_ms": (r["server_mean"] / 1e6)
                if pd.notna(r.get("server_mean"))
                else math.nan,
                "kib": r.get("kib"),
            }
        )
    return pd.DataFrame(rows)


@produces("cost_model")
def _analysis_cost_model(a) -> pd.DataFrame:
    model = model_of(a.data.primitives)
    if model is None:
        return pd.DataFrame()
    profiles = profiles_of(a.data.network_profiles)
    stored = stored_scenarios(a.data.runs)
    host = a.host_speed
    m = per_scenario(
        a.summary,
        model,
        profiles,
        a.config.confidence_level,
        stored,
        host_readings(a.data.host_reference),
    )
    if len(m) and host is not None and len(host):
        # Not comparable: its host's speed moved during it, or its CPUs' speeds were apart.
        apart = host["moved"] | host["cores_apart"]
        moved = dict(zip(host["scenario_id"], apart, strict=True))
        m["host_moved"] = [bool(moved.get(sid, False)) for sid in m["scenario_id"]]
    return m


def host_readings(ref: pd.DataFrame | None) -> dict[str, float]:
    """Scenario id -> the host reference workload's CPU ns during it (the host's speed, as
    its primitives were read: chainlab.runner.host.reference): the mean of its readings at
    start and end, where it has both."""
    if ref is None or ref.empty:
        return {}
    own = ref[ref["step"] == -1]
    out = {}
    for sid, g in own.groupby("scenario_id", sort=False):
        cpu = g["cpu_ns"].astype(float)
        if len(g) == 2 and (cpu > 0).all():
            out[str(sid)] = float(cpu.mean())
    return out


@produces("cost_model_stacks")
def _analysis_cost_model_stacks(a) -> pd.DataFrame:
    return per_stack(a.cost_model)


@produces("primitives")
def _analysis_primitives(a) -> pd.DataFrame:
    return primitives_table(a.data.primitives, a.config.confidence_level)
