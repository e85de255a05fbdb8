"""Interop: every client stack against every server stack, a matrix per chain, each cell's
outcome beside what the stacks' capability tables predict."""

from __future__ import annotations

from chainlab.axes.stack import STACKS
from chainlab.report.builder import Builder, codes, ints
from chainlab.report.document import Section
from chainlab.report.sections.registry import section, uses


def headline(b: Builder) -> list[tuple[str, str]]:
    c = b.a.interop
    if c.empty:
        return []
    ok = int((c["outcome"] == "ok").sum())
    failed = c[c["outcome"] != "ok"]
    unexpected = int((~c["as_predicted"]).sum())
    pairs = c[["client_stack", "server_stack"]].drop_duplicates().shape[0]
    by = failed["outcome"].value_counts()
    kinds = ", ".join(f"{n} {cat}" for cat, n in by.items()) or "none"
    return [
        (
            "Interop: which stack pairs complete a handshake",
            f"{ok} of {len(c)} cells ({pairs} client → server stack pairs, "
            f"{c['context'].nunique()} chains) complete every handshake; failing: {kinds}; "
            f"{unexpected} cell(s) differ from what the stacks' capability tables predict",
        )
    ]


@section(175, headline=headline, applies=uses("stack"))
def build(b: Builder) -> Section | None:
    c = b.a.interop
    if c.empty:
        return None
    s = Section("interop", "Interop")
    s.blocks.append(
        "Every client stack against every server stack on the same chains: a cell is one "
        "scenario, `ok` when every measured handshake completed, else the failure category "
        "of most of its failed handshakes (completed / failed in brackets). Nothing is "
        "retried. A cell marked `!` differs from what the stacks' capability tables predict "
        "(a client that cannot verify an algorithm of the chain fails verification; "
        "docs/methods/stacks.md#interop, docs/stacks.md)."
    )
    # Stacks in the order campaigns name them (the reference first).
    clients = [st for st in STACKS if st in set(c["client_stack"])]
    servers = [st for st in STACKS if st in set(c["server_stack"])]
    for i, (context, g) in enumerate(c.groupby("context", sort=False)):
        cell = {(r["client_stack"], r["server_stack"]): _cell(r) for r in g.to_dict("records")}
        cols = [("client ↓ server →", clients)]
        for srv in servers:
            cols.append((srv, [cell.get((cli, srv), "–") for cli in clients]))
        s.blocks.append(
            b.table(
                f"interop_{i + 1}",
                f"Interop: {context}",
                "Rows: the client's stack; columns: the server's.",
                g,
                cols,
            )
        )
    failed = c[c["outcome"] != "ok"]
    if not failed.empty:
        s.blocks.append(
            b.table(
                "interop_failures",
                "Interop: the failing cells",
                "Each failing cell with its category, counts, prediction and one failure's "
                "detail as the client recorded it.",
                failed,
                [
                    ("scenario", codes(failed["scenario_id"])),
                    ("category", list(failed["outcome"])),
                    ("failed", ints(failed["n_failed"])),
                    ("completed", ints(failed["n_ok"])),
                    ("predicted", list(failed["predicted"])),
                    ("detail", [str(d or "") for d in failed["example_detail"]]),
                ],
            )
        )
    return s


def _cell(r: dict) -> str:
    mark = "" if r["as_predicted"] else " !"
    return f"{r['outcome']} ({r['n_ok']}/{r['n_failed']}){mark}"
