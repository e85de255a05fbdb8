"""Client/server decomposition of per-connection CPU."""

from __future__ import annotations

import pandas as pd

from chainlab.analysis.summary import SERVER_BOUND_ELAPSED_SHARE
from chainlab.report.builder import (
    Builder,
    ci,
    ci_of,
    codes,
    instr_sources,
    ints,
    nums,
    percents,
)
from chainlab.report.document import Section
from chainlab.report.sections.registry import section


def headline(b: Builder) -> list[tuple[str, str]]:
    d = b.a.decomposition
    if d.empty or "findings" in b.built:
        return []  # a placement study's findings answer where the CPU goes
    regimes = d["cpu_regime"].value_counts()
    top = d.sort_values(["srv_cli_ratio", "scenario_id"]).iloc[-1]
    return [
        (
            "Where does the handshake's CPU go: client or server?",
            ", ".join(f"{n} {r}" for r, n in regimes.items())
            + f"; most server-bound `{top['scenario_id']}`, server/client CPU × "
            f"{ci_of(top, 'srv_cli_ratio')}" + b.setting(d["scenario_id"]),
        )
    ]


@section(100, headline=headline)
def build(b: Builder) -> Section:
    a, s = b.a, Section("decomposition", "Client/server decomposition")
    s.blocks.append(b.ref_note())
    d = a.decomposition
    if d.empty:
        s.blocks.append("No successful scenario.")
        return s
    r = b.cfg.cpu_regimes
    s.blocks.append(
        "Per-connection CPU time of each process (client and server are separate "
        "processes), paired by connection. CPU over elapsed = mean CPU / mean end-to-end "
        "latency; ratios use the paired delta method "
        "(docs/methods/statistics.md#per-scenario-statistics, "
        "docs/methods/placement.md#classes-pairs-regimes). Regime: "
        f"client-skewed below {r['balanced_low']:g}, balanced up to "
        f"{r['balanced_high']:g}, overwhelmingly server-bound from {r['server_bound']:g} "
        f"with server CPU ≥ {SERVER_BOUND_ELAPSED_SHARE:g} of elapsed, else server-skewed "
        "(`[analysis.cpu_regimes]`)."
    )
    missing = d[d["n_server_missing"] > 0]
    if len(missing):
        s.blocks.append(
            "Handshakes without a server record (excluded from CPU "
            "statistics): "
            + ", ".join(
                f"`{x}` ({n})"
                for x, n in zip(missing["scenario_id"], missing["n_server_missing"], strict=True)
            )
            + "."
        )
    cols = [
        ("scenario", codes(d["scenario_id"])),
        ("mean ms", nums(d["mean_ms"])),
        ("client CPU ms", ci(d, "client_cpu_ms")),
        ("server CPU ms", ci(d, "server_cpu_ms")),
        ("client CPU/elapsed", ci(d, "client_over_elapsed")),
        ("server CPU/elapsed", ci(d, "server_over_elapsed")),
        ("server/client", ci(d, "srv_cli_ratio")),
        ("regime", list(d["cpu_regime"])),
        # Where the store counted instructions: the split and regime in instructions.
        *(
            [
                ("server/client instr", ci(d, "instr_srv_cli_ratio")),
                ("instr regime", list(d["instr_regime"])),
            ]
            if d["instr_srv_cli_ratio"].notna().any()
            else []
        ),
    ]
    if d["instr_srv_cli_ratio"].notna().any():
        s.blocks.append(
            "Server/client instr: the same split in instructions per handshake "
            f"(docs/methods/instructions.md#instructions-per-handshake), from {instr_sources(a)}."
        )
    s.blocks.append(
        b.table("decomposition", "Performance decomposition", "Paper Table 10.", d, cols)
    )
    instructions_table(b, s)
    dc = a.decomposition_classes if a.placement_study else pd.DataFrame()
    if len(dc):
        cols = [
            ("class", list(dc["class_name"])),
            ("n", ints(dc["n_scenarios"])),
            ("client CPU ms", ci(dc, "mean_client_cpu_ms")),
            ("server CPU ms", ci(dc, "mean_server_cpu_ms")),
            ("client CPU/elapsed", ci(dc, "mean_client_over_elapsed")),
            ("server CPU/elapsed", ci(dc, "mean_server_over_elapsed")),
            ("server/client", ci(dc, "mean_srv_cli_ratio")),
        ]
        s.blocks.append(
            b.table(
                "decomposition_classes",
                "Decomposition by class",
                "Means over each class's scenarios (paper §8.2-8.4), Monte-Carlo intervals.",
                dc,
                cols,
            )
        )
    for name, caption in (
        ("server_cpu", "Paper Figure 13."),
        ("client_server_cpu", "Paper Figure 14."),
        ("cpu_loglog", "Paper Figure 15; the dashed diagonal is parity."),
        ("cpu_over_elapsed", "Paper Figure 16, both sides."),
        ("srv_cli_ratio", "Paper Figure 17."),
    ):
        s.blocks.append(b.figure(name, caption))
    return s


def instructions_table(b: Builder, s: Section) -> None:
    """Each scenario's instructions per handshake and side, where the store has them: the
    mean with its interval, the spread per handshake (coefficient of variation: ~0 for a
    deterministic code path, ML-DSA signing's rejection sampling moves a server's) and the
    source."""
    summ = b.a.summary
    d = summ[summ["server_instr"].notna()] if "server_instr" in summ else summ.iloc[:0]
    if d.empty:
        return
    millions = d.assign(
        **{
            f"{side}_instr{part}": d[f"{side}_instr{part}"] / 1e6
            for side in ("server", "client")
            for part in ("", "_lo", "_hi")
        }
    )
    cols = [
        ("scenario", codes(d["scenario_id"])),
        ("n", ints(d["instr_n"])),
        ("server M instr", ci(millions, "server_instr")),
        ("server CV", percents(d["server_instr_cv"])),
        ("client M instr", ci(millions, "client_instr")),
        ("client CV", percents(d["client_instr_cv"])),
        ("source", list(d["instr_source"])),
    ]
    s.blocks.append(
        b.table(
            "instructions",
            "Instructions per handshake",
            "Millions of user-mode instructions per handshake and side, Student-t intervals; "
            "CV: the spread per handshake "
            "(docs/methods/instructions.md#instructions-per-handshake).",
            d,
            cols,
        )
    )
