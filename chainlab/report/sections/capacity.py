"""Capacity and cost, derived from server CPU per handshake."""

from __future__ import annotations

from chainlab.report.builder import Builder, ci, ci_of, codes, ints, nums
from chainlab.report.document import Section
from chainlab.report.sections.registry import placement_study, section


def headline(b: Builder) -> list[tuple[str, str]]:
    c = b.a.capacity
    if c.empty:
        return []
    order = c.sort_values(["handshakes_per_core_s", "scenario_id"])
    low, high = order.iloc[0], order.iloc[-1]
    rate = lambda r: f"{ci_of(r, 'handshakes_per_core_s', 4)} (`{r['scenario_id']}`)"  # noqa: E731
    answer = rate(high) if len(c) == 1 else f"from {rate(high)} down to {rate(low)}"
    if low["infra_multiplier"] == low["infra_multiplier"]:
        answer += f"; infrastructure × up to {ci_of(low, 'infra_multiplier')}"
    return [
        (
            "Capacity from CPU: handshakes per core-second",
            answer
            + " (an interpretation of server CPU, not a throughput)"
            + b.setting(c["scenario_id"]),
        )
    ]


@section(190, headline=headline, applies=placement_study)
def build(b: Builder) -> Section:
    a, s = b.a, Section("capacity", "Capacity and cost")
    s.blocks.append(b.ref_note())
    c = a.capacity
    if c.empty:
        s.blocks.append("No successful scenario.")
        return s
    cfg = b.cfg
    s.blocks.append(
        "An interpretation of measured server CPU per connection, not a measurement of "
        "throughput (that is the capacity-under-load section's, where a campaign has "
        "[load]): one fully busy vCPU completes 1e9 / (server CPU ns) handshakes per "
        "second; handshakes are assumed CPU-bound and perfectly parallel "
        "(docs/methods/capacity.md#capacity-from-cpu). The CPU is the server's whole "
        "connection, accept to close ('basis: connection'), where the store has it, else its "
        "handshake span; the handshake-only "
        f"figure is shown beside it. Price: {cfg.price_per_vcpu_hour:g} cost units per vCPU-hour "
        f"({cfg.sources.get('price_per_vcpu_hour')}; the default is the paper's "
        "illustrative price). Service classes (handshakes per month): "
        + ", ".join(f"{k} {v:,.0f}" for k, v in cfg.service_classes.items())
        + f" ({cfg.sources.get('service_classes')})."
    )
    cols = [
        ("scenario", codes(c["scenario_id"])),
        ("class", [b.cls_name(x) for x in c["placement_class"]]),
        ("server CPU s", nums(c["server_cpu_s"], 4)),
        ("basis", list(c["cpu_basis"])),
        ("handshakes/core-s", ci(c, "handshakes_per_core_s")),
        ("handshake span only", nums(c["handshakes_per_core_s_handshake_only"], 4)),
        ("handshakes/vCPU-h", ci(c, "handshakes_per_vcpu_hour")),
        ("retained capacity", ci(c, "retained_capacity")),
        ("capacity loss %", nums(c["capacity_loss_pct"], 4)),
        ("infrastructure ×", ci(c, "infra_multiplier")),
    ]
    s.blocks.append(b.table("capacity", "Infrastructure capacity", "Paper Table 11.", c, cols))
    cols = [
        ("scenario", codes(c["scenario_id"])),
        ("CPU-hours per million", nums(c["cpu_hours_per_million"], 4)),
        ("cost per million", ci(c, "cost_per_million")),
        ("extra cost per million", ci(c, "extra_cost_per_million")),
        ("cost ×", ci(c, "infra_multiplier")),
    ]
    s.blocks.append(
        b.table(
            "cost",
            "Cost per million handshakes",
            "Paper Table 12; extra cost = scenario − baseline (Monte-Carlo interval).",
            c,
            cols,
        )
    )
    sc = a.service_classes
    if len(sc):
        cols = [
            ("service class", list(sc["service_class"])),
            ("handshakes/month", ints(sc["handshakes_per_month"])),
            ("class", [b.cls_name(x) for x in sc["class"]]),
            ("n", ints(sc["n_scenarios"])),
            ("mean monthly cost", ci(sc, "mean_monthly_cost")),
            ("median monthly cost", ci(sc, "median_monthly_cost")),
            ("mean extra monthly", ci(sc, "mean_extra_monthly_cost")),
            ("median extra monthly", ci(sc, "median_extra_monthly_cost")),
        ]
        s.blocks.append(
            b.table(
                "service_classes",
                "Service-class translation",
                "Paper Table 13 (monthly = the class's volume per "
                "month). Per-scenario values: "
                "tables/service_classes_per_scenario.csv.",
                sc,
                cols,
            )
        )
    b.csv_only("service_classes_per_scenario", a.service_scenarios)
    for name, caption in (
        ("infra_multiplier", "Paper Figure 18."),
        ("cost_per_million", "Paper Figure 19, with the absolute cost added."),
        ("service_classes", "Paper Figure 20: median over each placement class's scenarios."),
    ):
        s.blocks.append(b.figure(name, caption))
    return s
