"""Server CPU accounted: how much of the server process's CPU its connections' records
account for in each scenario run, and where the rest went."""

from __future__ import annotations

from chainlab.analysis.server_cpu import ACCOUNTED
from chainlab.report.builder import Builder, codes, nums, percents
from chainlab.report.document import Section
from chainlab.report.sections.registry import section


def headline(b: Builder) -> list[tuple[str, str]]:
    c = b.a.server_cpu
    if c is None or c.empty:
        return []
    low = c.loc[c["conn_share"].idxmin()]
    held = int(c["accounted"].sum())
    return [
        (
            "Do the connections' records account for the server's CPU?",
            ("yes" if held == len(c) else "no")
            + f": at least {ACCOUNTED:.0%} of the server process's CPU in {held} of "
            f"{len(c)} scenario run(s); lowest {low['conn_share']:.1%} "
            f"(`{low['scenario_id']}`)",
        )
    ]


@section(35, headline=headline)
def build(b: Builder) -> Section | None:
    c = b.a.server_cpu
    if c is None or c.empty:
        return None
    s = Section("server_cpu", "Server CPU accounted")
    s.blocks.append(
        "The server process's CPU while it served each scenario (its threads' run time from "
        "the kernel, ready line to stop, over every visit) against its connections' "
        "whole-connection CPU summed over every record it wrote (warm-ups, samples, load "
        "steps): what the per-connection figures leave out, itemized from the server's own "
        "thread accounts where it writes them (waiting for connections; the serving "
        "threads' own remainder; other threads: the records writer, the main thread, a "
        "runtime's helpers). Connections whose CPU the engine leaves null (another was in "
        "flight) count in the rest (docs/methods/capacity.md#server-cpu-accounted)."
    )
    cols = [
        ("scenario", codes(c["scenario_id"])),
        ("server process ms", nums(c["process_ms"], 4)),
        ("connections", percents(c["conn_share"])),
        ("waiting", percents(c["wait_share"])),
        ("serving threads' rest", percents(c["threads_rest_share"])),
        ("other threads", percents(c["other_share"])),
    ]
    s.blocks.append(
        b.table(
            "server_cpu",
            "Server CPU accounted",
            "Shares of the server process's CPU while it served; n/a: the server writes no "
            "thread accounts (the OpenSSL engine's QUIC server).",
            c,
            cols,
        )
    )
    return s
