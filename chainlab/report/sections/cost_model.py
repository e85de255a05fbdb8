"""The cost model: each scenario's cost predicted from measured primitives, beside what was
measured, and the residual the primitives do not explain."""

from __future__ import annotations

import math

from chainlab.analysis.cost_model import STACK_ERROR_TARGET, off_target_reason
from chainlab.analysis.load import parse_json
from chainlab.model.cost import CATEGORIES
from chainlab.model.implementations import unrecorded
from chainlab.model.reference_specs import (
    PATH_BASE_PREFIX,
    PATH_PREFIX,
    REFERENCE_PREFIX,
    TRANSPORT_PREFIX,
    path_profile,
    peer_of,
)
from chainlab.report import format as f
from chainlab.report.builder import (
    Builder,
    ci,
    ci_of,
    codes,
    instr_sources,
    ints,
    median_row,
    nums,
    percents,
)
from chainlab.report.document import Section
from chainlab.report.sections.registry import section
from chainlab.runner.host import HOST_DRIFT_LIMIT


def headline(b: Builder) -> list[tuple[str, str]]:
    """How far the cost model's predictions are from the measurements, per side."""
    m = b.a.cost_model
    if m.empty:
        return []
    out = []
    for side in ("server", "client"):
        err = m[f"{side}_error"].dropna()
        if err.empty:
            continue
        r = median_row(m.dropna(subset=[f"{side}_error"]), f"{side}_error")
        answer = (
            f"median {100 * err.median():+.1f} % (from {100 * err.min():+.1f} to "
            f"{100 * err.max():+.1f} % over {len(err)} scenarios); e.g. `{r['scenario_id']}`"
            f": predicted {ci_of(r, f'{side}_predicted', 4)} ms, measured "
            f"{ci_of(r, f'{side}_measured', 4)} ms"
        )
        by_stack = m.loc[err.index]
        per_stack = by_stack[f"{side}_stack"].nunique() > 1
        if per_stack:
            # Each stack is priced with its own primitives and overhead; its error is its
            # own, said per stack (the side's stack).
            answer += "; per stack: " + ", ".join(
                f"{100 * g[f'{side}_error'].median():+.1f} % on {stack} ({len(g)})"
                for stack, g in by_stack.groupby(f"{side}_stack", sort=True)
            )
        # The per-stack breakdown names the stacks; the setting says what else is mixed.
        answer += b.setting(m.loc[err.index, "scenario_id"], but=("stack",) if per_stack else ())
        out.append((f"Cost model error, {side} CPU", answer))
    return out


@section(110, headline=headline)
def build(b: Builder) -> Section | None:
    a = b.a
    s = Section("cost_model", "Cost model: primitives, prediction and residual")
    s.blocks.append(hardware_counters_line(a))
    if a.primitives.empty:
        s.blocks.append(
            "This store holds no measured primitives (a run before schema version 3, or "
            "`[primitives] measure = false`), so nothing here is predicted."
        )
        return s
    refs = a.primitives[a.primitives["subject"].str.startswith(REFERENCE_PREFIX)]
    prims = a.primitives[~a.primitives["subject"].str.startswith(REFERENCE_PREFIX)]
    s.blocks.append(
        f"Each handshake's operations (docs/methods/cost-model.md#cost-model) priced with the "
        f"{len(prims)} primitives this store holds, each side's in the implementation its "
        "stack runs them with, timed in-process by the engine that links it (`primitives`: "
        "CPU per operation; docs/methods/cost-model.md#implementations), plus the side's "
        f"stack's TLS overhead measured by {len(refs)} sets of reference handshakes (their "
        "cost beyond their own primitives, as a line in the KiB a handshake carries). "
        "Predicted intervals "
        "come from the primitives' and the references' standard errors; measured ones "
        f"are the scenarios' {b.level} intervals. Residual = measured CPU − the CPU of "
        "the side's primitives alone: what the primitives do not explain (TLS state "
        "machine, X.509 parsing, allocation, syscalls)."
    )
    m = a.cost_model
    if m.empty:
        s.blocks.append("No successful scenario uses only primitives this store holds.")
    else:
        if (line := host_speed_line(m)) is not None:
            s.blocks.append(line)
        for side in ("server", "client"):
            cols = [
                ("scenario", codes(m["scenario_id"])),
                ("measured ms", ci(m, f"{side}_measured", 4)),
                ("predicted ms", ci(m, f"{side}_predicted", 4)),
                ("error", percents(m[f"{side}_error"])),
                ("primitives ms", nums(m[f"{side}_primitives"], 4)),
                ("residual ms", nums(m[f"{side}_residual"], 4)),
                ("residual share", percents(m[f"{side}_residual_share"])),
            ]
            if "host_factor" in m and m["host_factor"].notna().any():
                cols.append(("host ×", nums(m["host_factor"], 3)))
            if "host_moved" in m and m["host_moved"].any():
                # Too much for the comparison here: the host moved during it, or its CPUs
                # were apart (the host section's table).
                cols.append(("host unsteady", [f.yes_no(x) for x in m["host_moved"]]))
            if f"{side}_path" in m and (m[f"{side}_path"] != 0).any():
                # docs/methods/cost-model.md: a path's own CPU, from its path references.
                cols.append(("path adds ms", nums(m[f"{side}_path"], 4)))
            if f"{side}_peer" in m and (m[f"{side}_peer"] != 0).any():
                # docs/methods/cost-model.md: a peer of another stack, from its peer reference.
                cols.append(("peer adds ms", nums(m[f"{side}_peer"], 4)))
            s.blocks.append(
                b.table(
                    f"cost_model_{side}",
                    f"{side.capitalize()} CPU per handshake: predicted vs measured",
                    "Error = predicted / measured − 1.",
                    m[["scenario_id"] + [c for c in m.columns if c.startswith(f"{side}_")]],
                    cols,
                )
            )
        cols = [
            ("scenario", codes(m["scenario_id"])),
            ("network", list(m["network"])),
            ("measured ms", ci(m, "latency_measured", 4)),
            ("predicted ms", ci(m, "latency_predicted", 4)),
            ("error", percents(m["latency_error"])),
        ]
        s.blocks.append(
            b.table(
                "cost_model_latency",
                "Handshake latency: predicted vs measured",
                "Loopback: both sides' primitives one after the other plus the overhead; "
                "an emulated profile: that, projected by the network model (docs/network.md).",
                m[["scenario_id", "network"] + [c for c in m.columns if c.startswith("latency_")]],
                cols,
            )
        )
        stacks_block(b, s)
        parts = m[
            ["scenario_id"]
            + [f"{side}_{c}" for side in ("server", "client") for c in (*CATEGORIES, "residual")]
        ]
        b.csv_only("cost_breakdown", parts)
        s.blocks.append(
            b.figure(
                "cost_breakdown",
                "Bars: each side's primitives by kind of operation and its residual; "
                "'|' the measured mean, '×' the prediction.",
            )
        )
    cols = [
        ("implementation", implementation_names(prims)),
        ("subject", list(prims["subject"])),
        (
            "operation",
            [f"{o} {msg}".strip() for o, msg in zip(prims["op"], prims["message"], strict=True)],
        ),
        ("n", ints(prims["n"])),
        ("CPU ms", ci(prims, "mean_ms", 4)),
    ]
    s.blocks.append(
        b.table(
            "primitives",
            "Primitives",
            "CPU per operation with its interval (cv: the 130-byte CertificateVerify "
            "content; cert: a 2048-byte TBSCertificate).",
            prims,
            cols,
        )
    )
    if len(refs):
        cols = [
            ("stack", implementation_names(refs)),
            ("reference", [x[len(REFERENCE_PREFIX) :] for x in refs["subject"]]),
            ("mode", list(refs["op"])),
            ("over", [_over(x) for x in refs["message"]]),
            ("n", ints(refs["n"])),
            ("client CPU ms", ci(refs, "mean_ms", 4)),
            ("server CPU ms", nums(refs["server_ms"], 4)),
            ("KiB", nums(refs["kib"], 3)),
        ]
        s.blocks.append(
            b.table(
                "cost_references",
                "Reference handshakes (the TLS overhead)",
                "Real loopback handshakes of a small classical and a larger ML-DSA chain; "
                "their cost beyond their primitives is the model's overhead. Over an "
                "emulated profile, the full ones again: what they cost beyond the same "
                "ones on loopback taken around them is that path's own CPU, a line in "
                "KiB; over QUIC, the full ones again: "
                "the stack's overhead there; the classical one between two different "
                "stacks (the server's row, its client named): what each side cost beyond "
                "its own stack's is the peer's (docs/methods/cost-model.md).",
                refs,
                cols,
            )
        )
    return s


def _over(message) -> str:
    """Where a reference handshake ran: loopback (over TCP unless it names a transport; from
    its own stack's client unless it names a peer), or the emulated profile it names."""
    if isinstance(message, str) and message.startswith(PATH_PREFIX):
        return path_profile(message)
    if isinstance(message, str) and message.startswith(PATH_BASE_PREFIX):
        return f"loopback, around {path_profile(message)}'s"
    if isinstance(message, str) and message.startswith(TRANSPORT_PREFIX):
        return f"loopback, {message[len(TRANSPORT_PREFIX) :]}"
    if isinstance(message, str) and peer_of(message) is not None:
        return f"loopback, from a {peer_of(message)} client"
    return "loopback"


def implementation_names(frame) -> list[str]:
    """Each row's implementation (a reference handshake's stack); a row of a store before
    schema 13 names none: it is what the OpenSSL 3.5 engine ran it with
    (implementations.unrecorded: liboqs' for its families)."""
    recorded = frame["implementation"] if "implementation" in frame else [None] * len(frame)
    return [
        x if isinstance(x, str) and x else unrecorded(subject, op)
        for x, subject, op in zip(recorded, frame["subject"], frame["op"], strict=True)
    ]


def stacks_block(b: Builder, s: Section) -> None:
    """The model's error per stack, where the store holds more than one on a side: the
    median, the worst scenario with its intervals, and, for a stack outside the target,
    which operations the model prices from another implementation."""
    st = b.a.cost_model_stacks
    if st.empty:
        return
    if st.groupby("side")["stack"].nunique().max() < 2:
        off_target_lines(b, s, st)
        return
    cols = [
        ("side", list(st["side"])),
        ("stack", list(st["stack"])),
        ("scenarios", ints(st["n"])),
        ("median error", percents(st["median_error"])),
        ("median |error|", percents(st["median_abs_error"])),
        *(
            # Where the host's speed moved during some scenarios: how many, and the median
            # |error| of the others (host_speed; the comparison mixes two hosts there).
            [
                (
                    f"host unsteady (moved or CPUs apart > {HOST_DRIFT_LIMIT:.0%})",
                    ints(st["moved_n"]),
                ),
                ("median |error|, steady host", percents(st["steady_median_abs_error"])),
            ]
            if "moved_n" in st and st["moved_n"].gt(0).any()
            else []
        ),
        *(
            # Where some scenarios' measured interval alone is wider than the target.
            [
                (
                    f"measured interval > ±{100 * STACK_ERROR_TARGET:g} % (host steady)",
                    ints(st["wide_n"]),
                ),
                ("median |error|, the rest", percents(st["judged_median_abs_error"])),
            ]
            if "wide_n" in st and st["wide_n"].gt(0).any()
            else []
        ),
        ("worst", codes(st["worst_scenario"])),
        ("its error", percents(st["worst_error"])),
        ("predicted ms", ci(st, "worst_predicted", 4)),
        ("measured ms", ci(st, "worst_measured", 4)),
        ("priced from OpenSSL 3.5", list(st["borrowed"])),
    ]
    s.blocks.append(
        b.table(
            "cost_model_stacks",
            "Cost model per stack",
            f"Each side's CPU against its stack's prediction; target: median |error| within "
            f"{100 * STACK_ERROR_TARGET:g} %. The last column names the operations that "
            "stack's engine cannot time, priced with OpenSSL 3.5's figures.",
            st,
            cols,
        )
    )
    off_target_lines(b, s, st)


def off_target_lines(b: Builder, s: Section, st) -> None:
    """One line per side and stack off the target, saying why (off_target_reason)."""
    for r in st[~st["within_target"]].to_dict("records"):
        s.blocks.append(
            f"The {r['side']} CPU on {r['stack']} is off by a median "
            f"{100 * r['median_error']:+.1f} % over {r['n']} scenarios: "
            f"{off_target_reason(r)}."
        )


def host_speed_line(m) -> str | None:
    """What scaling each prediction to the host's speed during its scenario did, where the
    store's primitives carry the host's speed (schema 16 on)."""
    if "host_factor" not in m or m["host_factor"].isna().all():
        return None
    factors = m["host_factor"].dropna()
    unsteady = int(m["host_moved"].sum()) if "host_moved" in m else 0
    unscaled = ", ".join(
        f"{side} {100 * m[f'{side}_error_unscaled'].abs().median():.1f} %"
        for side in ("server", "client")
    )
    scaled = ", ".join(
        f"{side} {100 * m[f'{side}_error'].abs().median():.1f} %" for side in ("server", "client")
    )
    return (
        f"Each prediction is at the host's speed during its scenario (column host ×): the "
        "reference workload's time then (the mean of its start and end) over its time around "
        "the primitives' and references' own measurements (docs/methods/cost-model.md"
        f"#the-hosts-speed). The {len(factors)} scenarios ran on a host from "
        f"{factors.min():.2f} to {factors.max():.2f} times as slow as the median reading "
        "around the primitives and references; median |error| "
        f"{scaled} so scaled, {unscaled} unscaled."
        + (
            f" The host was unsteady (column host unsteady) during {unsteady} of them: its "
            "speed moved or its CPUs were apart, too much for the comparison there."
            if unsteady
            else ""
        )
    )


def hardware_counters_line(a) -> str:
    """One line: instructions per handshake where the host counted them, else why not."""
    summ = a.summary
    if "server_instructions" in summ and summ["server_instructions"].notna().any():
        ok = summ[summ["server_instructions"].notna()]
        return (
            "Instructions per handshake (user mode, hardware counters): "
            + "; ".join(
                f"`{sid}` server {srv:,.0f}, client {cli:,.0f}"
                for sid, srv, cli in zip(
                    ok["scenario_id"],
                    ok["server_instructions"],
                    ok["client_instructions"],
                    strict=True,
                )
                if not (math.isnan(srv) or math.isnan(cli))
            )
            + "."
        )
    info = parse_json(a.data.runs.iloc[-1]["engine_info"]) if len(a.data.runs) else {}
    hw = info.get("hardware_counters") if isinstance(info, dict) else None
    if hw is None:
        return (
            "Hardware counters: this run's engine did not probe for them (an engine before "
            "the cost model), so no instructions per handshake are shown."
        )
    counted = instr_sources(a)
    elsewhere = (
        f" The instructions per handshake shown come from {counted} (the decomposition's table)."
        if counted
        else ""
    )
    if hw.get("available"):
        return (
            "Hardware counters: available, but no handshake of this store recorded them."
            + elsewhere
        )
    return (
        "Hardware counters: not exposed on the host that measured this store "
        f"({hw.get('reason', 'no reason recorded')}); CPU times come from the thread clocks."
        + (elsewhere or " No instructions per handshake are shown.")
    )
