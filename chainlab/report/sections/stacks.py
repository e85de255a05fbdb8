"""TLS stacks: each scenario on OpenSSL 4.0 or rustls beside the same scenario on OpenSSL
3.5, and whether the paper's structural findings hold on each stack."""

from __future__ import annotations

import math

from chainlab.analysis.stacks import REFERENCE_STACK
from chainlab.report.builder import (
    Builder,
    ci,
    ci_of,
    codes,
    instr_columns,
    ints,
    median_of,
    median_per_group,
    nums,
)
from chainlab.report.document import Section
from chainlab.report.sections.registry import section, uses


def headline(b: Builder) -> list[tuple[str, str]]:
    """Per stack: its server CPU and latency against the reference stack (median pair)."""
    return median_per_group(
        b.a.stacks,
        "stack",
        "server_cpu_ratio",
        lambda stack, r, n: (
            f"{stack} against {REFERENCE_STACK}",
            f"server CPU × {ci_of(r, 'server_cpu_ratio')}, latency × "
            f"{ci_of(r, 'latency_ratio')} for `{r['scenario_id']}` ({median_of(n)} by server CPU)",
        ),
    )


@section(170, headline=headline, applies=uses("stack"))
def build(b: Builder) -> Section | None:
    p, order, split = b.a.stacks, b.a.stack_orderings, b.a.stack_cost_split
    if p.empty and order.empty:
        return None
    s = Section("stacks", "TLS stacks")
    s.blocks.append(
        f"Each scenario measured on another TLS implementation against the same scenario on "
        f"{REFERENCE_STACK} (both sides), from one PKI: the certificates are byte-identical "
        "whichever stack serves or verifies them. A pair `client → server` ran the two sides "
        "on different stacks. Ratios are of means, other stack over the reference, with "
        f"{b.level} intervals (docs/methods/stacks.md#tls-stacks, docs/stacks.md)."
    )
    if not p.empty:
        cols = [
            ("scenario", codes(p["scenario_id"])),
            ("stack", list(p["stack"])),
            ("ms", nums(p["mean_ms"], 3)),
            (f"{REFERENCE_STACK} ms", nums(p["twin_mean_ms"], 3)),
            ("latency ×", ci(p, "latency_ratio", 3)),
            ("server CPU ms", nums(p["server_cpu_ms"], 3)),
            ("server CPU ×", ci(p, "server_cpu_ratio", 3)),
            ("client CPU ms", nums(p["client_cpu_ms"], 3)),
            ("client CPU ×", ci(p, "client_cpu_ratio", 3)),
            *instr_columns(p),
            ("read B", ints(p["bytes_read"])),
            (f"{REFERENCE_STACK} read B", ints(p["twin_bytes_read"])),
            ("written B", ints(p["bytes_written"])),
            (f"{REFERENCE_STACK} written B", ints(p["twin_bytes_written"])),
        ]
        s.blocks.append(
            b.table(
                "stacks",
                f"Each stack against {REFERENCE_STACK}, per scenario",
                "Means per handshake; ×: this stack over the reference, with "
                f"{b.level} intervals. Bytes: the client's, TLS records at the socket over "
                "the handshake.",
                p,
                cols,
            )
        )
    if not order.empty:
        held = order[order["holds"]]
        s.blocks.append(
            "Ordering of placements: every pair of hierarchies the reference stack orders "
            "with confidence (in the same context: group, network, served chain...) checked "
            f"on each stack. The ordering holds in {len(held)} of {len(order)} stack and "
            "measure combinations (at least one pair agrees, none contradicts)."
        )
        s.blocks.append(
            b.table(
                "stack_orderings",
                "Does the reference's ordering of placements hold on each stack?",
                "Ordered pairs: pairs of hierarchies whose ratio of means on the reference "
                "stack excludes 1; agree / contradict: the same / the opposite order with "
                "confidence on this stack; undecided: its interval includes 1. Kendall's tau "
                "over the means of every hierarchy both stacks measured.",
                order,
                [
                    ("stack", list(order["stack"])),
                    ("measure", list(order["measure"])),
                    ("hierarchies", ints(order["hierarchies"])),
                    ("ordered pairs", ints(order["ordered_pairs"])),
                    ("agree", ints(order["agree"])),
                    ("contradict", ints(order["contradict"])),
                    ("undecided", ints(order["undecided"])),
                    ("Kendall's tau", nums(order["kendall_tau"], 2)),
                    ("holds", ["yes" if h else "no" for h in order["holds"]]),
                ],
            )
        )
    if not split.empty:
        s.blocks.append(
            b.table(
                "stack_cost_split",
                "Where the cost sits: server CPU over client CPU, per stack",
                f"Server over client CPU per handshake, paired over the same handshakes, with "
                f"{b.level} intervals; same side: the side that costs more is the one it is "
                f"on {REFERENCE_STACK} (blank: an interval includes 1, or no reference twin).",
                split,
                [
                    ("scenario", codes(split["scenario_id"])),
                    ("stack", list(split["stack"])),
                    ("server CPU ms", nums(split["server_cpu_ms"], 3)),
                    ("client CPU ms", nums(split["client_cpu_ms"], 3)),
                    ("server / client", ci(split, "split", 2)),
                    (f"{REFERENCE_STACK} server / client", ci(split, "reference_split", 2)),
                    ("same side", [_yes_no(v) for v in split["same_side"]]),
                ],
            )
        )
    return s


def _yes_no(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return "yes" if v else "no"
