"""`chainlab bench model`: the cost model against stored runs. For each store (a completed
`chainlab run`, whose primitives it holds):

1. Accuracy per scenario: predicted vs measured server CPU, client CPU and latency; every
   scenario whose server cost is dominated by signing (the leaf's CertificateVerify is at
   least 95 % of the predicted server CPU: the SLH-DSA leaves) against the target of 10 % on
   server CPU; each prediction at the host's speed during its scenario (`host x`,
   chainlab.model.host_speed), each stack's median |error| unscaled beside; the residual
   (measured CPU not explained by primitives) of the campaign's baseline, in ms.
2. Where the store counted instructions ([measure]): the same model in instructions, its
   primitives counted now under callgrind as handshakes were, each side's in the
   implementations its stack runs (with the engine that times them), and each stack's TLS
   overhead fitted on its other scenarios (analysis.cost_instructions), beside the CPU
   model's error, overall and per side and stack.
3. The run-time estimate `chainlab validate` makes with the same model (the store's
   primitives, which the run took from this machine's cache) beside the run's real wall time
   (the runs row's start to end), target: within 15 % (chainlab.analysis.run_time): the
   estimate the run started with, and the same made again now from the store.

Prints figures only (no pass/fail). Make the stores with `chainlab run`, e.g.

    chainlab run campaigns/signature-placement.toml --store sp.duckdb
    chainlab bench model -- --store sp.duckdb [--store quick.duckdb ...]
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from chainlab import engine as engine_binary
from chainlab.analysis import cost_instructions, run_time
from chainlab.analysis.analyze import analyze
from chainlab.analysis.cost_model import STACK_ERROR_TARGET, off_target_reason
from chainlab.axes.stack import DEFAULT_STACK
from chainlab.model import estimate
from chainlab.runner import instructions, primitives
from chainlab.store import Store

SIGNING_TARGET = 0.10


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="chainlab bench model", description=__doc__.split("\n")[0])
    ap.add_argument("--store", type=Path, action="append", required=True, help="a run's store")
    args = ap.parse_args(argv)
    for path in args.store:
        report(path)
    return 0


def report(path: Path) -> None:
    a = analyze(path)
    m = a.cost_model
    print(f"== {path.name}: campaign {a.data.campaign_name}")
    if m.empty:
        print("no cost model: the store holds no primitives")
        return
    print(
        f"{'scenario':<52} {'server meas':>11} {'pred':>9} {'err':>7}  {'client meas':>11} "
        f"{'pred':>7} {'err':>7}  {'latency meas':>12} {'pred':>9} {'err':>7} {'host x':>6}"
    )
    for r in m.sort_values("server_measured").to_dict("records"):
        print(
            f"{r['scenario_id']:<52} {r['server_measured']:>11.3f} {r['server_predicted']:>9.3f} "
            f"{100 * r['server_error']:>6.1f}%  {r['client_measured']:>11.3f} "
            f"{r['client_predicted']:>7.3f} {100 * r['client_error']:>6.1f}%  "
            f"{r['latency_measured']:>12.3f} {r['latency_predicted']:>9.3f} "
            f"{100 * r['latency_error']:>6.1f}% {r.get('host_factor', math.nan):>6.2f}"
        )
    stacks_table(a.cost_model_stacks)
    signing = m[m["signing_dominated"]]
    if len(signing):
        medians = server_medians(path)
        print(
            "signing-dominated scenarios, server CPU: predicted vs the measured mean, and vs "
            "the measured median (robust to the handshakes a busy host slowed)"
        )
        for r in signing.to_dict("records"):
            med = medians[r["scenario_id"]]
            print(
                f"  {r['scenario_id']:<50} mean {r['server_measured']:>9.1f} ms "
                f"({100 * r['server_error']:+.1f} %)  median {med:>9.1f} ms "
                f"({100 * (r['server_predicted'] / med - 1):+.1f} %)  predicted "
                f"{r['server_predicted']:.1f} ms"
            )
        for name, err in (
            ("mean", signing["server_error"]),
            ("median", signing["server_predicted"] / signing["scenario_id"].map(medians) - 1),
        ):
            inside = (err.abs() <= SIGNING_TARGET).sum()
            print(
                f"  against the {name}: {inside} of {len(signing)} within "
                f"{100 * SIGNING_TARGET:g} % (largest error {100 * err.abs().max():.1f} %)"
            )
    if a.baseline is not None and a.baseline in set(m["scenario_id"]):
        b = m.set_index("scenario_id").loc[a.baseline]
        print(
            f"baseline {a.baseline}: residual server {b['server_residual']:.3f} ms "
            f"({100 * b['server_residual_share']:.1f} % of its CPU), client "
            f"{b['client_residual']:.3f} ms ({100 * b['client_residual_share']:.1f} %)"
        )
    instructions_check(path, a)
    estimate_vs_real(path)


# Operations counted per primitive under callgrind: a deterministic operation repeats to the
# instruction; ML-DSA signing's rejection loop needs more for its mean (cv ~0.75: 200 put
# it within ~10 % at 95 %, ~3 s under callgrind for OpenSSL's ML-DSA-65).
PRIMITIVE_COUNT = 5
PRIMITIVE_COUNT_SIGN_MLDSA = 200


def stacks_table(st) -> None:
    """Per side and stack: the median error, the worst scenario with its intervals, and
    what that stack's engine could not time (priced with OpenSSL 3.5's figures)."""
    if st.empty:
        return
    print(
        f"per stack (target: median |error| within {100 * STACK_ERROR_TARGET:g} %): "
        "side, stack, scenarios, median error, median |error|, worst scenario"
    )
    for r in st.to_dict("records"):
        print(
            f"  {r['side']:<6} {r['stack']:<12} {r['n']:>4} {100 * r['median_error']:>+7.1f} % "
            f"{100 * r['median_abs_error']:>6.1f} %  worst {r['worst_scenario']} "
            f"{100 * r['worst_error']:+.1f} % (predicted {r['worst_predicted']:.3f} "
            f"[{r['worst_predicted_lo']:.3f}, {r['worst_predicted_hi']:.3f}] ms, measured "
            f"{r['worst_measured']:.3f} [{r['worst_measured_lo']:.3f}, "
            f"{r['worst_measured_hi']:.3f}] ms)"
            + (f"; priced from OpenSSL 3.5: {r['borrowed']}" if r["borrowed"] else "")
            + (
                f"; {r['scaled_n']} scaled to the host's speed, unscaled median |error| "
                f"{100 * r['unscaled_median_abs_error']:.1f} %"
                if r.get("scaled_n")
                else ""
            )
        )
        if not r["within_target"]:
            print(f"    off the target: {off_target_reason(r)}")


def instructions_check(path: Path, a) -> None:
    """The cost model in instructions (analysis.cost_instructions), where the store counted
    them: the primitives counted now under callgrind with this engine, as handshakes were."""
    keys = cost_instructions.needed(a.summary)
    if not keys:
        print("instructions: the store counted none ([measure] instructions = 'callgrind')")
        return
    counts = {}
    for key, timer in sorted(keys.items(), key=lambda kt: (*kt[0][:3], kt[0][3] or "")):
        _impl, subject, op, _message = key
        n = PRIMITIVE_COUNT_SIGN_MLDSA if op == "sign" and "ML-DSA" in subject else PRIMITIVE_COUNT
        eng = (
            engine_binary.path()
            if timer.engine == DEFAULT_STACK
            else engine_binary.stack_path(timer.engine)
        )
        item = primitives.item_of(key, timer)
        counts[key] = instructions.count_primitive(eng, item.argv(), n)
    m = cost_instructions.per_scenario(a.summary, counts)
    if "server_error" not in m:
        print(f"instructions: {len(m)} counted scenarios, too few to fit the overhead (3)")
        return
    print(
        f"instructions ({instructions.source()}; primitives counted now, overhead fitted "
        "leaving each scenario out): measured vs predicted, M per handshake"
    )
    for r in m.sort_values("server_measured").to_dict("records"):
        print(
            f"  {r['scenario_id']:<52} server {r['server_measured'] / 1e6:>10.3f} "
            f"{r['server_predicted'] / 1e6:>10.3f} {100 * r['server_error']:>+6.1f}%  client "
            f"{r['client_measured'] / 1e6:>8.3f} {r['client_predicted'] / 1e6:>8.3f} "
            f"{100 * r['client_error']:>+6.1f}%"
        )
    cpu = a.cost_model
    for side in ("server", "client"):
        in_cpu = float(cpu[f"{side}_error"].abs().median()) if len(cpu) else math.nan
        print(
            f"  {side}: median |error| {100 * cost_instructions.median_abs_error(m, side):.1f} % "
            f"in instructions, {100 * in_cpu:.1f} % in CPU time (the same store)"
        )
    cpu_stacks = a.cost_model_stacks
    for r in cost_instructions.per_stack(m).to_dict("records"):
        same = cpu_stacks[(cpu_stacks["side"] == r["side"]) & (cpu_stacks["stack"] == r["stack"])]
        in_cpu = float(same["median_abs_error"].iloc[0]) if len(same) else math.nan
        print(
            f"  {r['side']} {r['stack']}: {r['n']} scenarios, median error "
            f"{100 * r['median_error']:+.1f} %, median |error| {100 * r['median_abs_error']:.1f} % "
            f"in instructions ({100 * in_cpu:.1f} % in CPU time)"
        )


def server_medians(path: Path) -> dict[str, float]:
    """Median server CPU (ms) of each scenario's measured successful handshakes."""
    with Store.open(path) as st:
        rows = st.query(
            "SELECT scenario_id, median(server_cpu_ns) / 1e6 AS ms FROM samples "
            "WHERE NOT warmup AND outcome = 'ok' AND server_cpu_ns IS NOT NULL GROUP BY ALL"
        )
    return dict(zip(rows["scenario_id"], rows["ms"], strict=True))


def estimate_vs_real(path: Path) -> None:
    with Store.open(path) as st:
        got = run_time.of_store(st)
    if isinstance(got, str):
        print(f"estimate vs real: {got}")
        return
    lo, hi = 1 - run_time.ESTIMATE_TARGET, 1 + run_time.ESTIMATE_TARGET
    fmt = estimate.fmt_duration
    phases = ", ".join(f"{k} {fmt(v)}" for k, v in got.again.phases.items() if v)
    print(
        f"estimate vs real: the run took {fmt(got.wall_s)}; the estimate made again now "
        f"{fmt(got.again.expected_s)} (range {fmt(got.again.low_s)} to "
        f"{fmt(got.again.high_s)}; {phases}): estimate/real {got.ratio:.2f} (target "
        f"{lo:.2f}-{hi:.2f}); the run started with {fmt(got.stored.expected_s)} "
        f"({got.stored.expected_s / got.wall_s:.2f})"
    )
