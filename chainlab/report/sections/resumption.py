"""Resumption mixes: cost per connection against the share of connections that resume."""

from __future__ import annotations

from chainlab.report import format as f
from chainlab.report.builder import Builder, ci, ci_of, codes
from chainlab.report.document import Section
from chainlab.report.sections.registry import section, uses

METRIC_TITLES = {
    "server_cpu": "Server CPU per connection (ms)",
    "client_cpu": "Client CPU per connection (ms)",
    "latency": "Latency per connection (ms)",
    "capacity": "Capacity (handshakes per core-second)",
}


def headline(b: Builder) -> list[tuple[str, str]]:
    r = b.a.resumption
    if r.empty:
        return []
    mixes = r[(r["ratio"] > 0) & (r["ratio"] < 1)]
    off = int(mixes["server_cpu_off_line"].sum())
    saving = r.sort_values(["ratio", "scenario_id"])
    full, resumed = saving.iloc[0], saving.iloc[-1]
    return [
        (
            "Does a resumption mix cost what its share of resumed connections predicts?",
            f"server CPU off the line (1 − r)·full + r·resumed in {off} of {len(mixes)} "
            f"mix(es); server CPU {ci_of(full, 'server_cpu', 4)} ms at r = "
            f"{full['ratio']:g}, {ci_of(resumed, 'server_cpu', 4)} ms at r = "
            f"{resumed['ratio']:g}" + b.setting(r["scenario_id"]),
        )
    ]


@section(130, headline=headline, applies=uses("handshake_mode"))
def build(b: Builder) -> Section | None:
    r = b.a.resumption
    if r.empty:
        return None
    s = Section("resumption", "Resumption mix")
    off = {m: int(r[f"{m}_off_line"].sum()) for m in METRIC_TITLES}
    s.blocks.append(
        "Each scenario resumes a share r of its connections (a seeded draw per connection; "
        "a full handshake refreshes the ticket). Measured means with their "
        f"{b.level} intervals beside the line the same configuration's full (r = 0) and "
        "resumed (r = 1) scenarios give, (1 − r)·full + r·resumed, with its interval; "
        "'off the line' where the difference exceeds its interval "
        "(docs/methods/levers.md#resumption-mixes). "
        "Off the line: "
        + ", ".join(f"{METRIC_TITLES[m].split(' (')[0].lower()} {n}" for m, n in off.items())
        + f" of {int(((r['ratio'] > 0) & (r['ratio'] < 1)).sum())} mixes."
    )
    cols = [
        ("scenario", codes(r["scenario_id"])),
        ("r", [f"{x:g}" for x in r["ratio"]]),
        ("resumed share", ci(r, "resumed_share", 3)),
    ]
    for m, title in METRIC_TITLES.items():
        short = title.split(" (")[0]
        cols += [
            (f"{short}", ci(r, m, 4)),
            (f"{short}: line", ci(r, f"{m}_line", 4)),
            (
                "off line",
                [
                    f.yes_no(x) if 0 < y < 1 else ""
                    for x, y in zip(r[f"{m}_off_line"], r["ratio"], strict=True)
                ],
            ),
        ]
    s.blocks.append(
        b.table(
            "resumption",
            "Cost per connection against the resumption ratio",
            "Rows by configuration, r ascending; r = 0 and r = 1 are the line's ends.",
            r,
            cols,
        )
    )
    s.blocks.append(
        b.figure(
            "resumption_mix",
            f"Points: measured means ({b.level} intervals); lines: (1 − r)·full + r·resumed "
            "of each configuration.",
        )
    )
    return s
