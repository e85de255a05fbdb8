"""Staged rollout: each rollout group's figures as its share of post-quantum clients grows,
every figure split by kind of client, and the guide's rollback rule evaluated on the
measured p99 (chainlab.analysis.rollout)."""

from __future__ import annotations

from collections.abc import Callable

from chainlab.analysis import rollout
from chainlab.report import format as f
from chainlab.report.builder import Builder, ci, codes, ints, nums
from chainlab.report.document import Section
from chainlab.report.sections.registry import section, uses


def _share(x) -> str:
    return f"{x:.0%}" if x == x else "none"


def headline(b: Builder) -> list[tuple[str, str]]:
    first = rollout.first_crossing(b.a.rollout_rule)
    if first.empty:
        return []
    factor, _, _ = rollout.rollback_factor()
    return [
        (
            f"Rollback rule (p99 > {factor:g}× all-classical) for {r['group']}, "
            f"{r['network']}, {rollout.load_label(r['load'])}",
            crossing_answer(r, lambda x: f"PQ share {_share(x)}", "baseline"),
        )
        for r in first.to_dict("records")
    ]


def crossing_answer(r: dict, name: Callable[[float], str], against: str) -> str:
    """Where the rule starts to roll back (a row of chainlab.analysis.rollout.crossings),
    `name` naming a value: 'from <value> (largest p99 × <against> r)', or at none measured,
    and from where it is undecided."""
    at, maybe = r["rolls_back_at"], r["may_roll_back_at"]
    text = f"from {name(at)}" if at == at else f"at no {name(r['highest'])} or below"
    text += f" (largest p99 × {against} {f.num(r['max_ratio'], 3)})"
    if maybe == maybe and maybe != at:
        text += f"; undecided from {name(maybe)}"
    return text


@section(175, headline=headline, applies=uses("population", "second_chain"))
def build(b: Builder) -> Section | None:
    shares, kinds = b.a.rollout_shares, b.a.rollout_kinds
    load_kinds, rule = b.a.rollout_load_kinds, b.a.rollout_rule
    if shares.empty and kinds.empty:
        return None
    factor, quote, line = rollout.rollback_factor()
    s = Section("rollout", "Staged rollout")
    s.blocks.append(
        "A dual-chain server holds a classical and a post-quantum chain and sends each client "
        "the one its signature schemes ask for; each attempt of a scenario's client draws a "
        "kind of client (its groups and schemes) with the population's shares, from a seed. "
        "A rollout group is the scenarios of one server on one path that differ only in the "
        "population; PQ share: the share of kinds offering a post-quantum group or scheme; "
        "sent the PQ chain: the share of its successful attempts the server sent its "
        "post-quantum chain, from the records (whose order picks the chain: chain_order). "
        "p50 / p99: one connection at a time (handshake latency), and under open-loop load at "
        "0.5 and 0.9 of each scenario's own sustained rate (the heaviest searched offer it "
        "kept up with: docs/methods/capacity.md; latency from the intended start). Sustained "
        "/s/core is that rate per server core; the overload throughput (what the capacity "
        "steps achieved past it) stays beside it. A kind no chain of the server serves is "
        "refused (no_shared_sigalg), counted below and never retried."
    )
    if not shares.empty:
        cols = [
            ("group", list(shares["group"])),
            ("network", list(shares["network"])),
            ("PQ share", [_share(x) for x in shares["pq_share"]]),
            ("sent the PQ chain", [_share(x) for x in shares["pq_chain_share"]]),
            ("scenario", codes(shares["scenario_id"])),
            ("sustained /s/core", ci(shares, "sustained_per_core", 4)),
            ("overload throughput /s/core", ci(shares, "capacity_per_core", 4)),
            ("overload throughput set by", list(shares["capacity_limited_by"])),
        ]
        for load in rollout.loads():
            label = "single" if load == rollout.SINGLE else f"@{load}"
            cols += [
                (f"p50 ms {label}", ci(shares, f"p50_ms_{load}", 3)),
                (f"p99 ms {label}", ci(shares, f"p99_ms_{load}", 3)),
            ]
        cols += [
            ("read B", ints(shares["bytes_read"])),
            ("written B", ints(shares["bytes_written"])),
        ]
        s.blocks.append(
            b.table(
                "rollout_shares",
                "Each rollout group as the PQ share grows",
                f"Capacity: measured per server core under load. Percentiles with {b.level} "
                "distribution-free intervals (a p99 of a few hundred attempts has no upper "
                "end: n/a). Bytes: the client's, means over successful handshakes of all "
                "kinds.",
                shares.drop(columns=["group_key"]),
                cols,
            )
        )
    if not rule.empty:
        s.blocks.append(
            f"The guide's rollback rule (line {line}: “{quote}”) evaluated on the measured "
            f"p99: each scenario's p99 over its group's all-classical (PQ share 0) p99 at the "
            f"same load, with the interval from both p99 intervals. 'rolls back': the "
            f"interval lies above {factor:g}; 'holds': below; 'undecided': across it or "
            "without an end. The guide's rule also asks for 5 minutes over the threshold; "
            "each load step here lasts as long as the campaign's step_s, so the verdict is "
            "the rule's threshold on that window."
        )
        cols = [
            ("group", list(rule["group"])),
            ("network", list(rule["network"])),
            ("load", [rollout.load_label(x) for x in rule["load"]]),
            ("PQ share", [_share(x) for x in rule["pq_share"]]),
            ("p99 ms", nums(rule["p99_ms"], 3)),
            ("baseline p99 ms", nums(rule["baseline_p99_ms"], 3)),
            ("p99 × baseline", ci(rule, "ratio", 3)),
            ("verdict", list(rule["verdict"])),
        ]
        s.blocks.append(
            b.table(
                "rollout_rule", "The rollback rule per PQ share, load and path", "", rule, cols
            )  # fmt: skip
        )
    if not kinds.empty:
        cols = [
            ("scenario", codes(kinds["scenario_id"])),
            ("kind", list(kinds["kind"])),
            ("attempts", ints(kinds["n"])),
            ("failed", [x or "none" for x in kinds["failures"]]),
            ("chain sent", list(kinds["chain_sent"])),
            ("latency ms", ci(kinds, "latency_ms", 3)),
            ("p99 ms", ci(kinds, "p99_ms", 3)),
            ("server CPU ms", ci(kinds, "server_cpu_ms", 3)),
            ("client CPU ms", ci(kinds, "client_cpu_ms", 3)),
            ("read B", nums(kinds["bytes_read"], 5)),
            ("written B", nums(kinds["bytes_written"], 5)),
        ]
        s.blocks.append(
            b.table(
                "rollout_kinds",
                "Every figure by kind of client, one connection at a time",
                f"Means per handshake with {b.level} intervals, per kind and for all kinds "
                "('all'). Failed: by the server's category where it saw the attempt. Chain "
                "sent: 0 the scenario's hierarchy, 1 its second chain.",
                kinds,
                cols,
            )
        )
    if not load_kinds.empty:
        cols = [
            ("scenario", codes(load_kinds["scenario_id"])),
            ("step", ints(load_kinds["step"])),
            (
                "offered",
                ["capacity" if x != x else f"{x:g} of capacity" for x in load_kinds["fraction"]],
            ),  # fmt: skip
            ("kind", list(load_kinds["kind"])),
            ("attempts", ints(load_kinds["n"])),
            ("failed", ints(load_kinds["n_failed"])),
            ("p50 ms", ci(load_kinds, "p50_ms", 3)),
            ("p99 ms", ci(load_kinds, "p99_ms", 3)),
        ]
        s.blocks.append(
            b.table(
                "rollout_load_kinds",
                "Latency under load by kind of client",
                f"Per load step, latency from the intended start with {b.level} intervals. "
                "'never started': attempts the generator could not start on time "
                "(generator_saturated), which drew no kind.",
                load_kinds,
                cols,
            )
        )
    return s
