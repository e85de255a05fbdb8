"""Capacity under load: each scenario's measured capacity beside the derived one, the load
steps (latency percentiles, achieved rate, failures, generator health), the hockey stick."""

from __future__ import annotations

import json

from chainlab.analysis.load_capacity import SERVER_BUSY
from chainlab.report import format as f
from chainlab.report.builder import Builder, ci, ci_of, codes, ints, nums, percents
from chainlab.report.document import Section
from chainlab.report.sections.registry import holds, section


def _failures(value) -> str:
    counts = json.loads(value) if isinstance(value, str) else (value or {})
    return ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "none"


# The offered share of capacity whose p99 the headline quotes (the usual "at 90 % load").
HEADLINE_FRACTION = 0.9
# The scenarios the answers name one by one; beyond this, the section's table has them.
HEADLINE_SCENARIOS = 4


def headline(b: Builder) -> list[tuple[str, str]]:
    """Per scenario: the sustained rate per server core (the heaviest step that kept up) and
    the overload throughput beside it, labelled, and p99 latency at the step offered closest
    to 0.9 of the rate its fractions are of (the searched sustainable rate, or the overload
    throughput without a search)."""
    steps, cap = b.a.load_steps, b.a.load_capacity
    if cap is None or cap.empty:
        return []
    out = []
    for r in cap.head(HEADLINE_SCENARIOS).to_dict("records"):
        if r["saturated"]:
            overload = f"{ci_of(r, 'capacity_per_core', 4)}/s per server core"
        else:
            # Not the server's cores: the figure is the set-up's, named as such.
            overload = f"{ci_of(r, 'capacity', 4)}/s, not the server's limit ({r['limited_by']})"
        if r.get("generator_limited"):
            overload += " (at least: the generator was at its limit too)"
        if r["sustained"] == r["sustained"]:
            text = (
                # The step kept up, so nothing limited it: its rate is the server's on its
                # cores, not a per-core limit.
                f"sustained {ci_of(r, 'sustained', 4)} handshakes/s on {r['server_cores']} "
                "server core(s) "
                f"(the heaviest step that kept up, {r['sustained_step']}"
                + (
                    f"; {r['not_sustained']:.4g}/s did not"
                    if r["not_sustained"] == r["not_sustained"]
                    else ""
                )
                + f"); overload throughput {overload}"
            )
        else:
            text = f"no step kept up; overload throughput {overload}"
        mine = steps[steps["scenario_id"] == r["scenario_id"]]
        own = mine[mine["fraction"].notna()]
        if len(own):
            near = own.iloc[(own["fraction"] - HEADLINE_FRACTION).abs().argsort().iloc[0]]
            # Fractions are of the rate the runner's search kept up with, where it searched
            # (chainlab.runner.load), else of the overload throughput.
            base = (
                "the sustainable rate searched"
                if (mine["kind"] == "search").any()
                else "the overload throughput"
            )
            text += (
                f"; p99 {ci_of(near, 'p99_ms')} ms at {near['fraction']:g} of {base} "
                f"({near['offered_rate']:.0f}/s offered)"
            )
        out.append((f"Capacity of `{r['scenario_id']}`", text))
    if len(cap) > HEADLINE_SCENARIOS:
        out.append(("Capacity of the other scenarios", f"{len(cap) - HEADLINE_SCENARIOS} more"))
    return out


@section(200, headline=headline, applies=holds("load_steps", "target_load_steps"))
def build(b: Builder) -> Section | None:
    a = b.a
    steps, cap = a.load_steps, a.load_capacity
    if steps is None or steps.empty:
        return None
    s = Section("load", "Capacity under load")
    s.blocks.append(
        "Open-loop load (the campaign's `[load]`): `chainlab-engine load` starts connections "
        "on a schedule fixed in advance and measures each one's latency from its intended "
        "start, so a server that falls behind shows in the latency instead of slowing the "
        "generator down (coordinated omission); an attempt due while every connection slot "
        "is open is recorded as `generator_saturated`, never skipped. The server runs on its "
        "own cores, the generator on others. **Capacity** is measured first: the achieved "
        "rate of successful handshakes as the offer grows past it "
        "(docs/methods/capacity.md#capacity-under-load), the **overload throughput**, which "
        "overstates what the server sustains (an overloaded event loop batches its work). "
        "**Sustained**: the heaviest step that kept up (achieved its offer within its interval "
        "with its p99 within its bound), and 'not sustained' the lightest heavier offer that "
        "did not: the sustainable rate lies between them; "
        "'server saturated' only where the server's cores were busy or its accept queue "
        "overflowed, and 'limited by' says what held each step back. "
        "**Derived** is 1 / server CPU per connection from the single-connection phase "
        "(the capacity-and-cost section), per core."
    )
    if len(cap):
        limited = cap[cap["generator_limited"]]
        if len(limited):
            s.blocks.append(
                "**Generator-limited:** the capacity step of "
                + ", ".join(f"`{x}`" for x in limited["scenario_id"])
                + " found the generator at its limit too, so the server's capacity is at "
                "least the figure shown, not exactly it."
            )
        cols = [
            ("scenario", codes(cap["scenario_id"])),
            ("server cores", ints(cap["server_cores"])),
            ("sustained per core", ci(cap, "sustained_per_core")),
            ("not sustained per core", nums(cap["not_sustained_per_core"], 4)),
            ("overload throughput /s", ci(cap, "capacity")),
            ("overload per core", ci(cap, "capacity_per_core")),
            ("derived per core", ci(cap, "derived_per_core")),
            ("derived, handshake span", nums(cap["derived_handshake_only"], 4)),
            ("measured / derived", ci(cap, "measured_over_derived")),
            ("server busy", percents(cap["server_utilisation"])),
            ("host drift", [f.pct(x * 100) if x == x else "n/a" for x in cap["host_drift"]]),
            ("server saturated", [f.yes_no(x) for x in cap["saturated"]]),
            ("limited by", list(cap["limited_by"])),
        ]  # fmt: skip
        s.blocks.append(
            b.table(
                "load_capacity",
                "Measured versus derived capacity",
                f"Intervals at {b.level}: measured, the exact Poisson interval of the count; "
                "derived, the log-scale interval of the mean CPU; their ratio, the delta "
                "method. A ratio above 1 means a loaded server spends less CPU per connection "
                "than one connection at a time implies. 'host drift': how far the host's "
                "speed moved over the scenario (the host-speed section), in which the two "
                "were measured minutes apart.",
                cap,
                cols,
            )
        )
        price = b.cfg.price_per_vcpu_hour
        cols = [
            ("scenario", codes(cap["scenario_id"])),
            ("handshakes/vCPU-h (measured)", nums(cap["handshakes_per_vcpu_hour"], 4)),
            ("cost per million", nums(cap["cost_per_million"], 4)),
            *[
                (f"monthly: {name}", nums(cap[f"monthly_cost_{name}"], 4))
                for name in b.cfg.service_classes
            ],
        ]
        s.blocks.append(
            b.table(
                "load_tables_11_13",
                "The paper's Tables 11-13 from measured capacity",
                f"Measured capacity per core × 3600 per vCPU-hour; cost at {price:g} per "
                "vCPU-hour; monthly cost of each service class's volume.",
                cap,
                cols,
            )
        )
    cols = [
        ("scenario", codes(steps["scenario_id"])),
        ("step", [f"{k} {i}" for k, i in zip(steps["kind"], steps["step"], strict=True)]),
        ("offered /s", nums(steps["offered_rate"], 4)),
        ("achieved /s", ci(steps, "achieved_rate")),
        ("p50 ms", ci(steps, "p50_ms")),
        ("p90 ms", ci(steps, "p90_ms")),
        ("p99 ms", ci(steps, "p99_ms")),
        ("p99.9 ms", ci(steps, "p999_ms")),
        ("failures", [_failures(x) for x in steps["failures"]]),
        ("server busy", percents(steps["server_utilisation"])),
        ("server CPU outside connections", percents(steps["cpu_outside_connections"])),
        ("server cores busy", percents(steps["server_cores_busy"])),
        ("listen overflows", [
            f.integer(x) if x == x else "n/a" for x in steps["listen_overflows"]
        ]),
        *([("link timer late µs", nums(steps["link_timer_late_us_mean"], 3))]
          if steps["link_timer_late_us_mean"].notna().any() else []),
        ("generator busy", percents(steps["generator_utilisation"])),
        ("limited by", list(steps["limited_by"])),
    ]  # fmt: skip
    s.blocks.append(
        b.table(
            "load_steps",
            "Load steps",
            "Latency from each attempt's intended start, successful attempts only "
            "(nearest-rank percentiles, order-statistic intervals; n/a where the step is too "
            "small for a bound); failures by category, generator_saturated included; 'server "
            "busy': the connections' CPU over the step's wall time per core; 'cores busy': "
            "the server's cores not idle (kernel network work included, /proc/stat); listen "
            "overflows: the accept queue was full (TcpExt, loopback only); 'limited by': "
            "what held the step back, the server only with its cores at least "
            f"{SERVER_BUSY:.0%} busy or its accept queue overflowing.",
            steps,
            cols,
        )
    )
    outside = steps["cpu_outside_connections"].dropna()
    if len(outside):
        s.blocks.append(
            "**Server CPU outside connections**: the server process's CPU over each step "
            "(/proc) that no connection's record holds (accept loop, records writer, timers): "
            f"median {f.num(outside.median() * 100)} % of it over {len(outside)} step(s) "
            f"(from {f.num(outside.min() * 100)} to {f.num(outside.max() * 100)} %), reported "
            "so that per-connection CPU is read against all the server spent."
        )
    for name, caption in (
        ("load_latency", "Each scenario's steps (capacity measurement left out)."),
        ("load_throughput", "Points on the dashed line kept up with the offered load."),
    ):
        item = b.figure(name, caption)
        if item is not None:
            s.blocks.append(item)
    return s
